// The settings of a fetch over HTTP(S) by the system git: credentials as an extra header, a
// private CA, the idle timeout, and, for a source whose addresses are checked, the address
// connected to pinned to the one checked. They reach git as configuration in its environment
// (see transport.ts), never on its command line, where any local user could read a password.

import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { join } from "node:path";
import * as tls from "node:tls";

export interface HttpSettings {
  /** The Authorization header to send, when credentials are configured. */
  authorization?: string | undefined;
  /** PEM bundle of extra certificate authorities. */
  caFile?: string | undefined;
  /** A transfer slower than one byte per second for this long fails (a server gone silent). */
  idleTimeoutMs: number;
  /**
   * The addresses to connect to, already checked by the caller (the registry's private-address
   * guard): curl connects to one of them instead of resolving the name again, and redirects are
   * not followed, so neither a changed DNS answer nor a redirect can lead elsewhere.
   */
  pinned?: { host: string; port: number; addresses: string[] } | undefined;
}

/** Where Debian's and Alpine's curl find the system's certificate authorities. */
const SYSTEM_BUNDLES = ["/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem"];

/**
 * A bundle of the system's authorities plus `extraPem`, written under `dir`: `http.sslCAInfo`
 * replaces curl's trust store, and a private CA is trusted besides the public ones, not instead.
 * Without a system bundle, Node's own root certificates stand in for it.
 */
export function trustBundle(extraPem: string, dir: string): string {
  const system = SYSTEM_BUNDLES.find((f) => fs.existsSync(f));
  // Polls repeat the same CA: the bundle is rebuilt only when the system's or ours changes.
  const stat = system !== undefined ? fs.statSync(system) : undefined;
  const key = `${system ?? ""}:${stat?.mtimeMs ?? 0}:${stat?.size ?? 0}:${dir}:${extraPem}`;
  const known = bundles.get(key);
  if (known !== undefined && fs.existsSync(known)) return known;
  const base =
    system !== undefined ? fs.readFileSync(system, "utf8") : tls.rootCertificates.join("\n");
  const pem = `${base.trimEnd()}\n${extraPem.trimEnd()}\n`;
  const file = join(dir, `ca-${createHash("sha256").update(pem).digest("hex").slice(0, 16)}.pem`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, pem, { mode: 0o600 });
    fs.renameSync(tmp, file);
  }
  bundles.set(key, file);
  return file;
}

/** Bundles written by this process, by what they were built from. */
const bundles = new Map<string, string>();

/** `git -c` style settings for one HTTP(S) operation. */
export function httpConfig(settings: HttpSettings): [string, string][] {
  const config: [string, string][] = [
    ["http.lowSpeedLimit", "1"],
    ["http.lowSpeedTime", String(Math.max(1, Math.ceil(settings.idleTimeoutMs / 1000)))],
  ];
  if (settings.authorization !== undefined) {
    config.push(["http.extraHeader", `Authorization: ${settings.authorization}`]);
  }
  if (settings.caFile !== undefined) config.push(["http.sslCAInfo", settings.caFile]);
  const pin = settings.pinned;
  if (pin !== undefined) {
    const addresses = pin.addresses.map((a) => (a.includes(":") ? `[${a}]` : a)).join(",");
    config.push(["http.curloptResolve", `${pin.host}:${pin.port}:${addresses}`]);
    config.push(["http.followRedirects", "false"]);
  }
  return config;
}

/** The port a URL connects to. */
export function urlPort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

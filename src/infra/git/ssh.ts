// The settings of a fetch over SSH by the system git and ssh: an SSH client of our own would
// mean a second implementation of host-key checking, key formats and ciphers to keep secure.
// ssh runs with a deploy key and a known_hosts file given explicitly (GIT_SSH_COMMAND), host
// keys checked strictly, no configuration read and no prompt.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { join } from "node:path";
import { McpfleetError } from "../../errors.js";

/** `ssh://[user@]host[:port]/path` (also `git+ssh://`) or scp-like `[user@]host:path`. */
export function isSshUrl(url: string): boolean {
  if (/^(git\+)?ssh:\/\//.test(url)) return true;
  // scp-like: no scheme, and a colon before any slash (`C:\` and `./a:b` are local paths).
  return /^(?:[^@/:\s]+@)?[^@/:\s]{2,}:(?!\/\/)/.test(url) && !url.includes("://");
}

export interface SshOptions {
  /** Private key of the deploy key (read on every operation, so rotation needs no restart). */
  keyFile?: string;
  /** known_hosts holding the server's host key: nothing else is trusted. */
  knownHostsFile: string;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** GIT_SSH_COMMAND and its companions: this key, these host keys, no configuration, no prompt. */
export function sshEnv(opts: SshOptions, cacheDir: string): Record<string, string> {
  const parts = [
    "ssh",
    "-F",
    "/dev/null",
    "-o",
    "BatchMode=yes",
    "-o",
    "StrictHostKeyChecking=yes",
    "-o",
    `UserKnownHostsFile=${shellQuote(opts.knownHostsFile)}`,
    "-o",
    "GlobalKnownHostsFile=/dev/null",
    "-o",
    "ConnectTimeout=30",
    "-o",
    "ServerAliveInterval=15",
  ];
  if (opts.keyFile !== undefined) {
    parts.push("-o", "IdentitiesOnly=yes", "-i", shellQuote(privateKey(opts.keyFile, cacheDir)));
  }
  return { GIT_SSH_COMMAND: parts.join(" "), GIT_SSH_VARIANT: "ssh" };
}

/**
 * A copy of the key only this user can read: ssh refuses a key file others can read, and a
 * mounted Kubernetes Secret usually is one (mode 0644).
 */
function privateKey(file: string, cacheDir: string): string {
  let key: Buffer;
  try {
    key = fs.readFileSync(file);
  } catch (err) {
    throw new McpfleetError("ERR_IO", `cannot read ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const dir = join(cacheDir, "ssh");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const copy = join(dir, `key-${createHash("sha256").update(file).digest("hex").slice(0, 12)}`);
  const tmp = `${copy}.tmp`;
  fs.writeFileSync(tmp, key, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, copy);
  return copy;
}

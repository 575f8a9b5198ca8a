// HTTP calls to identity providers (discovery, JWKS, introspection): node's http/https with a
// trusted CA when caCertPath is set, a bearer token from authTokenFile, a time limit, a size
// limit on answers, and private or loopback addresses refused after DNS resolution unless the
// provider allows them.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { isPrivateAddress } from "./address.js";

export interface ProviderHttpOptions {
  /** PEM bundle trusted for the provider's TLS. */
  ca?: string;
  /** Read on every call (service-account tokens rotate). */
  authTokenFile?: string;
  allowPrivateIP: boolean;
  timeoutMs: number;
  /** Largest answer body in bytes. */
  maxBytes: number;
}

export class ProviderFetchError extends Error {}

/** A DNS lookup that refuses private and loopback answers unless `allowPrivate`. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err !== null) {
        callback(err, "", 0);
        return;
      }
      const bad = addresses.find((a) => isPrivateAddress(a.address));
      if (!allowPrivate && bad !== undefined) {
        callback(
          new ProviderFetchError(`${hostname} resolves to a private address (${bad.address})`),
          "",
          0,
        );
        return;
      }
      if (options.all === true) {
        callback(null, addresses);
        return;
      }
      const first = addresses[0];
      if (first === undefined)
        callback(new ProviderFetchError(`${hostname} has no address`), "", 0);
      else callback(null, first.address, first.family);
    });
  };
}

export interface ProviderResponse {
  status: number;
  body: unknown;
}

/** One request to a provider; the answer must be JSON. */
export function providerRequest(
  url: string,
  opts: ProviderHttpOptions,
  init: { method?: "GET" | "POST"; form?: Record<string, string>; basic?: [string, string] } = {},
): Promise<ProviderResponse> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      reject(new ProviderFetchError(`not a URL: ${url}`));
      return;
    }
    if (u.protocol !== "https:" && u.protocol !== "http:") {
      reject(new ProviderFetchError(`${url}: only http and https are used`));
      return;
    }
    const host = u.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) !== 0 && !opts.allowPrivateIP && isPrivateAddress(host)) {
      reject(new ProviderFetchError(`${u.host} is a private address`));
      return;
    }
    const headers: Record<string, string> = { accept: "application/json" };
    if (init.basic !== undefined) {
      const [id, secret] = init.basic;
      const enc = (s: string): string => encodeURIComponent(s);
      headers.authorization = `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString("base64")}`;
    } else if (opts.authTokenFile !== undefined) {
      headers.authorization = `Bearer ${readFileSync(opts.authTokenFile, "utf8").trim()}`;
    }
    let payload: Buffer | undefined;
    if (init.form !== undefined) {
      payload = Buffer.from(new URLSearchParams(init.form).toString());
      headers["content-type"] = "application/x-www-form-urlencoded";
      headers["content-length"] = String(payload.length);
    }
    const mod = u.protocol === "https:" ? https : http;
    const req = mod.request(
      u,
      {
        method: init.method ?? "GET",
        headers,
        lookup: guardedLookup(opts.allowPrivateIP),
        timeout: opts.timeoutMs,
        ...(opts.ca !== undefined && u.protocol === "https:" ? { ca: opts.ca } : {}),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let overflow = false;
        res.on("data", (c: Buffer) => {
          if (overflow) return;
          size += c.length;
          if (size > opts.maxBytes) {
            overflow = true;
            reject(new ProviderFetchError(`${url}: answer larger than ${opts.maxBytes} bytes`));
            req.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on("end", () => {
          if (overflow) return;
          const text = Buffer.concat(chunks).toString("utf8");
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown });
          } catch {
            reject(new ProviderFetchError(`${url}: answer is not JSON (HTTP ${res.statusCode})`));
          }
        });
        res.on("error", reject);
      },
    );
    const timer = setTimeout(
      () => req.destroy(new ProviderFetchError(`${url}: no answer in ${opts.timeoutMs} ms`)),
      opts.timeoutMs,
    );
    req.on("close", () => clearTimeout(timer));
    req.on("timeout", () =>
      req.destroy(new ProviderFetchError(`${url}: no answer in ${opts.timeoutMs} ms`)),
    );
    req.on("error", reject);
    req.end(payload);
  });
}

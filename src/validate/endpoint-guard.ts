// Whether a remote URL names a host inside the cluster's own network by address: loopback,
// link-local (cloud metadata endpoints), private and unspecified addresses, and localhost. The
// reference operator refuses such a catalog entry unless it allows private endpoints; names are
// not resolved (a run must not depend on DNS), so only literal addresses are recognised.
import { isIP } from "node:net";

/** Why `url` names a private endpoint, or undefined when it does not (or is not a URL). */
export function privateEndpoint(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  host = host.toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return "localhost";
  const version = isIP(host);
  if (version === 4) return ipv4Class(host.split(".").map(Number));
  if (version === 6) return ipv6Class(host);
  return undefined;
}

function ipv4Class([a = 0, b = 0]: number[]): string | undefined {
  if (a === 127) return "a loopback address";
  if (a === 0) return "an unspecified address";
  if (a === 169 && b === 254) return "a link-local address (cloud metadata endpoints live there)";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) {
    return "a private address";
  }
  if (a === 100 && b >= 64 && b <= 127) return "a shared (carrier-grade NAT) address";
  return undefined;
}

function ipv6Class(host: string): string | undefined {
  if (host === "::1") return "a loopback address";
  if (host === "::") return "an unspecified address";
  // An IPv4-mapped address; URL writes its IPv4 part in hex (::ffff:7f00:1).
  const dotted = /^::ffff:([0-9.]+)$/.exec(host);
  if (dotted !== null) return ipv4Class(dotted[1]!.split(".").map(Number));
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (hex !== null) {
    const high = parseInt(hex[1]!, 16);
    return ipv4Class([high >> 8, high & 0xff]);
  }
  const first = parseInt(host.split(":")[0] || "0", 16);
  if ((first & 0xffc0) === 0xfe80) return "a link-local address";
  if ((first & 0xfe00) === 0xfc00) return "a unique local (private) address";
  return undefined;
}

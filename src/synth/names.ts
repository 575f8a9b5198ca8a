import { createHash } from "node:crypto";

const DNS_LABEL_MAX = 63;
const DNS_SUBDOMAIN_MAX = 253;

/**
 * A name that fits `max` characters. Names that fit are returned unchanged; longer ones keep
 * their beginning and end in a short digest of the whole, so the same input always gives the
 * same name and two long names that share a prefix still differ.
 */
export function shorten(name: string, max: number): string {
  if (name.length <= max) return name;
  const digest = createHash("sha256").update(name).digest("hex").slice(0, 8);
  const head = name.slice(0, max - digest.length - 1).replace(/[-.]+$/, "");
  return `${head}-${digest}`;
}

/**
 * A DNS-1123 label (Service and StatefulSet names, container and port names). Object names may
 * contain dots, labels may not: dots become dashes.
 */
export function dnsLabel(name: string): string {
  return shorten(name.replace(/\./g, "-"), DNS_LABEL_MAX);
}

/** A DNS-1123 subdomain (most object names). */
export function dnsSubdomain(name: string): string {
  return shorten(name, DNS_SUBDOMAIN_MAX);
}

/** A label value: at most 63 characters, alphanumeric at both ends. */
export function labelValue(value: string): string {
  return shorten(value, DNS_LABEL_MAX).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
}

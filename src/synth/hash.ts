import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every level, so equal values always give equal text. Written
 * as loops over sorted keys: the controller hashes every object and status it compares, 10,000
 * at a time, and the allocations of entries, filters and joins were most of that time.
 */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      // As Array.prototype.join, an element with no JSON form adds nothing.
      out += stableStringify(value[i]) ?? "";
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = "{";
  let first = true;
  for (const k of Object.keys(record).sort()) {
    const v = record[k];
    if (v === undefined) continue;
    out += `${first ? "" : ","}${JSON.stringify(k)}:${stableStringify(v)}`;
    first = false;
  }
  return `${out}}`;
}

/** sha256 hex of the stable JSON of a value: config hashes and checksum annotations. */
export function contentHash(value: unknown): string {
  return createHash("sha256").update(stableStringify(value)).digest("hex");
}

/** A copy of a JSON value with object keys sorted at every level and undefined fields dropped. */
export function sortKeys<V>(value: V): V {
  if (Array.isArray(value)) return value.map(sortKeys) as V;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out as V;
  }
  return value;
}

/** Indented JSON with sorted keys: configuration files people read in config maps. */
export function prettyJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

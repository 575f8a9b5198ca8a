// Small checks on parsed JSON and YAML values, shared by every layer that reads them.

/** A JSON object as parsed: its members, not yet checked. */
export type JsonObject = Record<string, unknown>;

/** Whether `value` is a JSON object (a mapping): not null, not an array. */
export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A parsed value as a message shows it: a string as it is, anything else as JSON, cut at `max`
 * characters. Never String(): a member named toString that is not a function (a forged token's
 * header, say) makes it throw.
 */
export function shownValue(value: unknown, max = 100): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? typeof value);
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

/**
 * A deep copy of plain data (objects of no class, arrays, primitives) that shares its strings:
 * about ten times faster than structuredClone on data holding long strings, such as a file's
 * text. Anything else is refused with a TypeError, a Map or an instance of a class being data
 * that would not come through as itself.
 */
export function plainCopy<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(plainCopy) as T;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) {
    throw new TypeError(`plainCopy: ${Object.prototype.toString.call(value)} is not plain data`);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    out[key] = plainCopy((value as Record<string, unknown>)[key]);
  return out as T;
}

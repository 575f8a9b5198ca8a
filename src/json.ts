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

// Small checks on parsed JSON and YAML values, shared by every layer that reads them.

/** A JSON object as parsed: its members, not yet checked. */
export type JsonObject = Record<string, unknown>;

/** Whether `value` is a JSON object (a mapping): not null, not an array. */
export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

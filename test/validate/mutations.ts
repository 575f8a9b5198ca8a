// Mutations for fuzz tests: edits of YAML text that break its grammar in the ways people and
// tools do, and replacements of values at random paths of a parsed document.
import fc from "fast-check";

/** Characters that matter to YAML's grammar, plus a few that should not appear at all. */
const YAML_CHARS = [
  ..."-:?,[]{}#&*!|>'\"%@` \t\n",
  "---\n",
  "...\n",
  "\u0000",
  "\u0085",
  "\ufeff",
  "é",
];

export const textMutation = fc.oneof(
  fc.record({
    op: fc.constant("delete" as const),
    at: fc.nat(),
    len: fc.integer({ min: 1, max: 40 }),
  }),
  fc.record({
    op: fc.constant("insert" as const),
    at: fc.nat(),
    text: fc
      .array(fc.constantFrom(...YAML_CHARS), { minLength: 1, maxLength: 6 })
      .map((a) => a.join("")),
  }),
  fc.record({ op: fc.constant("dupLine" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("swapLines" as const), at: fc.nat(), with: fc.nat() }),
  fc.record({
    op: fc.constant("indent" as const),
    at: fc.nat(),
    by: fc.integer({ min: -4, max: 4 }),
  }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
);

export type TextMutation = typeof textMutation extends fc.Arbitrary<infer T> ? T : never;

export function applyText(text: string, m: TextMutation): string {
  const at = text.length === 0 ? 0 : m.at % text.length;
  const lines = text.split("\n");
  const li = lines.length === 0 ? 0 : m.at % lines.length;
  switch (m.op) {
    case "delete":
      return text.slice(0, at) + text.slice(at + m.len);
    case "insert":
      return text.slice(0, at) + m.text + text.slice(at);
    case "dupLine":
      lines.splice(li, 0, lines[li] ?? "");
      return lines.join("\n");
    case "swapLines": {
      const lj = m.with % lines.length;
      [lines[li], lines[lj]] = [lines[lj] ?? "", lines[li] ?? ""];
      return lines.join("\n");
    }
    case "indent": {
      const line = lines[li] ?? "";
      lines[li] = m.by >= 0 ? " ".repeat(m.by) + line : line.slice(-m.by);
      return lines.join("\n");
    }
    case "truncate":
      return text.slice(0, at);
  }
}

/** Replaces the value at a random path of a parsed document with an arbitrary JSON value. */
export function applyValue(doc: unknown, pathSeed: number[], value: unknown): unknown {
  if (pathSeed.length === 0 || doc === null || typeof doc !== "object") return value;
  const [head = 0, ...rest] = pathSeed;
  if (Array.isArray(doc)) {
    if (doc.length === 0) return [value];
    const i = head % doc.length;
    const copy: unknown[] = [...(doc as unknown[])];
    copy[i] = applyValue(copy[i], rest, value);
    return copy;
  }
  const obj = doc as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.length === 0) return { x: value };
  const k = keys[head % keys.length]!;
  return { ...obj, [k]: applyValue(obj[k], rest, value) };
}

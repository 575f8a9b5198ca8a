// Structural limits of every JSON value the registry stores or iterates: nesting depth, string
// length, list and map sizes, NUL characters. Checked by one iterative walk before anything
// recursive (JSON.stringify, ajv, CEL, the store) sees the value, so a hostile publish or
// upstream cannot overflow the stack, store a value that breaks every later read, or make a
// rule iterate a huge list.

export interface JsonLimits {
  /** Deepest nesting of objects and lists (the value itself is depth 1). */
  maxDepth: number;
  /** Longest string or object key, in UTF-16 units. */
  maxString: number;
  /** Most items of one list, or members of one object. */
  maxItems: number;
  /** Most values in the whole tree (a bound on the work of every walk over it). */
  maxNodes: number;
}

/**
 * Limits of a stored entry and of request bodies. Generous for real server.json documents (the
 * upstream schema nests a handful of levels and limits descriptions to 100 characters), tight
 * enough that no walk over a value costs more than a few milliseconds.
 */
export const JSON_LIMITS: JsonLimits = {
  maxDepth: 32,
  maxString: 65_536,
  maxItems: 10_000,
  maxNodes: 100_000,
};

/**
 * Why `value` breaks `limits` (a JSON pointer and the limit), or undefined when it does not.
 * PostgreSQL text and jsonb cannot hold U+0000, so a NUL in any string or key is refused too.
 */
export function jsonLimitProblem(
  value: unknown,
  limits: JsonLimits = JSON_LIMITS,
): string | undefined {
  const stack: { v: unknown; depth: number; path: string }[] = [{ v: value, depth: 1, path: "" }];
  let nodes = 0;
  const text = (s: string, path: string): string | undefined => {
    if (s.length > limits.maxString) {
      return `${path || "/"}: a string is longer than ${limits.maxString} characters`;
    }
    if (s.includes("\u0000")) return `${path || "/"}: a string contains a NUL character`;
    return undefined;
  };
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop()!;
    if (++nodes > limits.maxNodes) return `the value has more than ${limits.maxNodes} members`;
    if (typeof v === "string") {
      const p = text(v, path);
      if (p !== undefined) return p;
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth > limits.maxDepth) return `${path}: nested deeper than ${limits.maxDepth} levels`;
    if (Array.isArray(v)) {
      if (v.length > limits.maxItems) {
        return `${path || "/"}: a list has more than ${limits.maxItems} items`;
      }
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ v: v[i], depth: depth + 1, path: `${path}/${i}` });
      }
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > limits.maxItems) {
      return `${path || "/"}: an object has more than ${limits.maxItems} members`;
    }
    for (const k of keys) {
      const member = `${path}/${printable(k.slice(0, 64)).replace(/~/g, "~0").replace(/\//g, "~1")}`;
      const p = text(k, member);
      if (p !== undefined) return p;
      stack.push({ v: (v as Record<string, unknown>)[k], depth: depth + 1, path: member });
    }
  }
  return undefined;
}

/** A string with its NUL characters spelled out, safe in a message the store keeps. */
export function printable(s: string): string {
  return s.replaceAll("\u0000", "\\u0000");
}

// What is known of one YAML document, whichever parser read it: its value, where it
// starts, and lookups from a JSON pointer back to the line and column of the node it names.
import { escapeSegment } from "../json-pointer.js";

export interface Position {
  line: number;
  column: number;
}

/** A problem reading a document: where (a JSON pointer and its line and column) and why. */
export interface ParseIssue {
  /** JSON pointer of the offending node ("" for the whole document). */
  path: string;
  line: number;
  column: number;
  message: string;
  level: "parse";
}

/** One document of a file. `value` is set only when the document parsed without errors. */
export interface ParsedDocument {
  /** 0-based index among the file's documents (empty ones included). */
  index: number;
  /** Where the document's content starts. */
  start: Position;
  /** Offsets in the file's text where the document starts and ends. */
  range: readonly [number, number];
  /** True when the document holds nothing but comments (or an explicit null). */
  empty: boolean;
  value?: unknown;
  /** False when no mapping in the document maps a key to null (known from the parse). */
  readonly nullFields: boolean;
  readonly errors: readonly ParseIssue[];
  readonly warnings: readonly ParseIssue[];
  /** Position of the node a JSON pointer names (see `LocateTarget`). */
  locate(pointer: string, target?: LocateTarget): Position;
  /**
   * Where the text of the string at `pointer` starts, for mapping positions inside an embedded
   * document: `lines` is true for a literal block scalar (`|`), whose lines map one to one.
   */
  scalarOrigin(pointer: string): ScalarOrigin | undefined;
  /**
   * Drops the value and the parse tree (kept only while the document's own levels run, so that
   * a large set does not hold every document in memory); later lookups parse its text again.
   */
  release(): void;
}

export interface ScalarOrigin extends Position {
  lines: boolean;
}

export interface ParseLimits {
  maxDepth: number;
  maxAliasCount: number;
}

/** The limits of every reading unless its caller sets others (a library user of validate may). */
export const DEFAULT_PARSE_LIMITS: ParseLimits = { maxDepth: 64, maxAliasCount: 100 };

/**
 * Which end of a node an issue points at. `value`: the value itself for scalars, the key for
 * mappings and sequences (a rule on `spec` points at `spec:`); `key`: the key (unknown fields).
 */
export type LocateTarget = "value" | "key";

/** 1-based line and column of offsets in a text, found by binary search over line starts. */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", nl + 1)) {
      this.starts.push(nl + 1);
    }
  }

  position(offset: number): Position {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.starts[mid] ?? 0) <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: Math.max(1, offset - (this.starts[low] ?? 0) + 1) };
  }
}

/**
 * Makes the value plain JSON data in place (YAML timestamps and binary from `%YAML 1.1`
 * documents become strings, sets and maps become lists and objects) and checks the nesting
 * depth without recursion. Returns the pointer of the first node deeper than `maxDepth`.
 */
export function normalise(root: unknown, maxDepth: number): string | undefined {
  // Depth only on the way (this runs on every document); the path only when too deep.
  const values: unknown[] = [root];
  const depths: number[] = [0];
  let tooDeep = false;
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop() ?? 0;
    if (value === null || typeof value !== "object") continue;
    if (depth >= maxDepth) {
      tooDeep = true;
      break;
    }
    const container = value as Record<string, unknown>;
    for (const key of Array.isArray(value) ? value.keys() : Object.keys(value)) {
      const v = container[key];
      if (v === null || typeof v !== "object") continue;
      let plain: unknown = v;
      if (!Array.isArray(v) && Object.getPrototypeOf(v) !== Object.prototype) {
        plain = plainValue(v);
        container[key] = plain;
      }
      values.push(plain);
      depths.push(depth + 1);
    }
  }
  return tooDeep ? deepestPath(root, maxDepth) : undefined;
}

/** Pointer of the first node at `maxDepth` (only called when there is one). */
function deepestPath(root: unknown, maxDepth: number): string {
  const stack: { value: unknown; path: string; depth: number }[] = [
    { value: root, path: "", depth: 0 },
  ];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth >= maxDepth) return path;
    for (const [key, v] of Object.entries(value)) {
      stack.push({ value: v as unknown, path: `${path}/${escapeSegment(key)}`, depth: depth + 1 });
    }
  }
  return "";
}

function plainValue(v: object): unknown {
  if (Array.isArray(v)) return v;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
  if (v instanceof Set) return [...(v as Set<unknown>)];
  if (v instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, val] of v as Map<unknown, unknown>) out[String(k)] = val;
    return out;
  }
  return v;
}

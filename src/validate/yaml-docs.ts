// Multi-document YAML (and JSON, which is YAML) with source positions. Each document keeps its
// node tree so that a JSON pointer found by a later level maps back to the line and column of
// the node it names. Everything that can go wrong in a document becomes a `parse` issue on it.
import {
  type Document,
  type LineCounter as LineCounterType,
  type Node,
  LineCounter,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  parseAllDocuments,
  parseDocument,
} from "yaml";
import type { Issue } from "./types.js";

export interface Position {
  line: number;
  column: number;
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
  errors: Issue[];
  warnings: Issue[];
  /** Position of the node a JSON pointer names (see `locate`). */
  locate(pointer: string, target?: LocateTarget): Position;
  /**
   * Where the text of the string at `pointer` starts, for mapping positions inside an embedded
   * document: `lines` is true for a literal block scalar (`|`), whose lines map one to one.
   */
  scalarOrigin(pointer: string): { line: number; column: number; lines: boolean } | undefined;
  /**
   * Drops the node tree (kept only while the document's own levels run, so that a large set
   * does not hold every tree in memory); later lookups parse the document's text again.
   */
  release(): void;
}

export interface ParseLimits {
  maxDepth: number;
  maxAliasCount: number;
}

/**
 * Which end of a node an issue points at. `value`: the value itself for scalars, the key for
 * mappings and sequences (a rule on `spec` points at `spec:`); `key`: the key (unknown fields).
 */
export type LocateTarget = "value" | "key";

export function splitPointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function lineCol(counter: LineCounterType, offset: number): Position {
  const { line, col } = counter.linePos(offset);
  return { line: Math.max(1, line), column: Math.max(1, col) };
}

function startOf(node: Node | null | undefined): number | undefined {
  return node?.range?.[0];
}

/**
 * The deepest node on the way to `pointer` that exists in the document, and whether the full
 * pointer was found. Aliases are followed to their anchors.
 */
function walkPointer(
  doc: Document.Parsed,
  pointer: string,
): { node: Node | null; key: Node | null; complete: boolean } {
  let node: Node | null = doc.contents;
  let key: Node | null = null;
  for (const segment of splitPointer(pointer)) {
    if (isAlias(node)) node = (node.resolve(doc) as Node | undefined) ?? node;
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === segment,
      );
      if (pair === undefined) return { node, key, complete: false };
      key = pair.key as Node;
      node = (pair.value as Node | null) ?? null;
      if (node === null) return { node: key, key, complete: true };
    } else if (isSeq(node)) {
      const index = /^(0|[1-9][0-9]*)$/.test(segment) ? Number(segment) : -1;
      const item = node.items[index] as Node | undefined;
      if (item === undefined) return { node, key, complete: false };
      key = null;
      node = item;
    } else {
      return { node, key, complete: false };
    }
  }
  return { node, key, complete: true };
}

const EMPTY_RANGE = 0;

/**
 * Splits a file into documents and parses each with positions. Never throws: a failure of the
 * YAML library itself (stack exhaustion on absurd input) becomes an error on the first document.
 */
const PARSE_OPTIONS = {
  prettyErrors: false,
  uniqueKeys: true,
  // Keys are strings, as in JSON and Kubernetes; a list or mapping as a key is an error.
  stringKeys: true,
  logLevel: "silent",
  strict: true,
} as const;

export function parseDocuments(text: string, limits: ParseLimits): ParsedDocument[] {
  const counter = new LineCounter();
  let docs: Document.Parsed[];
  try {
    const parsed = parseAllDocuments(text, { ...PARSE_OPTIONS, lineCounter: counter });
    docs = Array.isArray(parsed) ? parsed : [];
  } catch (err) {
    return [brokenDocument(0, { line: 1, column: 1 }, `cannot parse: ${(err as Error).message}`)];
  }
  return docs.map((doc, index) => buildDocument(doc, index, counter, limits, text));
}

function brokenDocument(index: number, start: Position, message: string): ParsedDocument {
  return {
    index,
    start,
    range: [0, 0],
    empty: false,
    errors: [{ path: "", ...start, message, level: "parse" }],
    warnings: [],
    locate: () => start,
    scalarOrigin: () => undefined,
    release: () => undefined,
  };
}

function firstLine(message: string): string {
  const nl = message.indexOf("\n");
  return (nl === -1 ? message : message.slice(0, nl)).trim();
}

function buildDocument(
  doc: Document.Parsed,
  index: number,
  counter: LineCounterType,
  limits: ParseLimits,
  text: string,
): ParsedDocument {
  const contents = doc.contents;
  const start = lineCol(counter, startOf(contents) ?? doc.range[0] ?? EMPTY_RANGE);
  const [docStart, , docEnd] = doc.range;
  const { locate, scalarOrigin, release } = locator(text, counter, [docStart, docEnd], start, doc);
  const errors: Issue[] = doc.errors.map((e) => ({
    path: "",
    ...lineCol(counter, e.pos[0]),
    message:
      e.code === "DUPLICATE_KEY"
        ? `duplicate key ${keyTextAt(text, e.pos[0])}: keys of a mapping must be unique`
        : firstLine(e.message),
    level: "parse",
  }));
  const warnings: Issue[] = doc.warnings.map((w) => ({
    path: "",
    ...lineCol(counter, w.pos[0]),
    message: firstLine(w.message),
    level: "parse",
  }));
  const result: ParsedDocument = {
    index,
    start,
    range: [docStart, docEnd],
    empty: false,
    errors,
    warnings,
    locate,
    scalarOrigin,
    release,
  };
  if (errors.length > 0) return result;

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: limits.maxAliasCount });
  } catch (err) {
    const message = (err as Error).message;
    errors.push({
      path: "",
      ...start,
      message: /alias count/i.test(message)
        ? `too many alias expansions (more than ${limits.maxAliasCount}); the document looks like an alias bomb`
        : firstLine(message),
      level: "parse",
    });
    return result;
  }
  if (value === null || value === undefined) {
    result.empty = true;
    return result;
  }
  const tooDeep = normalise(value, limits.maxDepth);
  if (tooDeep !== undefined) {
    const at = locate(tooDeep);
    errors.push({
      path: tooDeep,
      ...at,
      message: `document nests deeper than ${limits.maxDepth} levels`,
      level: "parse",
    });
    return result;
  }
  result.value = value;
  return result;
}

/**
 * Position lookups for the document at `range` of `text`. While `live` is set they walk that
 * parsed tree; after release() (or when none is given) the document's text is parsed again on
 * the first lookup, offsets shifted by where the document starts.
 */
function locator(
  text: string,
  counter: LineCounterType,
  range: readonly [number, number],
  start: Position,
  parsed?: Document.Parsed,
): Pick<ParsedDocument, "locate" | "scalarOrigin" | "release"> {
  let live: Document.Parsed | undefined = parsed;
  let base = 0;
  const [docStart, docEnd] = range;
  const tree = (): Document.Parsed => {
    if (live === undefined) {
      live = parseDocument(text.slice(docStart, docEnd), PARSE_OPTIONS);
      base = docStart;
    }
    return live;
  };
  const locate = (pointer: string, target: LocateTarget = "value"): Position => {
    const found = walkPointer(tree(), pointer);
    let node: Node | null = found.node;
    const leaf = isScalar(found.node) || isAlias(found.node);
    if (found.key !== null && (target === "key" || !found.complete || !leaf)) {
      node = found.key;
    }
    const offset = startOf(node);
    return offset === undefined ? start : lineCol(counter, base + offset);
  };
  const scalarOrigin = (pointer: string) => {
    const found = walkPointer(tree(), pointer);
    if (!found.complete || !isScalar(found.node)) return undefined;
    const offset = base + (startOf(found.node) ?? 0);
    if (found.node.type !== "BLOCK_LITERAL") return { ...lineCol(counter, offset), lines: false };
    // The header (`|`, `|-`, `|2`...) ends the line; the content starts on the next one, at the
    // indentation of its first non-blank line.
    const nl = text.indexOf("\n", offset);
    if (nl === -1) return { ...lineCol(counter, offset), lines: false };
    const first = lineCol(counter, nl + 1).line;
    const rest = text.slice(nl + 1, base + (found.node.range?.[1] ?? text.length) + 1);
    const indent = /^(?:[ \t]*\r?\n)*( *)/.exec(rest)?.[1]?.length ?? 0;
    return { line: first, column: indent + 1, lines: true };
  };
  const release = (): void => {
    live = undefined;
  };
  return { locate, scalarOrigin, release };
}

/** The lines of `text`, counted as the parser counts them. */
function countLines(text: string): LineCounterType {
  const counter = new LineCounter();
  counter.addNewLine(0);
  for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", nl + 1)) {
    counter.addNewLine(nl + 1);
  }
  return counter;
}

/**
 * A document validated elsewhere (in a worker thread), rebuilt from its file's text and its
 * range for the reference level: positions are found by parsing its text again when asked.
 */
export function reparsedDocument(
  text: string,
  index: number,
  range: readonly [number, number],
  start: Position,
): ParsedDocument {
  let counter: LineCounterType | undefined;
  let inner: Pick<ParsedDocument, "locate" | "scalarOrigin" | "release"> | undefined;
  const get = () => (inner ??= locator(text, (counter ??= countLines(text)), range, start));
  return {
    index,
    start,
    range,
    empty: false,
    errors: [],
    warnings: [],
    locate: (pointer, target) => get().locate(pointer, target),
    scalarOrigin: (pointer) => get().scalarOrigin(pointer),
    release: () => inner?.release(),
  };
}

/** The key written at `offset` (up to its colon), quoted for a message. */
function keyTextAt(text: string, offset: number): string {
  const rest = text.slice(offset, offset + 256);
  const m = /^("(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|[^:\n]*?)\s*:(?:\s|$)/.exec(rest);
  const key = (m?.[1] ?? rest.split("\n")[0] ?? "").trim();
  return JSON.stringify(key.startsWith('"') || key.startsWith("'") ? key.slice(1, -1) : key);
}

function escapeSegment(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * Makes the value plain JSON data in place (YAML timestamps and binary from `%YAML 1.1`
 * documents become strings, sets and maps become lists and objects) and checks the nesting
 * depth without recursion. Returns the pointer of the first node deeper than `maxDepth`.
 */
function normalise(root: unknown, maxDepth: number): string | undefined {
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

// Multi-document YAML through the yaml package, which keeps a node tree with source ranges and
// gives the most precise diagnostics (error positions, duplicate keys, alias expansion counts).
// It is the reference reading of a file: events.ts takes the common case faster and hands
// everything else here.
import type { Document, LineCounter as LineCounterType, Node, YAMLError } from "yaml";
import { yamlPackage } from "../yaml-package.js";
import { parseHint } from "./parse-hint.js";
import {
  type LocateTarget,
  type ParsedDocument,
  type ParseIssue,
  type ParseLimits,
  type Position,
  normalise,
} from "./model.js";
import { splitPointer } from "../json-pointer.js";

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
  const { isAlias, isMap, isPair, isScalar, isSeq } = yamlPackage();
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

export function parseWithTree(text: string, limits: ParseLimits): ParsedDocument[] {
  const counter = new (yamlPackage().LineCounter)();
  let docs: Document.Parsed[];
  try {
    const parsed = yamlPackage().parseAllDocuments(text, {
      ...PARSE_OPTIONS,
      lineCounter: counter,
    });
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
    nullFields: true,
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

/** At most this many parse errors (and as many warnings) are reported per document. */
const MAX_PARSE_ISSUES = 20;

/**
 * The yaml package's errors or warnings of a document as issues: each once (hostile input such
 * as thousands of unclosed brackets makes it repeat one error at one place hundreds of times),
 * at most MAX_PARSE_ISSUES of them and a last one saying how many more there are, and the
 * parser's own failures (its stack exhausted) in words that say what in the input caused them.
 */
function parseIssues(
  found: readonly YAMLError[],
  counter: LineCounterType,
  text: string,
  what: "errors" | "warnings",
): ParseIssue[] {
  const issues: ParseIssue[] = [];
  const seen = new Set<string>();
  let more = 0;
  for (const e of found) {
    const at = lineCol(counter, e.pos[0]);
    const duplicate = e.code === "DUPLICATE_KEY" ? keyTextAt(text, e.pos[0]) : undefined;
    const message =
      duplicate !== undefined
        ? `duplicate key ${duplicate}: keys of a mapping must be unique` +
          parseHint(e.code, { text: duplicate, column: at.column })
        : /call stack|stack overflow/i.test(e.message)
          ? "the document nests too deeply for the YAML parser (it ran out of stack)"
          : firstLine(e.message) + parseHint(e.code);
    const key = `${at.line}:${at.column}:${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (issues.length < MAX_PARSE_ISSUES) issues.push({ path: "", ...at, message, level: "parse" });
    else more++;
  }
  const last = issues[issues.length - 1];
  if (more > 0 && last !== undefined) {
    issues.push({ ...last, message: `${more} more parse ${what} in this document not shown` });
  }
  return issues;
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
  const { locate, scalarOrigin, release } = treeLocator(
    text,
    (offset) => lineCol(counter, offset),
    [docStart, docEnd],
    start,
    doc,
  );
  const errors = parseIssues(doc.errors, counter, text, "errors");
  const warnings = parseIssues(doc.warnings, counter, text, "warnings");
  const result: ParsedDocument = {
    index,
    start,
    range: [docStart, docEnd],
    empty: false,
    nullFields: true,
    errors,
    warnings,
    locate,
    scalarOrigin,
    release: () => {
      result.value = undefined;
      release();
    },
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
export function treeLocator(
  text: string,
  position: (offset: number) => Position,
  range: readonly [number, number],
  start: Position,
  parsed?: Document.Parsed,
): Pick<ParsedDocument, "locate" | "scalarOrigin" | "release"> {
  let live: Document.Parsed | undefined = parsed;
  let base = 0;
  const [docStart, docEnd] = range;
  const tree = (): Document.Parsed => {
    if (live === undefined) {
      live = yamlPackage().parseDocument(text.slice(docStart, docEnd), PARSE_OPTIONS);
      base = docStart;
    }
    return live;
  };
  const locate = (pointer: string, target: LocateTarget = "value"): Position => {
    const found = walkPointer(tree(), pointer);
    let node: Node | null = found.node;
    const { isAlias, isScalar } = yamlPackage();
    const leaf = isScalar(found.node) || isAlias(found.node);
    if (found.key !== null && (target === "key" || !found.complete || !leaf)) {
      node = found.key;
    }
    const offset = startOf(node);
    return offset === undefined ? start : position(base + offset);
  };
  const scalarOrigin = (pointer: string) => {
    const found = walkPointer(tree(), pointer);
    if (!found.complete || !yamlPackage().isScalar(found.node)) return undefined;
    const offset = base + (startOf(found.node) ?? 0);
    if (found.node.type !== "BLOCK_LITERAL") return { ...position(offset), lines: false };
    // The header (`|`, `|-`, `|2`...) ends the line; the content starts on the next one, at the
    // indentation of its first non-blank line.
    const nl = text.indexOf("\n", offset);
    if (nl === -1) return { ...position(offset), lines: false };
    const first = position(nl + 1).line;
    const rest = text.slice(nl + 1, base + (found.node.range?.[1] ?? text.length) + 1);
    const indent = /^(?:[ \t]*\r?\n)*( *)/.exec(rest)?.[1]?.length ?? 0;
    return { line: first, column: indent + 1, lines: true };
  };
  const release = (): void => {
    live = undefined;
  };
  return { locate, scalarOrigin, release };
}

/** The key written at `offset` (up to its colon), quoted for a message. */
function keyTextAt(text: string, offset: number): string {
  const rest = text.slice(offset, offset + 256);
  const m = /^("(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|[^:\n]*?)\s*:(?:\s|$)/.exec(rest);
  const key = (m?.[1] ?? rest.split("\n")[0] ?? "").trim();
  return JSON.stringify(key.startsWith('"') || key.startsWith("'") ? key.slice(1, -1) : key);
}

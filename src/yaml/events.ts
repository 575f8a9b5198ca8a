// The fast way through a file: js-yaml's event parser records where every node starts, and
// the values are built from the same events, so no node tree is kept. It takes the files a
// resource repository is made of; a file it cannot read exactly as the yaml package would
// (a syntax error, aliases, anchors, tags, directives, keys that are not strings, a byte order
// mark, a tab) is left to
// tree.ts, whose diagnostics are the reference, by returning undefined.
import {
  EVENT_ID,
  SCALAR_STYLE,
  type Event,
  type ScalarEvent,
  getScalarValue,
  parseEvents,
} from "js-yaml";
import { treeLocator } from "./tree.js";
import {
  LineIndex,
  type LocateTarget,
  type ParsedDocument,
  type ParseIssue,
  type ParseLimits,
  type Position,
  type ScalarOrigin,
} from "./model.js";
import { splitPointer } from "../json-pointer.js";
import { plainValues } from "./values.js";

const { SEQUENCE, MAPPING, SCALAR, POP } = EVENT_ID;

/** Events to walk: of `text`, which starts at offset `base` of the file. */
interface EventView {
  text: string;
  base: number;
  events: Event[];
  root: number;
  /** True for the file's shared events; false for a document's own, parsed again. */
  shared: boolean;
}

/**
 * A file's events, shared by its documents until each has released them; after that a lookup
 * parses the text of its own document again (errors of the reference level come late). Given
 * a way to read the file again, the text goes with the events: a run over many files keeps
 * none of them, and the rare late lookup reads its file once more.
 */
class FileEvents {
  private events: Event[] | undefined;
  private kept: string | undefined;
  private lines: LineIndex | undefined;
  private held: number;

  /**
   * `held`: how many documents will call release() before the events can go; `nullFields`:
   * whether some mapping of the file maps a key to null; `again`: the text read once more,
   * undefined when the file changed since.
   */
  constructor(
    text: string,
    events: Event[],
    private readonly roots: readonly number[],
    held: number,
    readonly nullFields = true,
    private readonly again?: () => string | undefined,
  ) {
    this.kept = text;
    this.events = events;
    this.held = held;
  }

  /** The file's text; undefined when it was let go and the file has changed since. */
  text(): string | undefined {
    return this.kept ?? this.again?.();
  }

  /**
   * The events of document `index`, whose text runs from offset `from` to `to` of the file's;
   * undefined when the file's text cannot be had again.
   */
  view(index: number, from: number, to: number): EventView | undefined {
    if (this.events !== undefined && this.kept !== undefined) {
      const root = this.roots[index] ?? -1;
      return { text: this.kept, base: 0, events: this.events, root, shared: true };
    }
    const whole = this.text();
    if (whole === undefined) return undefined;
    // From the start of the document's first line, so that its indentation is kept.
    const base = whole.lastIndexOf("\n", from - 1) + 1;
    const text = whole.slice(base, to);
    return { text, base, events: parseEvents(text, {}), root: 1, shared: false };
  }

  /** The lines of `text`, which is this file's text: kept with it while it is. */
  lineIndex(text: string): LineIndex {
    if (text !== this.kept) return new LineIndex(text);
    return (this.lines ??= new LineIndex(text));
  }

  release(): void {
    if (--this.held > 0) return;
    this.events = undefined;
    if (this.again !== undefined) {
      this.kept = undefined;
      this.lines = undefined;
    }
  }
}

/**
 * Line and column of `offset`, counted on from a known earlier place (`from`): a document's
 * positions need no index of the lines of its whole file.
 */
function positionFrom(
  text: string,
  from: Position & { offset: number },
  offset: number,
): Position & { offset: number } {
  if (offset < from.offset) from = { offset: 0, line: 1, column: 1 };
  let line = from.line;
  let lineStart = from.offset - (from.column - 1);
  for (let nl = text.indexOf("\n", from.offset); nl !== -1 && nl < offset;) {
    line++;
    lineStart = nl + 1;
    nl = text.indexOf("\n", nl + 1);
  }
  return { offset, line, column: Math.max(1, offset - lineStart + 1) };
}

/**
 * False for text with a byte order mark (an error anywhere but at the very start), a tab (the
 * yaml package refuses some tab placements js-yaml accepts) or a line that starts with `%` (a
 * directive, or something that looks like one): the yaml package reads those.
 */
function plainText(text: string): boolean {
  return (
    !text.includes("\ufeff") &&
    !text.includes("\t") &&
    !text.startsWith("%") &&
    !text.includes("\n%")
  );
}

/**
 * The documents of `text`, or undefined when the file is one for the yaml package (see the top
 * of this file). Never throws.
 */
export function parseWithEvents(
  text: string,
  limits: ParseLimits,
  again?: () => string | undefined,
): ParsedDocument[] | undefined {
  if (!plainText(text)) return undefined;
  let events: Event[];
  try {
    // Stricter than the depth check of tree.ts (a document nesting exactly maxDepth levels
    // goes there), so a document read here needs no check of its own.
    events = parseEvents(text, { maxDepth: limits.maxDepth });
  } catch {
    return undefined;
  }
  const plain = plainValues(text, events);
  if (plain === undefined) return undefined;
  const { values, roots, nullFields } = plain;
  if (roots.length !== values.length) return undefined;
  // A document that is a block scalar starts at its header, which the events do not record.
  if (roots.some((r) => isBlockScalar(events[r]))) return undefined;
  // Only documents with a value are released (validate.ts), so only they hold the events.
  const held = values.filter((v) => v !== null && v !== undefined).length;
  const file = new FileEvents(text, events, roots, held, nullFields, again);
  const ranges = documentRanges(text, events, roots);
  const docs: ParsedDocument[] = [];
  // Documents come in order: each start is counted on from the previous one.
  let counted: Position & { offset: number } = { offset: 0, line: 1, column: 1 };
  for (let index = 0; index < roots.length; index++) {
    const range = ranges[index]!;
    counted = positionFrom(text, counted, range[0]);
    const start = { line: counted.line, column: counted.column };
    const doc = new EventDocument(file, index, start, range);
    const value = values[index];
    if (value === null || value === undefined) doc.empty = true;
    else doc.value = value;
    docs.push(doc);
  }
  return docs;
}

/**
 * Document `index` of a file validated elsewhere, for positions only; undefined when the file
 * is not one this module reads.
 */
export function eventsDocument(
  text: string,
  index: number,
  start: Position,
): ParsedDocument | undefined {
  if (!plainText(text)) return undefined;
  let events: Event[];
  try {
    events = parseEvents(text, {});
  } catch {
    return undefined;
  }
  // The same test of a plain file as parseWithEvents's (the values themselves are not used).
  const roots = plainValues(text, events)?.roots;
  if (roots === undefined) return undefined;
  const root = roots[index];
  if (root === undefined) return undefined;
  const file = new FileEvents(text, events, roots, 1);
  return new EventDocument(file, index, start, documentRanges(text, events, roots)[index]!);
}

/**
 * Where each document starts (its root node) and ends (the line where the next one starts), so
 * that its text alone can be parsed again.
 */
function documentRanges(
  text: string,
  events: readonly Event[],
  roots: readonly number[],
): [number, number][] {
  const starts = roots.map((r) => {
    const e = events[r];
    return e === undefined ? -1 : nodeStart(e);
  });
  const ranges: [number, number][] = [];
  let end = text.length;
  for (let i = starts.length - 1; i >= 0; i--) {
    const start = starts[i]!;
    ranges[i] = [Math.max(0, start), end];
    if (start >= 0) end = text.lastIndexOf("\n", start - 1) + 1;
  }
  return ranges;
}

/** Where a node starts, as the yaml package counts it (the opening quote of a quoted scalar). */
function nodeStart(e: Event): number {
  if (e.type === SEQUENCE || e.type === MAPPING) return e.start;
  if (e.type !== SCALAR) return -1;
  if (e.style === SCALAR_STYLE.SINGLE_QUOTED || e.style === SCALAR_STYLE.DOUBLE_QUOTED) {
    return e.valueStart - 1;
  }
  return e.valueStart;
}

/** Index of the event after the node that starts at event `i`. */
function skipNode(events: readonly Event[], i: number): number {
  const type = events[i]?.type;
  if (type !== SEQUENCE && type !== MAPPING) return i + 1;
  let depth = 0;
  for (let j = i; j < events.length; j++) {
    const t = events[j]!.type;
    if (t === SEQUENCE || t === MAPPING) depth++;
    else if (t === POP && --depth === 0) return j + 1;
  }
  return events.length;
}

interface Found {
  /** Event index of the deepest node reached, and of the key that leads to it (-1: none). */
  node: number;
  key: number;
  complete: boolean;
}

/** The deepest node on the way to `pointer` that exists in the document at `root`. */
function walkEvents(text: string, events: readonly Event[], root: number, pointer: string): Found {
  let node = root;
  let key = -1;
  for (const segment of splitPointer(pointer)) {
    const e = events[node];
    if (e?.type === MAPPING) {
      let child = -1;
      for (let k = node + 1; k < events.length && events[k]!.type !== POP;) {
        const v = skipNode(events, k);
        const ke = events[k]!;
        if (ke.type === SCALAR && getScalarValue(text, ke) === segment) {
          key = k;
          child = v;
          break;
        }
        k = skipNode(events, v);
      }
      if (child === -1) return { node, key, complete: false };
      node = child;
    } else if (e?.type === SEQUENCE) {
      const wanted = /^(0|[1-9][0-9]*)$/.test(segment) ? Number(segment) : -1;
      let child = -1;
      for (let k = node + 1, i = 0; k < events.length && events[k]!.type !== POP; i++) {
        if (i === wanted) {
          child = k;
          break;
        }
        k = skipNode(events, k);
      }
      if (child === -1) return { node, key, complete: false };
      key = -1;
      node = child;
    } else {
      return { node, key, complete: false };
    }
  }
  return { node, key, complete: true };
}

function isBlockScalar(e: Event | undefined): boolean {
  return (
    e?.type === SCALAR &&
    (e.style === SCALAR_STYLE.LITERAL_BLOCK || e.style === SCALAR_STYLE.FOLDED_BLOCK)
  );
}

/** Scalars whose place the events do not give as the yaml package does: empty and block ones. */
function needsTree(e: Event | undefined): boolean {
  return e?.type === SCALAR && (e.valueStart === -1 || isBlockScalar(e));
}

/**
 * A literal block's lines map one to one to its text: they start on the line after the header,
 * at the indentation of the first line that is not blank.
 */
function literalOrigin(
  view: EventView,
  node: ScalarEvent,
  position: (offset: number) => Position,
): ScalarOrigin | undefined {
  const rest = view.text.slice(node.valueStart, node.valueEnd + 1);
  const first = /^(?:[ \t]*\r?\n)*( *)\S/.exec(rest);
  // A block of blank lines only: where it ends is counted differently; the tree decides.
  if (first === null) return undefined;
  const indent = first[1]?.length ?? 0;
  return { line: position(view.base + node.valueStart).line, column: indent + 1, lines: true };
}

/** Shared by every document (see NONE in reference-facts.ts): a run keeps its documents to its end. */
const NO_ISSUES: readonly ParseIssue[] = [];

/** A document read from a file's events (one class, not closures per document: files hold many). */
class EventDocument implements ParsedDocument {
  empty = false;
  value?: unknown;
  // A document read here has no syntax errors or warnings (those files go to the yaml package).
  readonly errors: readonly ParseIssue[] = NO_ISSUES;
  readonly warnings: readonly ParseIssue[] = NO_ISSUES;
  /** Once the file's events are released, this document's own, parsed again on first use. */
  private own: EventView | undefined;
  /** The yaml package's tree of this document, for the rare lookups events cannot answer. */
  private tree: ReturnType<typeof treeLocator> | undefined;

  // Numbers, not a Position and a tuple: a run keeps every document until its end.
  private readonly line: number;
  private readonly column: number;
  private readonly from: number;
  private readonly to: number;

  constructor(
    private readonly file: FileEvents,
    readonly index: number,
    start: Position,
    range: readonly [number, number],
  ) {
    this.line = start.line;
    this.column = start.column;
    [this.from, this.to] = range;
  }

  get nullFields(): boolean {
    return this.file.nullFields;
  }

  get start(): Position {
    return { line: this.line, column: this.column };
  }

  get range(): readonly [number, number] {
    return [this.from, this.to];
  }

  /** Line and column of file offset `offset`, inside this document, whose events are `v`. */
  private position(v: EventView, offset: number): Position {
    // Counted from the document's first line, whose number is known.
    const lineStart = v.text.lastIndexOf("\n", this.from - v.base - 1) + 1;
    const from = { offset: lineStart, line: this.line, column: 1 };
    const { line, column } = positionFrom(v.text, from, offset - v.base);
    return { line, column };
  }

  /** Undefined when the file's text is gone and the file changed since: see locate(). */
  private view(): EventView | undefined {
    if (this.own !== undefined) return this.own;
    const v = this.file.view(this.index, this.from, this.to);
    if (v !== undefined && !v.shared) this.own = v;
    return v;
  }

  private exact(): ReturnType<typeof treeLocator> | undefined {
    if (this.tree === undefined) {
      const text = this.file.text();
      if (text === undefined) return undefined;
      // From the start of the document's first line, so that its indentation is kept.
      const lineStart = text.lastIndexOf("\n", this.from - 1) + 1;
      const lines = this.file.lineIndex(text);
      const position = (offset: number) => lines.position(offset);
      this.tree = treeLocator(text, position, [lineStart, this.to], this.start);
    }
    return this.tree;
  }

  /** Where `pointer` is; the document's start when its file changed after it was validated. */
  locate(pointer: string, target: LocateTarget = "value"): Position {
    const v = this.view();
    if (v === undefined) return this.start;
    const found = walkEvents(v.text, v.events, v.root, pointer);
    const leaf = v.events[found.node]?.type === SCALAR;
    const at = found.key !== -1 && (target === "key" || !found.complete || !leaf);
    const chosen = v.events[at ? found.key : found.node];
    if (chosen === undefined) return this.start;
    if (needsTree(chosen)) return this.exact()?.locate(pointer, target) ?? this.start;
    return this.position(v, v.base + nodeStart(chosen));
  }

  scalarOrigin(pointer: string): ScalarOrigin | undefined {
    const v = this.view();
    if (v === undefined) return undefined;
    const found = walkEvents(v.text, v.events, v.root, pointer);
    const node = v.events[found.node];
    if (!found.complete || node?.type !== SCALAR) return undefined;
    const literal =
      node.style === SCALAR_STYLE.LITERAL_BLOCK
        ? literalOrigin(v, node, (offset) => this.position(v, offset))
        : undefined;
    if (literal !== undefined) return literal;
    if (needsTree(node)) return this.exact()?.scalarOrigin(pointer);
    return { ...this.position(v, v.base + nodeStart(node)), lines: false };
  }

  release(): void {
    this.value = undefined;
    this.file.release();
    this.tree?.release();
    this.own = undefined;
  }
}

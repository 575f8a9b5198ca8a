// Reads the outer structure of a JSON text without building it: where each element of an array
// and each member of an object is, so that a catalog's servers can be parsed one at a time
// (JSON.parse on each one's text) and dropped once converted, instead of holding the whole
// document. Everything between the elements (brackets, commas, colons, keys) is checked here,
// and every element is checked by JSON.parse when it is read, so a text is accepted exactly when
// JSON.parse accepts it. Errors never quote the text: it may be any file a source names.
import { McpfleetError } from "../../errors.js";

/** Where a value is in the text: [start, end). */
export interface Span {
  start: number;
  end: number;
}

/** An object's member: its key (decoded) and where its value is. */
export interface MemberSpan extends Span {
  key: string;
}

function notJson(): McpfleetError {
  return new McpfleetError("ERR_SYNC_FAILED", "registry data is not JSON");
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function skipSpace(text: string, at: number): number {
  for (;;) {
    const c = text.charCodeAt(at);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return at;
    at++;
  }
}

/** The end of the string starting (at its quote) at `at`. */
function stringEnd(text: string, at: number): number {
  // From quote to quote (indexOf is native and fast over long strings); a quote preceded by an
  // odd number of backslashes is escaped.
  for (let i = text.indexOf('"', at + 1); i !== -1; i = text.indexOf('"', i + 1)) {
    let slashes = 0;
    while (text.charCodeAt(i - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return i + 1;
  }
  throw notJson();
}

/**
 * The end of the value starting at `at` (after whitespace). Only its extent is found here; its
 * content is checked when it is parsed.
 */
export function valueEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === 0x22) return stringEnd(text, at);
  if (first !== 0x7b && first !== 0x5b) {
    // A number, true, false or null: up to the next delimiter.
    let i = at;
    while (i < text.length && !/[\s,\]}:]/.test(text[i]!)) i++;
    if (i === at) throw notJson();
    return i;
  }
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i) - 1;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  throw notJson();
}

/** Parses the value at `span`; throws the one error of this module when it is not JSON. */
export function parseSpan(text: string, span: Span): unknown {
  try {
    return JSON.parse(text.slice(span.start, span.end));
  } catch {
    throw notJson();
  }
}

/** The elements of the array whose `[` is at `at`, and the position after its `]`. */
export function arrayItems(text: string, at: number): { items: Span[]; end: number } {
  if (text.charCodeAt(at) !== 0x5b) throw notJson();
  const items: Span[] = [];
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === 0x5d) return { items, end: i + 1 };
  for (;;) {
    const end = valueEnd(text, i);
    items.push({ start: i, end });
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === 0x5d) return { items, end: i + 1 };
    if (c !== 0x2c) throw notJson();
    i = skipSpace(text, i + 1);
  }
}

/** Integer-like keys, which a JavaScript object orders first, ascending. */
function arrayIndex(key: string): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
  const n = Number(key);
  return n < 2 ** 32 - 1 ? n : undefined;
}

/**
 * The members of the object whose `{` is at `at`, as JSON.parse would leave them: a repeated
 * key keeps its first place and its last value, integer-like keys first in ascending order
 * (Object.entries of the parsed object lists the same keys in the same order).
 */
export function objectMembers(text: string, at: number): { members: MemberSpan[]; end: number } {
  if (text.charCodeAt(at) !== 0x7b) throw notJson();
  const byKey = new Map<string, MemberSpan>();
  let i = skipSpace(text, at + 1);
  let end: number;
  if (text.charCodeAt(i) === 0x7d) end = i + 1;
  else {
    for (;;) {
      if (text.charCodeAt(i) !== 0x22) throw notJson();
      const keyEnd = stringEnd(text, i);
      const key = parseSpan(text, { start: i, end: keyEnd }) as string;
      i = skipSpace(text, keyEnd);
      if (text.charCodeAt(i) !== 0x3a) throw notJson();
      i = skipSpace(text, i + 1);
      const valueStop = valueEnd(text, i);
      const member = byKey.get(key);
      if (member === undefined) byKey.set(key, { key, start: i, end: valueStop });
      else {
        // The value a later one replaces is checked now: nothing will read it.
        parseSpan(text, member);
        Object.assign(member, { start: i, end: valueStop });
      }
      i = skipSpace(text, valueStop);
      const c = text.charCodeAt(i);
      if (c === 0x7d) {
        end = i + 1;
        break;
      }
      if (c !== 0x2c) throw notJson();
      i = skipSpace(text, i + 1);
    }
  }
  const members = [...byKey.values()];
  const indexed = members
    .filter((m) => arrayIndex(m.key) !== undefined)
    .sort((a, b) => arrayIndex(a.key)! - arrayIndex(b.key)!);
  const named = members.filter((m) => arrayIndex(m.key) === undefined);
  return { members: [...indexed, ...named], end };
}

/**
 * Where the text's one value starts; `end` is where it must end, with nothing but whitespace
 * after it (checked by checkEnd once the caller has read the value).
 */
export function rootStart(text: string): number {
  // A byte order mark is not JSON: JSON.parse refuses it, so does this.
  const start = skipSpace(text, 0);
  if (start >= text.length) throw notJson();
  return start;
}

/** Throws unless only whitespace follows `end`. */
export function checkEnd(text: string, end: number): void {
  if (skipSpace(text, end) !== text.length) throw notJson();
}

// Values of plain documents built straight from js-yaml's events in one pass. js-yaml's own
// constructFromEvents is general (tags, anchors, merge keys, a tag object per node), and it
// took a quarter of a validate run; the files of a resource repository need none of that. Any
// document this cannot build exactly as js-yaml would with its core schema (an anchor, an alias,
// a tag, a directive, a key that is not a string, a duplicated key) makes it give up, and the
// caller reads the file with the yaml package instead.
import {
  EVENT_ID,
  NOT_RESOLVED,
  SCALAR_STYLE,
  type Event,
  type ScalarTagDefinition,
  boolCoreTag,
  floatCoreTag,
  getScalarValue,
  intCoreTag,
  nullCoreTag,
} from "js-yaml";

const { DOCUMENT, SEQUENCE, MAPPING, SCALAR, POP } = EVENT_ID;

type Mapping = Record<string, unknown>;

/** The documents of a file: each one's value, and the index of its root event. */
export interface PlainValues {
  values: unknown[];
  roots: number[];
  /** Whether some mapping maps a key to null (the schema level then drops such fields). */
  nullFields: boolean;
}

/**
 * The core schema's implicit tags in its order, by the first characters they may start with:
 * a plain scalar starting with any other character is a string.
 */
const IMPLICIT_BY_FIRST_CHAR = new Map<string, ScalarTagDefinition[]>();
for (const tag of [nullCoreTag, boolCoreTag, intCoreTag, floatCoreTag] as ScalarTagDefinition[]) {
  for (const c of tag.implicitFirstChars ?? []) {
    const tags = IMPLICIT_BY_FIRST_CHAR.get(c) ?? [];
    tags.push(tag);
    IMPLICIT_BY_FIRST_CHAR.set(c, tags);
  }
}

/** A plain scalar's value under the core schema: null, a boolean, a number or the string. */
export function plainScalarValue(source: string): unknown {
  const tags = IMPLICIT_BY_FIRST_CHAR.get(source.charAt(0));
  if (tags === undefined) return source;
  for (const tag of tags) {
    const value = tag.resolve(source, false, tag.tagName);
    if (value !== NOT_RESOLVED) return value;
  }
  return source;
}

/**
 * The values of `events` (parsed from `text`), or undefined when a document is not plain (see
 * the top of this file).
 */
/** The shortest substring V8 keeps as a view of the string it was cut from (a sliced string). */
const SLICED_MIN_LENGTH = 13;

/**
 * `s` with characters of its own. The strings of a parsed value are cut from its file's text,
 * and V8 keeps one of 13 characters or more as a view of that text: a single value kept past
 * its file (a name, an image, an audience the reference level holds to the end of the run)
 * would keep the whole text, on 10,000 resources every file's. Appending a character and cutting
 * it off again makes V8 copy. For what is kept, not for every value: copying each long scalar
 * of a run costs more than it saves.
 */
export function detached(s: string): string {
  return s.length < SLICED_MIN_LENGTH ? s : `${s} `.slice(0, -1);
}

/** A copy of a parsed value whose strings are detached(), for one kept past its file. */
export function detachedValue(v: unknown): unknown {
  if (typeof v === "string") return detached(v);
  if (Array.isArray(v)) return v.map(detachedValue);
  if (typeof v !== "object" || v === null) return v;
  const out: Record<string, unknown> = {};
  // Keys need no copy: V8 keeps property names in its table of strings of their own.
  for (const [k, x] of Object.entries(v)) out[k] = detachedValue(x);
  return out;
}

export function plainValues(text: string, events: readonly Event[]): PlainValues | undefined {
  const values: unknown[] = [];
  const roots: number[] = [];
  let nullFields = false;
  // The open collections, innermost last; `key` is the key read in the innermost mapping and
  // waiting for its value (undefined when the next scalar is a key).
  const open: (Mapping | unknown[])[] = [];
  const keys: (string | undefined)[] = [];
  let top: Mapping | unknown[] | undefined;
  let inMapping = false;
  let key: string | undefined;
  let document: unknown;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    let value: unknown;
    switch (e.type) {
      case DOCUMENT:
        if (e.directives.length > 0) return undefined;
        roots.push(i + 1);
        document = undefined;
        continue;
      case POP:
        if (top === undefined) {
          values.push(document);
          continue;
        }
        if (inMapping && key !== undefined) return undefined;
        top = open.pop();
        key = keys.pop();
        inMapping = top !== undefined && !Array.isArray(top);
        continue;
      case SCALAR:
        if (e.anchorStart !== -1 || e.tagStart !== -1) return undefined;
        value = getScalarValue(text, e);
        if (e.style === SCALAR_STYLE.PLAIN) value = plainScalarValue(value as string);
        break;
      case MAPPING:
      case SEQUENCE:
        if (e.anchorStart !== -1 || e.tagStart !== -1) return undefined;
        value = e.type === MAPPING ? {} : [];
        break;
      default:
        return undefined; // an alias
    }
    // A new node: the document's root, an item, a key or a key's value.
    if (top === undefined) {
      document = value;
    } else if (!inMapping) {
      (top as unknown[]).push(value);
    } else if (key === undefined) {
      if (typeof value !== "string" || value === "__proto__" || Object.hasOwn(top, value)) {
        return undefined;
      }
      key = value;
      continue;
    } else {
      if (value === null) nullFields = true;
      (top as Mapping)[key] = value;
      key = undefined;
    }
    if (typeof value === "object" && value !== null) {
      if (top !== undefined) {
        open.push(top);
        keys.push(key);
      }
      top = value as Mapping | unknown[];
      inMapping = e.type === MAPPING;
      key = undefined;
    }
  }
  return { values, roots, nullFields };
}

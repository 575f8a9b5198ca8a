// Kubernetes objects as YAML, the bytes every output of synth, install and the dir: target is
// made of. A writer for JSON data that writes exactly what the `yaml` package's stringify writes
// (lineWidth 0, no aliases), several times faster: structure is written directly, and only
// scalars that are not obviously plain are given to the library, one at a time, memoised.
// test/synth/yaml.test.ts compares the two on every example and on edge cases.
import { stringify } from "yaml";
import type { KubeObject } from "./model.js";

/** Multi-document YAML of objects, in the given order (the bytes `yaml`'s stringify writes). */
export function toYaml(objects: KubeObject[]): string {
  return objects.map((o) => yamlDocument(o)).join("---\n");
}

const PLAIN = /^[A-Za-z][A-Za-z0-9._/-]*$/;
const CORE_WORDS = new Set([
  "true",
  "True",
  "TRUE",
  "false",
  "False",
  "FALSE",
  "null",
  "Null",
  "NULL",
]);
const scalarCache = new Map<string, string>();
const keyCache = new Map<string, string>();

/**
 * The library's rendering of one string as a mapping value: a plain or quoted scalar, or a block
 * scalar header (`|`, `|-`, `|+`) followed by its lines, indented by two spaces.
 */
function stringScalar(value: string): string {
  if (PLAIN.test(value) && !CORE_WORDS.has(value)) return value;
  let out = scalarCache.get(value);
  if (out === undefined) {
    out = stringify({ k: value }, { lineWidth: 0 }).slice(3, -1);
    if (scalarCache.size > 50_000) scalarCache.clear();
    scalarCache.set(value, out);
  }
  return out;
}

function keyScalar(key: string): string {
  if (PLAIN.test(key) && !CORE_WORDS.has(key)) return key;
  let out = keyCache.get(key);
  if (out === undefined) {
    const text = stringify({ [key]: 0 }, { lineWidth: 0 });
    out = text.slice(0, text.lastIndexOf(": 0\n"));
    keyCache.set(key, out);
  }
  return out;
}

/** A scalar after "key: " or "- "; block scalars get their lines indented under `indent`. */
function scalar(value: unknown, indent: string): string {
  if (value === null) return "null\n";
  switch (typeof value) {
    case "boolean":
      return `${value}\n`;
    case "number":
      return Number.isInteger(value) ? `${value}\n` : `${stringify(value).slice(0, -1)}\n`;
    case "string": {
      const s = stringScalar(value);
      if (s.startsWith("|") || s.startsWith(">")) {
        const [header, ...lines] = s.split("\n");
        return `${header}\n${lines.map((l) => (l === "" ? "" : indent + l)).join("\n")}\n`;
      }
      return `${s}\n`;
    }
    default:
      return `${stringify(value).slice(0, -1)}\n`;
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function mapLines(obj: Record<string, unknown>, indent: string): string {
  let out = "";
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (value === undefined) continue;
    out += `${indent}${keyScalar(key)}:`;
    out += nested(value, indent);
  }
  return out;
}

/** What follows "key:" (or, for sequence items, "- " with `first`). */
function nested(value: unknown, indent: string): string {
  if (Array.isArray(value)) {
    return value.length === 0 ? " []\n" : `\n${seqLines(value, `${indent}  `)}`;
  }
  if (isMap(value)) {
    return Object.keys(value).length === 0 ? " {}\n" : `\n${mapLines(value, `${indent}  `)}`;
  }
  return ` ${scalar(value, indent)}`;
}

function seqLines(items: unknown[], indent: string): string {
  let out = "";
  const inner = `${indent}  `;
  for (const item of items) {
    out += `${indent}- `;
    if (Array.isArray(item)) {
      out += item.length === 0 ? "[]\n" : seqLines(item, inner).slice(inner.length);
    } else if (isMap(item)) {
      out += Object.keys(item).length === 0 ? "{}\n" : mapLines(item, inner).slice(inner.length);
    } else {
      out += scalar(item === undefined ? null : item, indent);
    }
  }
  return out;
}

/** One document: a mapping at the top level (every Kubernetes object). */
export function yamlDocument(value: unknown): string {
  if (isMap(value) && Object.keys(value).length > 0) return mapLines(value, "");
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** Keys that JavaScript orders as numbers before all others, whatever order they were set in. */
const INDEX_KEY = /^(0|[1-9][0-9]*)$/;

/** What sortedKeys gives for a value whose order an object cannot hold. */
const UNSORTABLE = Symbol("unsortable");

/** `value` with every mapping's keys in code-unit order, or UNSORTABLE. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(sortedKeys);
    return items.includes(UNSORTABLE) ? UNSORTABLE : items;
  }
  if (!isMap(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (value[key] === undefined) continue;
    if (INDEX_KEY.test(key)) return UNSORTABLE;
    const item = sortedKeys(value[key]);
    if (item === UNSORTABLE) return UNSORTABLE;
    out[key] = item;
  }
  return out;
}

/**
 * One document with every mapping's keys sorted: what the library writes with `sortMapEntries`
 * (a configuration file whose equal contents give equal bytes). A mapping with a key such as
 * "10", which an object would put before "9", is left to the library.
 */
export function sortedYamlDocument(value: unknown): string {
  const sorted = sortedKeys(value);
  return sorted === UNSORTABLE
    ? stringify(value, { lineWidth: 0, sortMapEntries: true, aliasDuplicateObjects: false })
    : yamlDocument(sorted);
}

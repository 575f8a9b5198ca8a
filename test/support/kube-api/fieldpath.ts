// Field paths and field sets as structured-merge-diff tracks them: a path is a sequence of
// elements `f:name` (a map field), `k:{"name":"x"}` (an associative-list item by its keys) and
// `v:"x"` (a set-list item); a set serializes to the FieldsV1 trie of managedFields.
import { isRecord } from "./types.js";

/** How values at one place in an object merge: lists by type and keys, maps granular or atomic. */
export interface Shape {
  listType: "atomic" | "set" | "map";
  listKeys: readonly string[];
  atomicMap: boolean;
  field(name: string): Shape;
  items(): Shape;
}

export type FieldSet = Set<string>;

const SEP = "\u0001";

export function joinPath(prefix: string, element: string): string {
  return prefix === "" ? element : prefix + SEP + element;
}

export function splitPath(path: string): string[] {
  return path === "" ? [] : path.split(SEP);
}

export function isAncestor(ancestor: string, path: string): boolean {
  return path.startsWith(ancestor + SEP);
}

/** JSON with object keys sorted, so equal values compare equal. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function itemKey(item: unknown, keys: readonly string[]): string {
  const picked: Record<string, unknown> = {};
  for (const key of [...keys].sort()) {
    if (isRecord(item) && item[key] !== undefined) picked[key] = item[key];
  }
  return `k:${canonical(picked)}`;
}

/**
 * Every member path of `value` with a signature of its value: leaves (scalars, atomic lists and
 * maps, empty containers) with their JSON, list items with "" (the item itself).
 */
export function flatten(
  value: unknown,
  shape: Shape,
  prefix = "",
  out = new Map<string, string>(),
) {
  if (isRecord(value) && !shape.atomicMap) {
    const keys = Object.keys(value);
    if (keys.length === 0 && prefix !== "") out.set(prefix, "{}");
    for (const key of keys)
      flatten(value[key], shape.field(key), joinPath(prefix, `f:${key}`), out);
    return out;
  }
  if (Array.isArray(value) && shape.listType !== "atomic" && value.length > 0) {
    const items = shape.items();
    for (const item of value) {
      if (shape.listType === "set") {
        out.set(joinPath(prefix, `v:${canonical(item)}`), "");
        continue;
      }
      const path = joinPath(prefix, itemKey(item, shape.listKeys));
      out.set(path, "");
      flatten(item, items, path, out);
    }
    return out;
  }
  if (prefix !== "") out.set(prefix, canonical(value));
  return out;
}

/** Member paths of `value` (the field set an applied configuration claims). */
export function fieldSetOf(value: unknown, shape: Shape): FieldSet {
  return new Set(flatten(value, shape).keys());
}

export function toFieldsV1(set: FieldSet): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const path of [...set].sort()) {
    let node = root;
    for (const element of splitPath(path)) {
      node = (node[element] ??= {}) as Record<string, unknown>;
    }
    node["."] = {};
  }
  const tidy = (node: Record<string, unknown>): void => {
    const keys = Object.keys(node);
    if (keys.length === 1 && keys[0] === ".") {
      delete node["."];
      return;
    }
    for (const key of keys) if (key !== ".") tidy(node[key] as Record<string, unknown>);
  };
  for (const key of Object.keys(root)) tidy(root[key] as Record<string, unknown>);
  return root;
}

export function fromFieldsV1(fields: unknown): FieldSet {
  const set: FieldSet = new Set();
  const walk = (node: unknown, prefix: string): void => {
    if (!isRecord(node)) return;
    const keys = Object.keys(node);
    if (keys.length === 0 && prefix !== "") set.add(prefix);
    for (const key of keys) {
      if (key === ".") set.add(prefix);
      else walk(node[key], joinPath(prefix, key));
    }
  };
  walk(fields, "");
  return set;
}

function matchesElement(item: unknown, element: string, shape: Shape): boolean {
  if (element.startsWith("k:")) return itemKey(item, shape.listKeys) === element;
  if (element.startsWith("v:")) return `v:${canonical(item)}` === element;
  return false;
}

/** Walks to the parent container of `path`'s last element. */
function locate(
  root: unknown,
  path: string,
  shape: Shape,
): { parent: unknown; element: string; shape: Shape } | undefined {
  const elements = splitPath(path);
  let node: unknown = root;
  let current = shape;
  for (let i = 0; i < elements.length - 1; i++) {
    const element = elements[i]!;
    if (element.startsWith("f:")) {
      const name = element.slice(2);
      if (!isRecord(node) || !(name in node)) return undefined;
      node = node[name];
      current = current.field(name);
    } else {
      if (!Array.isArray(node)) return undefined;
      const item: unknown = (node as unknown[]).find((it) => matchesElement(it, element, current));
      if (item === undefined) return undefined;
      node = item;
      current = current.items();
    }
  }
  const element = elements[elements.length - 1];
  return element === undefined ? undefined : { parent: node, element, shape: current };
}

export function getPath(root: unknown, path: string, shape: Shape): unknown {
  const at = locate(root, path, shape);
  if (at === undefined) return undefined;
  if (at.element.startsWith("f:")) {
    return isRecord(at.parent) ? at.parent[at.element.slice(2)] : undefined;
  }
  if (!Array.isArray(at.parent)) return undefined;
  return at.parent.find((item) => matchesElement(item, at.element, at.shape));
}

/** Removes the node at `path` from `root`; returns whether something was removed. */
export function removePath(root: unknown, path: string, shape: Shape): boolean {
  const at = locate(root, path, shape);
  if (at === undefined) return false;
  if (at.element.startsWith("f:")) {
    const name = at.element.slice(2);
    if (!isRecord(at.parent) || !(name in at.parent)) return false;
    delete at.parent[name];
    return true;
  }
  if (!Array.isArray(at.parent)) return false;
  const index = at.parent.findIndex((item) => matchesElement(item, at.element, at.shape));
  if (index < 0) return false;
  at.parent.splice(index, 1);
  return true;
}

/** After a removal at `path`, deletes the maps above it that it left empty, unless still owned. */
export function dropEmptyAncestors(root: unknown, path: string, keep: FieldSet, shape: Shape) {
  const elements = splitPath(path);
  for (let depth = elements.length - 1; depth >= 1; depth--) {
    if (!elements[depth - 1]!.startsWith("f:")) return;
    const ancestor = elements.slice(0, depth).join(SEP);
    const value = getPath(root, ancestor, shape);
    if (!isRecord(value) || Object.keys(value).length > 0 || keep.has(ancestor)) return;
    removePath(root, ancestor, shape);
  }
}

/** The shape of values nothing is known about: granular maps, atomic lists. */
export const UNKNOWN_SHAPE: Shape = {
  listType: "atomic",
  listKeys: [],
  atomicMap: false,
  field: () => UNKNOWN_SHAPE,
  items: () => UNKNOWN_SHAPE,
};

/** Human form of a path for conflict messages: `.spec.containers[name="app"].image`. */
export function describePath(path: string): string {
  return splitPath(path)
    .map((element) => {
      if (element.startsWith("f:")) return `.${element.slice(2)}`;
      if (element.startsWith("k:")) {
        const keys = JSON.parse(element.slice(2)) as Record<string, unknown>;
        const inner = Object.entries(keys)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(",");
        return `[${inner}]`;
      }
      return `[=${element.slice(2)}]`;
    })
    .join("");
}

// Non-apply patches: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and an approximation of
// strategic merge patch (merge patch that merges associative lists by their keys and honours
// `$patch: delete` on list items) for built-in kinds.
import { ApiError, badRequest } from "./errors.js";
import { type Shape, canonical, itemKey } from "./fieldpath.js";
import { clone, isRecord } from "./types.js";

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

export function strategicMergePatch(target: unknown, patch: unknown, shape: Shape): unknown {
  if (isRecord(patch) && patch.$patch === "replace") {
    const copy = { ...patch };
    delete copy.$patch;
    return clone(copy);
  }
  if (isRecord(patch) && !shape.atomicMap) {
    const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
    for (const [key, value] of Object.entries(patch)) {
      if (key.startsWith("$")) continue;
      if (value === null) delete out[key];
      else out[key] = strategicMergePatch(out[key], value, shape.field(key));
    }
    return out;
  }
  if (Array.isArray(patch) && Array.isArray(target) && shape.listType === "map") {
    const out = [...(target as unknown[])];
    for (const item of patch as unknown[]) {
      const key = itemKey(item, shape.listKeys);
      const index = out.findIndex((x) => itemKey(x, shape.listKeys) === key);
      if (isRecord(item) && item.$patch === "delete") {
        if (index >= 0) out.splice(index, 1);
      } else if (index >= 0) out[index] = strategicMergePatch(out[index], item, shape.items());
      else out.push(strategicMergePatch(undefined, item, shape.items()));
    }
    return out;
  }
  if (Array.isArray(patch) && Array.isArray(target) && shape.listType === "set") {
    const out = [...(target as unknown[])];
    for (const item of patch as unknown[]) {
      if (!out.some((x) => canonical(x) === canonical(item))) out.push(clone(item));
    }
    return out;
  }
  return clone(patch);
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function pointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw badRequest(`invalid JSON pointer: ${path}`);
  return path
    .slice(1)
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function parentOf(root: unknown, tokens: string[], path: string): [unknown, string] {
  let node = root;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isRecord(node)) node = node[token];
    else node = undefined;
    if (node === undefined)
      throw badRequest(
        `the server rejected our request due to an error in our request: doc is missing path: "${path}"`,
      );
  }
  return [node, tokens[tokens.length - 1] ?? ""];
}

function getAt(root: unknown, path: string): unknown {
  let node = root;
  for (const token of pointer(path)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isRecord(node)) node = node[token];
    else return undefined;
  }
  return node;
}

function removeAt(root: unknown, path: string): unknown {
  const [parent, last] = parentOf(root, pointer(path), path);
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (!(index >= 0 && index < parent.length)) throw badRequest(`doc is missing path: "${path}"`);
    return parent.splice(index, 1)[0];
  }
  if (!isRecord(parent) || !(last in parent)) throw badRequest(`doc is missing path: "${path}"`);
  const value = parent[last];
  delete parent[last];
  return value;
}

function addAt(root: unknown, path: string, value: unknown, replace: boolean): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return clone(value);
  const [parent, last] = parentOf(root, tokens, path);
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last);
    if (!(index >= 0 && index <= parent.length)) throw badRequest(`doc is missing path: "${path}"`);
    if (replace) parent[index] = clone(value);
    else parent.splice(index, 0, clone(value));
  } else if (isRecord(parent)) {
    if (replace && !(last in parent)) throw badRequest(`doc is missing key: "${path}"`);
    parent[last] = clone(value);
  } else throw badRequest(`doc is missing path: "${path}"`);
  return root;
}

export function jsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw badRequest("json patch must be a list of operations");
  let doc = clone(target);
  for (const raw of operations as unknown[]) {
    if (!isRecord(raw) || typeof raw.op !== "string" || typeof raw.path !== "string") {
      throw badRequest("invalid json patch operation");
    }
    const op = raw as unknown as Operation;
    switch (op.op) {
      case "add":
        doc = addAt(doc, op.path, op.value, false);
        break;
      case "replace":
        doc = addAt(doc, op.path, op.value, true);
        break;
      case "remove":
        removeAt(doc, op.path);
        break;
      case "move":
        doc = addAt(doc, op.path, removeAt(doc, op.from ?? ""), false);
        break;
      case "copy":
        doc = addAt(doc, op.path, getAt(doc, op.from ?? ""), false);
        break;
      case "test":
        if (canonical(getAt(doc, op.path)) !== canonical(op.value)) {
          throw new ApiError(422, "Invalid", `testing value ${op.path} failed`);
        }
        break;
      default:
        throw badRequest(`unexpected op ${op.op}`);
    }
  }
  return doc;
}

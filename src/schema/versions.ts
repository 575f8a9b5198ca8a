// Per-version schemas. The schemas describe v1alpha1, the storage version the spec defines; where
// v1beta1 (the reference operator's newer version, served too) differs, a node carries
// `x-mcpfleet-v1beta1`: the keywords that replace the node's own in the v1beta1 form, except that
// a mark's `properties` are merged by name and its `x-kubernetes-validations` added to the node's
// (so a mark adds a property or a rule without repeating the others). A mark may sit in any file. A
// file with marks, and every file that refers to one (transitively), gets a v1beta1 copy of its own
// (`crd/<kind>.v1beta1.yaml`, `config/authtypes.v1beta1.yaml`, next to the original so relative
// references resolve alike) whose references point at the other copies; a kind has a v1beta1 form
// exactly when its file has such a copy.
import { type Kind, SCHEMA_BASE, kindSchemaId } from "./kinds.js";
import type { SchemaFile, SchemaNode } from "./load.js";
import { isObject } from "../json.js";

/** The keyword of a node's v1beta1 replacement keywords. */
export const V1BETA1_KEYWORD = "x-mcpfleet-v1beta1";

export const V1BETA1_API_VERSION = "toolhive.stacklok.dev/v1beta1";

/** The `$id` of a kind's v1beta1 form (which exists only when the kind differs in v1beta1). */
export function v1beta1SchemaId(kind: Kind): string {
  return `${SCHEMA_BASE}crd/${kind.toLowerCase()}.v1beta1.yaml`;
}

function mentionsKeyword(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(mentionsKeyword);
  if (!isObject(node)) return false;
  return V1BETA1_KEYWORD in node || Object.values(node).some(mentionsKeyword);
}

/** The keywords of a node in its v1beta1 form: the mark's replace the node's own. */
function mergedMark(own: SchemaNode, mark: SchemaNode): SchemaNode {
  const merged = { ...own, ...mark };
  if (isObject(own.properties) && isObject(mark.properties)) {
    merged.properties = { ...own.properties, ...mark.properties };
  }
  const rules = "x-kubernetes-validations";
  const ownRules: unknown = own[rules];
  const markRules: unknown = mark[rules];
  if (Array.isArray(ownRules) && Array.isArray(markRules)) {
    merged[rules] = [...(ownRules as unknown[]), ...(markRules as unknown[])];
  }
  return merged;
}

/** The file part of a `$ref`, resolved against the referring file's `$id` ("" for `#...`). */
function refFile(ref: string, baseId: string): string {
  const [target = ""] = ref.split("#");
  return target === "" ? "" : new URL(target, baseId).href;
}

/** `foo/bar.yaml` -> `foo/bar.v1beta1.yaml` (ids and paths alike). */
function v1beta1Name(name: string): string {
  return name.replace(/\.yaml$/, ".v1beta1.yaml");
}

/** Every `$ref` (file part) a schema node makes, resolved against `baseId`. */
function referencedFiles(node: unknown, baseId: string, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const n of node) referencedFiles(n, baseId, out);
  else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") {
        const file = refFile(value, baseId);
        if (file !== "") out.add(file);
      } else referencedFiles(value, baseId, out);
    }
  }
  return out;
}

/** The ids of the files that differ in v1beta1: marked, or referring to one that differs. */
function differingFiles(files: readonly SchemaFile[]): Set<string> {
  const differ = new Set(files.filter((f) => mentionsKeyword(f.schema)).map((f) => f.id));
  const refs = new Map(files.map((f) => [f.id, referencedFiles(f.schema, f.id)]));
  for (let grew = true; grew;) {
    grew = false;
    for (const f of files) {
      if (differ.has(f.id) || ![...(refs.get(f.id) ?? [])].some((id) => differ.has(id))) continue;
      differ.add(f.id);
      grew = true;
    }
  }
  return differ;
}

/**
 * A copy of `node` in its v1beta1 form: each marked node's keywords replaced by its mark, and
 * each reference into a differing file pointed at that file's v1beta1 copy.
 */
function v1beta1Form(node: unknown, baseId: string, differ: ReadonlySet<string>): unknown {
  if (Array.isArray(node)) return node.map((n) => v1beta1Form(n, baseId, differ));
  if (!isObject(node)) return node;
  const { [V1BETA1_KEYWORD]: mark, ...own } = node;
  const merged = isObject(mark) ? mergedMark(own, mark) : own;
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(merged)) {
    if (key === "$ref" && typeof value === "string" && differ.has(refFile(value, baseId))) {
      const [target = "", fragment] = value.split("#");
      out.$ref = v1beta1Name(target) + (fragment === undefined ? "" : `#${fragment}`);
    } else out[key] = v1beta1Form(value, baseId, differ);
  }
  return out;
}

/** The v1beta1 copies of the files that differ in that version (kinds' and others'). */
export function v1beta1Files(files: readonly SchemaFile[]): SchemaFile[] {
  const differ = differingFiles(files);
  return files
    .filter((f) => differ.has(f.id))
    .map((f) => {
      const id = v1beta1Name(f.id);
      const schema = { ...(v1beta1Form(f.schema, f.id, differ) as SchemaNode), $id: id };
      return { id, path: v1beta1Name(f.path), schema };
    });
}

/**
 * The files as the generated types describe them: a type must hold either version, so a marked
 * node has the properties of both and requires only what both require.
 */
export function typeForms(files: readonly SchemaFile[]): SchemaFile[] {
  const widen = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(widen);
    if (!isObject(node)) return node;
    const { [V1BETA1_KEYWORD]: mark, ...own } = node;
    const out: SchemaNode = {};
    for (const [key, value] of Object.entries(own)) out[key] = widen(value);
    if (!isObject(mark)) return out;
    if (isObject(mark.properties)) {
      // v1alpha1's form of a property both versions have (the wider one), then v1beta1's own.
      const props = isObject(out.properties) ? out.properties : {};
      const extra = Object.entries(mark.properties).filter(([k]) => !(k in props));
      out.properties = { ...props, ...(widen(Object.fromEntries(extra)) as SchemaNode) };
    }
    if (Array.isArray(own.required) && Array.isArray(mark.required)) {
      const both = new Set(mark.required);
      out.required = own.required.filter((r) => both.has(r));
    } else if (Array.isArray(own.required) && "required" in mark) delete out.required;
    return out;
  };
  return files.map((f) => ({ ...f, schema: widen(f.schema) as SchemaNode }));
}

/** `files` and the v1beta1 forms of the kinds that differ, memoised per set of files. */
const withForms = new WeakMap<readonly SchemaFile[], readonly SchemaFile[]>();

export function withVersionForms(files: readonly SchemaFile[]): readonly SchemaFile[] {
  let all = withForms.get(files);
  if (all === undefined) withForms.set(files, (all = [...files, ...v1beta1Files(files)]));
  return all;
}

/** The schema `$id` a resource of `kind` written as `apiVersion` is validated against. */
export function kindSchemaIdFor(
  kind: Kind,
  apiVersion: unknown,
  forms: ReadonlySet<string>,
): string {
  if (apiVersion === V1BETA1_API_VERSION) {
    const id = v1beta1SchemaId(kind);
    if (forms.has(id)) return id;
  }
  return kindSchemaId(kind);
}

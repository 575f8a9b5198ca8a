// Per-version schemas. A kind's schema describes v1alpha1, the storage version the spec defines;
// where v1beta1 (the reference operator's newer version, served too) differs, a node of the
// kind's file carries `x-mcpfleet-v1beta1`: the keywords that replace the node's own in the
// v1beta1 form. The v1beta1 form is a schema file of its own (`crd/<kind>.v1beta1.yaml`, next
// to the kind's, so relative references resolve alike), made for the kinds that differ only.
import { type Kind, KINDS, SCHEMA_BASE, kindSchemaId } from "./kinds.js";
import type { SchemaFile, SchemaNode } from "./load.js";

/** The keyword of a node's v1beta1 replacement keywords. */
export const V1BETA1_KEYWORD = "x-mcpfleet-v1beta1";

export const V1BETA1_API_VERSION = "toolhive.stacklok.dev/v1beta1";

/** The `$id` of a kind's v1beta1 form (which exists only when the kind differs in v1beta1). */
export function v1beta1SchemaId(kind: Kind): string {
  return `${SCHEMA_BASE}crd/${kind.toLowerCase()}.v1beta1.yaml`;
}

function isNode(value: unknown): value is SchemaNode {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function mentionsKeyword(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(mentionsKeyword);
  if (!isNode(node)) return false;
  return V1BETA1_KEYWORD in node || Object.values(node).some(mentionsKeyword);
}

/** A copy of `node` in its v1beta1 form: each marked node's keywords replaced by its marks. */
function v1beta1Form(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(v1beta1Form);
  if (!isNode(node)) return node;
  const { [V1BETA1_KEYWORD]: replacement, ...own } = node;
  const merged = isNode(replacement) ? { ...own, ...replacement } : own;
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(merged)) out[key] = v1beta1Form(value);
  return out;
}

/** The v1beta1 forms of the kinds whose schema marks a difference. */
export function v1beta1Files(files: readonly SchemaFile[]): SchemaFile[] {
  const out: SchemaFile[] = [];
  for (const kind of KINDS) {
    const file = files.find((f) => f.id === kindSchemaId(kind));
    if (file === undefined || !mentionsKeyword(file.schema)) continue;
    const id = v1beta1SchemaId(kind);
    const schema = { ...(v1beta1Form(file.schema) as SchemaNode), $id: id };
    out.push({ id, path: `crd/${kind.toLowerCase()}.v1beta1.yaml`, schema });
  }
  return out;
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

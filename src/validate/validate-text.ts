// One file's text through the schema and CEL levels: its YAML documents, each document (or
// each item of a List) as a unit, each unit dispatched by what it is: one of our kinds, a
// registry-server configuration, registry data, a kind a CRD given defines, or another
// project's kind. Bad input is never thrown: every problem is an issue of the unit.
import { API_GROUP, KINDS, asKind } from "../schema/index.js";
import { didYouMean } from "../suggest.js";
import type { Context } from "./context.js";
import { type ForeignVerdict, foreignVerdict } from "./foreign.js";
import { KUSTOMIZE_HINT, notAResource, templateIssue } from "./hints.js";
import { validateOwn } from "./own-resource.js";
import { validateRegistryConfig } from "./registry-config-checks.js";
import { looksLikeRegistryConfig, looksLikeRegistryData } from "./registry-config.js";
import { isObject } from "../json.js";
import { type Unit, addIssue, addPositionedIssue, describeValue, newUnit } from "./resource.js";
import { hasPodTemplate, podTemplateRuntimeIssues } from "./runtime-rules.js";
import type { Issue, ResourceResult, ValidateOptions } from "./types.js";
import { addRuntimeIssues, addSchemaIssues } from "./unit-issues.js";
import { type ParsedDocument, parseDocuments } from "../yaml/documents.js";
import { detached } from "../yaml/values.js";

/** A result for a whole file that could not be read or is not text. */
export function fileResult(file: string, message: string, level: "io" | "parse"): ResourceResult {
  return {
    file,
    line: 0,
    kind: "",
    namespace: "",
    name: "",
    valid: false,
    skipped: false,
    errors: [{ path: "", line: 0, column: 0, message, level }],
    warnings: [],
  };
}

/** `again`: the file's text read once more, for lookups after its validation (see ReadOutcome). */
export async function validateText(
  file: string,
  text: string,
  ctx: Context,
  again?: () => string | undefined,
): Promise<ResourceResult[]> {
  const results: ResourceResult[] = [];
  const docs = parseDocuments(text, ctx.options, again);
  // Index loops: this function can await, and iterators kept across an await are allocated.
  for (let d = 0; d < docs.length; d++) {
    const doc = docs[d]!;
    if (doc.empty) continue;
    if (doc.value === undefined) {
      results.push(unparsedResult(file, doc, text));
      continue;
    }
    const units = unitsOf(file, doc);
    for (let u = 0; u < units.length; u++) {
      const unit = units[u]!;
      if (doc.warnings.length > 0) addIssues(unit, doc.warnings, "warning");
      const waiting = validateUnit(unit, ctx);
      if (waiting !== undefined) await waiting;
      results.push(unit.result);
    }
    doc.release();
  }
  return results;
}

/**
 * The result of a document that did not parse: its syntax errors and warnings, or for a
 * template (a Helm chart's file) the one error that says so.
 */
function unparsedResult(file: string, doc: ParsedDocument, text: string): ResourceResult {
  const unit = newUnit(file, doc, "", undefined, doc.start);
  const template = doc.errors.length > 0 ? templateIssue(text, doc.range) : undefined;
  addIssues(unit, template === undefined ? doc.errors : [template], "error");
  addIssues(unit, doc.warnings, "warning");
  return unit.result;
}

function addIssues(unit: Unit, issues: readonly Issue[], severity: "error" | "warning"): void {
  for (const issue of issues) addPositionedIssue(unit, issue, severity);
}

/** A document, or each item of a List document (`kind: List` or `<Kind>List` with items). */
function unitsOf(file: string, doc: ParsedDocument): Unit[] {
  const value = doc.value;
  if (
    isObject(value) &&
    typeof value.kind === "string" &&
    value.kind.endsWith("List") &&
    Array.isArray(value.items)
  ) {
    return value.items.map((item: unknown, i) => {
      const prefix = `/items/${i}`;
      return newUnit(file, doc, prefix, item, doc.locate(prefix));
    });
  }
  return [newUnit(file, doc, "", value, doc.start)];
}

/**
 * Validates one unit; returns a promise only for work that waits (`--kube` schemas), so that
 * the usual run does not pass every resource through the microtask queue.
 */
function validateUnit(unit: Unit, ctx: Context): Promise<void> | undefined {
  const value = unit.value;
  if (!isObject(value)) {
    addIssue(
      unit,
      "",
      `a resource must be a mapping with apiVersion, kind and metadata, not ${describeValue(value)}`,
      "schema",
    );
    return;
  }
  if (ctx.options.registryConfig || looksLikeRegistryConfig(value)) {
    validateRegistryConfig(unit, value, ctx);
    return;
  }
  if (looksLikeRegistryData(value)) {
    unit.result.skipped = true;
    return;
  }
  const { apiVersion, kind } = value;
  // Strings kept for the whole run are shared where they repeat: kinds and namespaces.
  const ownKind = typeof kind === "string" ? asKind(kind) : undefined;
  if (typeof kind === "string") unit.result.kind = ownKind ?? kind;
  const metadata = isObject(value.metadata) ? value.metadata : {};
  // The result outlives the file's text (see detached).
  unit.result.name = typeof metadata.name === "string" ? detached(metadata.name) : "";
  unit.result.namespace =
    typeof metadata.namespace === "string" && metadata.namespace !== ""
      ? ctx.namespaceOf(metadata.namespace)
      : ctx.options.namespace;
  if (typeof apiVersion !== "string" || typeof kind !== "string" || !apiVersion || !kind) {
    const other = notAResource(unit.result.file, value);
    if (other === KUSTOMIZE_HINT && ctx.options.ignoreMissingSchemas) {
      // A kustomization of a Flux-style tree, skipped as one with an apiVersion is; the CLI
      // says once that kustomizations were skipped.
      unit.result.kind = "Kustomization";
      unit.result.skipped = true;
      return;
    }
    if (other !== undefined) {
      addIssue(unit, "", other, "schema");
      return;
    }
    typeMetaIssue(unit, "apiVersion", apiVersion);
    typeMetaIssue(unit, "kind", kind);
    return;
  }

  const listed = kindListed(apiVersion, kind, ctx.options);
  if (listed === "reject") {
    addIssue(unit, "/kind", `${kind} of ${apiVersion} is rejected here (--reject)`, "schema");
    return;
  }
  if (listed === "skip") {
    unit.result.skipped = true;
    return;
  }
  const slash = apiVersion.indexOf("/");
  const group = slash === -1 ? "" : apiVersion.slice(0, slash);
  if (group === API_GROUP) {
    if (ownKind === undefined) {
      const suggestion = didYouMean(kind, KINDS);
      const known = suggestion === "" ? `; the kinds are ${KINDS.join(", ")}` : suggestion;
      addIssue(unit, "/kind", `unknown kind "${kind}" in API group ${API_GROUP}${known}`, "schema");
      return;
    }
    validateOwn(unit, ownKind, apiVersion, value, ctx);
    if (!hasPodTemplate(ownKind, value)) return;
    return podTemplateRuntimeIssues(ownKind, value).then((issues) =>
      addRuntimeIssues(unit, issues),
    );
  }
  if (apiVersion === "v1" && kind === "ConfigMap") {
    ctx.enforce.noteConfigMap(unit.result.namespace, value);
  }
  if (ctx.crds !== undefined && crdVerdict(unit, apiVersion, group, kind, value, ctx)) return;
  const verdict = foreignVerdict(apiVersion, kind, value, ctx.options);
  if (verdict instanceof Promise) return verdict.then((v) => settleForeign(unit, v));
  settleForeign(unit, verdict);
  return undefined;
}

/**
 * A kind a CRD given defines: validated with its schema and rules as ours are (true). A version
 * the CRD does not serve is an error naming those it does.
 */
function crdVerdict(
  unit: Unit,
  apiVersion: string,
  group: string,
  kind: string,
  value: Record<string, unknown>,
  ctx: Context,
): boolean {
  const crds = ctx.crds!;
  const id = crds.idOf(apiVersion, kind);
  if (id !== undefined) {
    addSchemaIssues(unit, crds.validate(id, value), ctx.options);
    return true;
  }
  const served = crds.versionsOf(group, kind);
  if (served.length === 0) return false;
  addIssue(
    unit,
    "/apiVersion",
    `no ${kind} in ${apiVersion}; its CRD (--crd) serves ${served.map((v) => `${group}/${v}`).join(", ")}`,
    "schema",
  );
  return true;
}

/** Whether `--reject` or `--skip` names the kind (`Kind` or `apiVersion/Kind`); reject wins. */
function kindListed(
  apiVersion: string,
  kind: string,
  options: ValidateOptions,
): "reject" | "skip" | undefined {
  const { rejectKinds, skipKinds } = options;
  if (rejectKinds.length === 0 && skipKinds.length === 0) return undefined;
  const gvk = `${apiVersion}/${kind}`;
  if (rejectKinds.includes(kind) || rejectKinds.includes(gvk)) return "reject";
  if (skipKinds.includes(kind) || skipKinds.includes(gvk)) return "skip";
  return undefined;
}

function settleForeign(unit: Unit, verdict: ForeignVerdict): void {
  if (verdict === "skipped") unit.result.skipped = true;
  else for (const i of verdict) addIssue(unit, i.path, i.message, "schema");
}

/** The issue, if any, of `apiVersion` or `kind` (`field`) having `v` as its value. */
function typeMetaIssue(unit: Unit, field: "apiVersion" | "kind", v: unknown): void {
  if (v === undefined || v === null || v === "") {
    addIssue(unit, `/${field}`, `missing required field "${field}"`, "schema");
  } else if (typeof v !== "string") {
    addIssue(unit, `/${field}`, `${field} must be a string, not ${describeValue(v)}`, "schema");
  }
}

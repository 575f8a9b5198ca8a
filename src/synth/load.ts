// Input of a synthesis run: validates the paths with every level `mcpfleet validate` runs (schema,
// CEL rules, references across all documents), and collects the resources of our API group.
// Documents of other kinds (registry-server configs, registry data, core Kubernetes objects) are
// not resources to synthesize and are left out.
import { splitPointer } from "../json-pointer.js";
import { API_GROUP, type SchemaSet, defaultSchemaSet, isKind } from "../schema/index.js";
import {
  type FileVerdict,
  type KeptByText,
  validateReadPaths,
  validateTexts,
} from "../validate/index.js";
import { DEFAULT_OPTIONS, type Report, type ValidateOptions } from "../validate/types.js";
import { parseDocuments } from "../yaml/documents.js";
import type { Resource } from "./model.js";
import { isObject } from "../json.js";

export interface LoadResult {
  report: Report;
  /** True when the report has no error: only then may anything be rendered. */
  valid: boolean;
  resources: Resource[];
}

/**
 * A copy without null fields: the API server drops a null value of a field that is not nullable
 * (`env:` with nothing after it), and so does the validator, so renderers never see one.
 */
export function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = dropNulls(v);
    return out;
  }
  return value;
}

/**
 * Removes the fields `resource`'s schema does not have, as the API server prunes them when it
 * stores a custom resource: with unknown fields allowed (`--unknown-fields=warn|ignore`), what is
 * rendered is what the operator would read back, not a field it never sees.
 */
export function pruneUnknownFields(resource: Record<string, unknown>, set: SchemaSet): void {
  for (const issue of set.validateKind(resource.kind as string, resource)) {
    if (issue.unknownField !== true) continue;
    const segments = splitPointer(issue.path);
    const field = segments.pop();
    let parent: unknown = resource;
    for (const s of segments)
      parent =
        isObject(parent) || Array.isArray(parent)
          ? (parent as Record<string, unknown>)[s]
          : undefined;
    if (field !== undefined && isObject(parent)) delete parent[field];
  }
}

/** Resources of our API group in one file's text, with namespaces settled and nulls dropped. */
export function resourcesOfText(text: string, namespace: string, prune?: SchemaSet): Resource[] {
  const out: Resource[] = [];
  for (const doc of parseDocuments(text, DEFAULT_OPTIONS)) {
    const value = doc.value;
    if (!isObject(value)) continue;
    const items =
      typeof value.kind === "string" && value.kind.endsWith("List") && Array.isArray(value.items)
        ? (value.items as unknown[])
        : [value];
    for (const item of items) {
      if (!isObject(item) || typeof item.apiVersion !== "string") continue;
      if (!item.apiVersion.startsWith(`${API_GROUP}/`)) continue;
      if (typeof item.kind !== "string" || !isKind(item.kind)) continue;
      const metadata = isObject(item.metadata)
        ? (dropNulls(item.metadata) as Record<string, unknown>)
        : {};
      const ns =
        typeof metadata.namespace === "string" && metadata.namespace !== ""
          ? metadata.namespace
          : namespace;
      const clean = dropNulls(item) as Record<string, unknown>;
      if (prune !== undefined) pruneUnknownFields(clean, prune);
      out.push({ ...clean, metadata: { ...metadata, namespace: ns } } as unknown as Resource);
    }
  }
  return out;
}

/**
 * validate's defaults, except that kinds no schema is known for (other projects' CRDs beside
 * ours in a repository) are skipped: synth renders only our kinds and leaves those alone, so
 * they must not stop it. A near miss of our API group still does.
 */
function loadOptions(options: Partial<ValidateOptions>): Partial<ValidateOptions> {
  return { ignoreMissingSchemas: true, ...options };
}

/** The schemas to prune unknown fields with, when they are allowed (else they are errors). */
function pruning(options: Partial<ValidateOptions>): SchemaSet | undefined {
  const mode = options.unknownFields ?? DEFAULT_OPTIONS.unknownFields;
  return mode === "error" || options.strict === true ? undefined : defaultSchemaSet();
}

function hasErrors(report: Report): boolean {
  return report.resources.some((r) => r.errors.length > 0);
}

/**
 * What a process that loads again and again (the validate server) keeps of files between its
 * runs, by text: their verdicts (see validatePaths) and the resources in them.
 */
export interface KeptFiles {
  verdicts: KeptByText<FileVerdict>;
  resources: KeptByText<Resource[]>;
}

/**
 * Validates and loads files and directories (`-` for standard input, read once); with `kept`,
 * a file read as it was in a run before is neither validated nor parsed again.
 */
export async function loadPaths(
  paths: readonly string[],
  options: Partial<ValidateOptions> = {},
  kept?: KeptFiles,
): Promise<LoadResult> {
  const namespace = options.namespace ?? DEFAULT_OPTIONS.namespace;
  // The texts validated are the texts loaded: each file is read once.
  const { report, files } = await validateReadPaths(
    paths,
    { ...loadOptions(options), namespace },
    defaultSchemaSet(),
    kept?.verdicts,
  );
  const valid = !hasErrors(report);
  const prune = pruning(options);
  const settings = JSON.stringify([namespace, prune !== undefined]);
  const resourcesOf = (f: { name: string; text: string }): Resource[] => {
    const found = kept?.resources.find(f.name, f.text, settings);
    if (found !== undefined) return found;
    const resources = resourcesOfText(f.text, namespace, prune);
    kept?.resources.keep(f.name, f.text, settings, resources);
    return resources;
  };
  const resources = valid ? files.flatMap(resourcesOf) : [];
  return { report, valid, resources };
}

/** Validates and loads documents given as text (tests, the controller). */
export async function loadTexts(
  files: readonly { name: string; text: string }[],
  options: Partial<ValidateOptions> = {},
): Promise<LoadResult> {
  const namespace = options.namespace ?? DEFAULT_OPTIONS.namespace;
  const report = await validateTexts(files, { ...loadOptions(options), namespace });
  const valid = !hasErrors(report);
  const prune = pruning(options);
  const resources = valid ? files.flatMap((f) => resourcesOfText(f.text, namespace, prune)) : [];
  return { report, valid, resources };
}

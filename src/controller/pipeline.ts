// One revision through the pipeline up to the target: load and validate every file of the
// checked-out directory (schema, CEL, references), and only when all of it is valid, synthesize
// and plan (revision-plan.ts): the one value every target, dry run and diff consumes.
// An invalid revision (or one with a resource synthesis renders nothing for) yields its errors
// as `file:line:column` lines relative to the repository root, and no plan at all.
import { relative, sep } from "node:path";
import { type LoadResult, loadPaths, loadTexts } from "../synth/load.js";
import { locateIssues, synthIssueLine } from "../synth/issues.js";
import { synthesize } from "../synth/render.js";
import { DEFAULT_SYNTH_OPTIONS, type SynthOptions } from "../synth/options.js";
import { issueLine } from "../validate/format.js";
import { type RevisionPlan, planRevision } from "./revision-plan.js";
import { unappliedWarnings } from "./unapplied.js";
import type { Report } from "../validate/types.js";

export interface RenderOptions {
  /** Namespace of resources whose metadata has none. */
  namespace?: string;
  synth?: SynthOptions;
}

export type RenderOutcome =
  | {
      ok: true;
      plan: RevisionPlan;
      warnings: string[];
    }
  | { ok: false; errors: string[]; warnings: string[] };

/** Error and warning lines of a report, with file names relative to `root` when one is given. */
export function reportLines(
  report: Report,
  root?: string,
): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const r of report.resources) {
    const rel = root === undefined ? r.file : relative(root, r.file);
    const file = rel.startsWith("..") ? r.file : rel.split(sep).join("/");
    const shown = { ...r, file };
    for (const e of r.errors) errors.push(issueLine(shown, e, "error"));
    for (const w of r.warnings) warnings.push(issueLine(shown, w, "warning"));
  }
  return { errors, warnings };
}

/** Validates and synthesizes the resources under `dir`; `root` is what file names are relative to. */
export function renderDirectory(
  dir: string,
  root: string,
  options: RenderOptions = {},
): Promise<RenderOutcome> {
  return renderPaths([dir], root, options);
}

/** Validates and synthesizes the resources of files and directories (`mcpfleet apply PATH...`). */
export async function renderPaths(
  paths: readonly string[],
  root: string,
  options: RenderOptions = {},
): Promise<RenderOutcome> {
  const loaded = await loadPaths(paths, { namespace: options.namespace ?? "default" });
  return renderLoaded(loaded, reportLines(loaded.report, root), options);
}

/**
 * Validates and synthesizes files given as text (a revision read from git), named as given;
 * each document the controller does not apply is one warning.
 */
export async function renderFiles(
  files: readonly { name: string; text: string }[],
  options: RenderOptions = {},
): Promise<RenderOutcome> {
  const loaded = await loadTexts(files, { namespace: options.namespace ?? "default" });
  const lines = reportLines(loaded.report);
  lines.warnings.push(...unappliedWarnings(loaded.report));
  return renderLoaded(loaded, lines, options);
}

function renderLoaded(
  loaded: LoadResult,
  { errors, warnings }: { errors: string[]; warnings: string[] },
  options: RenderOptions,
): RenderOutcome {
  if (!loaded.valid || errors.length > 0) {
    return { ok: false, errors, warnings };
  }
  const result = synthesize(loaded.resources, options.synth ?? DEFAULT_SYNTH_OPTIONS);
  // A resource that renders nothing refuses the revision, as `mcpfleet synth` does: applied, its
  // absence would prune what it rendered before. Warnings are shown and the revision goes on.
  const issues = locateIssues(result.issues, loaded.report);
  for (const i of issues) (i.severity === "error" ? errors : warnings).push(synthIssueLine(i));
  if (errors.length > 0) return { ok: false, errors, warnings };
  return { ok: true, plan: planRevision(loaded.resources, result), warnings };
}

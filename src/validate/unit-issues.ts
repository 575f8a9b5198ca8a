// Issues found by the schema, CEL, registry-config and run-time checks, added to a unit with
// the severity and level the options and the kind of issue call for.
import type { SchemaIssue } from "../schema/index.js";
import type { ConfigIssue } from "./registry-config.js";
import { coveredCelIssue } from "./registry-config.js";
import { type Unit, addIssue } from "./resource.js";
import type { RuntimeIssue } from "./runtime-rules.js";
import type { Level, ValidateOptions } from "./types.js";

export function addSchemaIssues(
  unit: Unit,
  issues: readonly SchemaIssue[],
  options: ValidateOptions,
  base = "",
  covered: readonly ConfigIssue[] = [],
): void {
  if (issues.length === 0) return;
  const unknownSeverity = unknownFieldSeverity(options);
  // A rule over a value that already fails its schema (a string where a list belongs, a
  // malformed duration) cannot be evaluated meaningfully: its message would mislead.
  const schemaPaths = new Set(
    issues.filter((i) => i.level === "schema" && i.unknownField !== true).map((i) => i.path),
  );
  for (const issue of issues) {
    if (coveredCelIssue(issue, base, covered)) continue;
    if (issue.level === "cel" && schemaPaths.has(issue.path)) continue;
    const unknown = issue.unknownField === true;
    const severity = unknown ? unknownSeverity : "error";
    if (severity === undefined) continue;
    addIssue(unit, issue.path, issue.message, levelOf(issue), severity, unknown ? "key" : "value");
  }
}

/**
 * What the API server cannot check with our CRDs (a value union) is reported at the run-time
 * level: the server admits the resource, synthesis then refuses it. The schema and CEL levels
 * stay the server's verdict.
 */
function levelOf(issue: SchemaIssue): Level {
  return issue.serverUnchecked === true ? "runtime" : issue.level;
}

/** How an unknown field is reported: `--strict` (kept for compatibility) makes it an error. */
export function unknownFieldSeverity(options: ValidateOptions): "error" | "warning" | undefined {
  if (options.strict) return "error";
  if (options.unknownFields === "ignore") return undefined;
  return options.unknownFields === "warn" ? "warning" : "error";
}

export function addConfigIssues(unit: Unit, base: string, issues: readonly ConfigIssue[]): void {
  for (const i of issues) addIssue(unit, base + i.path, i.message, "reference", "error", i.target);
}

export function addRuntimeIssues(unit: Unit, issues: readonly RuntimeIssue[]): void {
  for (const i of issues) addIssue(unit, i.path, i.message, "runtime", i.severity);
}

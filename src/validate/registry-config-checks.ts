// Registry-server configurations: a configuration file validated as a whole (recognised by
// shape, or forced with --registry-config), and an MCPRegistry's `configYAML`, parsed and
// validated in place with its issues at their line inside the block scalar.
import { basename, extname } from "node:path";
import { REGISTRY_CONFIG_SCHEMA_ID } from "../schema/index.js";
import type { Context } from "./context.js";
import { REGISTRY_CONFIG_KIND, coveredCelIssue, sourceRuleIssues } from "./registry-config.js";
import { type Unit, addPositionedIssue } from "./resource.js";
import type { Issue } from "./types.js";
import { addConfigIssues, addSchemaIssues, unknownFieldSeverity } from "./unit-issues.js";
import { type ScalarOrigin, parseDocuments } from "../yaml/documents.js";

export function validateRegistryConfig(
  unit: Unit,
  value: Record<string, unknown>,
  ctx: Context,
): void {
  unit.result.kind = REGISTRY_CONFIG_KIND;
  unit.result.name = registryConfigName(unit.result.file);
  const covered = sourceRuleIssues(value);
  addSchemaIssues(
    unit,
    ctx.set.validateSchemaInPlace(REGISTRY_CONFIG_SCHEMA_ID, value),
    ctx.options,
    "",
    covered,
  );
  addConfigIssues(unit, "", covered);
}

function registryConfigName(file: string): string {
  const base = basename(file);
  return base.slice(0, base.length - extname(base).length) || base;
}

type EmbeddedReport = (issue: Issue, severity: "error" | "warning", inner: string) => void;

/**
 * Reports an issue of the configuration in the string at `pointer` at its line and column in
 * the file (or at the string when it is not a block scalar), saying where in the configuration
 * (`inner`) it is.
 */
function embeddedReporter(unit: Unit, pointer: string): EmbeddedReport {
  // Where the string starts is looked up only for an issue: most configurations have none.
  let origin: ScalarOrigin | undefined;
  let looked = false;
  return (issue, severity, inner) => {
    if (!looked) {
      origin = unit.doc.scalarOrigin(unit.prefix + pointer);
      looked = true;
    }
    let line: number;
    let column: number;
    if (origin === undefined) {
      ({ line, column } = unit.doc.locate(unit.prefix + pointer));
    } else if (origin.lines && issue.line > 0) {
      line = origin.line + issue.line - 1;
      column = origin.column + issue.column - 1;
    } else {
      ({ line, column } = origin);
    }
    const where = inner === "" ? "" : ` at ${inner}`;
    // The API server sees a string; the registry server refuses the configuration at start.
    const message = `configYAML${where}: ${issue.message}`;
    const level = "runtime";
    addPositionedIssue(unit, { ...issue, path: pointer, line, column, message, level }, severity);
  };
}

/**
 * An MCPRegistry's `configYAML` is a whole registry-server configuration in a string: it is
 * parsed and validated like a configuration file, its issues reported on `configYAML` (at the
 * run-time level: the API server admits any string) at the line and column inside the block
 * scalar.
 */
export function validateEmbeddedConfig(
  unit: Unit,
  pointer: string,
  text: string,
  ctx: Context,
): void {
  const docs = parseDocuments(text, ctx.options).filter((d) => !d.empty);
  const report = embeddedReporter(unit, pointer);
  if (docs.length === 0) {
    report({ path: "", line: 0, column: 0, message: "is empty", level: "schema" }, "error", "");
    return;
  }
  if (docs.length > 1) {
    const second = docs[1]!;
    report(
      { path: "", ...second.start, message: "must hold one YAML document", level: "parse" },
      "error",
      "",
    );
  }
  const doc = docs[0]!;
  for (const e of doc.errors) report(e, "error", "");
  for (const w of doc.warnings) report(w, "warning", "");
  if (doc.value === undefined) return;
  const position = (path: string, target: "value" | "key" = "value"): Issue => ({
    path,
    ...doc.locate(path, target),
    message: "",
    level: "schema",
  });
  const covered = sourceRuleIssues(doc.value);
  const schemaIssues = ctx.set.validateSchemaInPlace(REGISTRY_CONFIG_SCHEMA_ID, doc.value);
  const schemaPaths = new Set(
    schemaIssues.filter((i) => i.level === "schema" && i.unknownField !== true).map((i) => i.path),
  );
  const unknownSeverity = unknownFieldSeverity(ctx.options);
  for (const issue of schemaIssues) {
    if (coveredCelIssue(issue, "", covered)) continue;
    if (issue.level === "cel" && schemaPaths.has(issue.path)) continue;
    const unknown = issue.unknownField === true;
    const severity = unknown ? unknownSeverity : "error";
    if (severity === undefined) continue;
    report(
      {
        ...position(issue.path, unknown ? "key" : "value"),
        message: issue.message,
        level: issue.level,
      },
      severity,
      issue.path,
    );
  }
  for (const c of covered) {
    report(
      { ...position(c.path, c.target), message: c.message, level: "reference" },
      "error",
      c.path,
    );
  }
}

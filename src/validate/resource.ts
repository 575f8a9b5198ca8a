// One validated unit (a document, or one item of a List document) and how issues are attached
// to it: a JSON pointer relative to the resource becomes a line and column in its file.
import type { Issue, Level, ResourceResult } from "./types.js";
import type { LocateTarget, ParsedDocument, Position } from "../yaml/documents.js";

export type Severity = "error" | "warning";

export interface Unit {
  result: ResourceResult;
  /** The resource's own data (for a List item: the item). */
  value: unknown;
  /** Pointer of the resource inside its document ("" unless a List item). */
  prefix: string;
  doc: ParsedDocument;
}

/** Where a unit's issues go: its result, placed by pointer in its document. */
export type IssueTarget = Pick<Unit, "result" | "prefix" | "doc">;

/** Most results have no issues: they share this list until their first (see NONE in reference-facts.ts). */
const NO_ISSUES: readonly Issue[] = [];

export function newUnit(
  file: string,
  doc: ParsedDocument,
  prefix: string,
  value: unknown,
  start: Position,
): Unit {
  return {
    result: {
      file,
      line: start.line,
      kind: "",
      namespace: "",
      name: "",
      valid: true,
      skipped: false,
      errors: NO_ISSUES,
      warnings: NO_ISSUES,
    },
    value,
    prefix,
    doc,
  };
}

/** Attaches an issue at `path` (relative to the resource) to the unit's result. */
export function addIssue(
  unit: IssueTarget,
  path: string,
  message: string,
  level: Level,
  severity: Severity = "error",
  target: LocateTarget = "value",
): void {
  const at = unit.doc.locate(unit.prefix + path, target);
  addPositionedIssue(unit, { path, line: at.line, column: at.column, message, level }, severity);
}

/** Attaches an issue whose position is already known. */
export function addPositionedIssue(
  unit: Pick<IssueTarget, "result">,
  issue: Issue,
  severity: Severity,
): void {
  // A resource has few issues: a new list each time costs less than a list per resource.
  const result = unit.result;
  if (severity === "error") {
    result.errors = [...result.errors, issue];
    result.valid = false;
  } else {
    result.warnings = [...result.warnings, issue];
  }
}

/** `kind/namespace/name`, the way results and messages name a resource. */
export function resourceLabel(r: { kind: string; namespace: string; name: string }): string {
  return [r.kind || "-", r.namespace || "-", r.name || "-"].join("/");
}

export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return "a string";
  if (typeof value === "number") return "a number";
  if (typeof value === "boolean") return "a boolean";
  return "an object";
}

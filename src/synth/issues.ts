// What synthesis has to say about the resources it renders: a field it cannot apply, a reference
// it cannot follow, a resource it renders nothing for. Renderers report each issue once, against
// the resource it concerns; synthesize() returns them beside the manifests, and the commands print
// them one line each, in the shape validate prints its findings.
import type { Issue, Report, ResourceResult } from "../validate/types.js";
import { summarise } from "../validate/index.js";
import { resourceLabel } from "../validate/resource.js";
import type { Resource } from "./model.js";

export type SynthSeverity = "error" | "warning";

/**
 * Stable codes of synthesis issues (docs/synth.md lists them). An error means the resource
 * rendered nothing; a warning, that it rendered without something it asks for.
 */
export const SYNTH_ISSUE_CODES = [
  /** The resource renders no object at all; the message says why. */
  "SYNTH_NOT_RENDERED",
  /** A reference names a resource the set does not hold; the reference is left out. */
  "SYNTH_REFERENCE_NOT_FOUND",
  /** An outgoing authentication type the workload cannot apply: requests go without credentials. */
  "SYNTH_AUTH_NOT_APPLIED",
  /** A field that is accepted but has no effect on what is rendered. */
  "SYNTH_FIELD_NOT_APPLIED",
  /** A field whose value is replaced by one synthesis resolves from a reference. */
  "SYNTH_FIELD_REPLACED",
  /** A definition hidden by another of the same name. */
  "SYNTH_SHADOWED",
] as const;
export type SynthIssueCode = (typeof SYNTH_ISSUE_CODES)[number];

/** The resource an issue concerns; file and line are known once the issue is located. */
export interface IssueSubject {
  kind: string;
  namespace: string;
  name: string;
  file?: string;
  line?: number;
}

export interface SynthIssue {
  severity: SynthSeverity;
  code: SynthIssueCode;
  resource: IssueSubject;
  /** JSON pointer of the field concerned, when there is one. */
  path?: string;
  /** One line. */
  message: string;
}

/** Reports issues about one resource. */
export interface IssueReporter {
  error(code: SynthIssueCode, message: string, path?: string): void;
  warning(code: SynthIssueCode, message: string, path?: string): void;
}

/** Collects the issues of one synthesis run, in the order they were reported. */
export class SynthIssues {
  private readonly list: SynthIssue[] = [];

  /** A reporter bound to `resource`. */
  for(resource: Resource): IssueReporter {
    const subject: IssueSubject = {
      kind: resource.kind,
      namespace: resource.metadata.namespace,
      name: resource.metadata.name,
    };
    const add = (severity: SynthSeverity, code: SynthIssueCode, message: string, path?: string) =>
      this.list.push({
        severity,
        code,
        resource: subject,
        ...(path !== undefined ? { path } : {}),
        message,
      });
    return {
      error: (code, message, path) => add("error", code, message, path),
      warning: (code, message, path) => add("warning", code, message, path),
    };
  }

  all(): SynthIssue[] {
    return [...this.list];
  }
}

/** A reporter that keeps nothing, for resolving without rendering. */
export const IGNORE_ISSUES: IssueReporter = { error: () => {}, warning: () => {} };

export function hasErrors(issues: readonly SynthIssue[]): boolean {
  return issues.some((i) => i.severity === "error");
}

/**
 * The issues with the file and line of their resource, as validation read it. Resources appear in
 * the report under the namespace they were loaded with, so the lookup matches kind, namespace and
 * name; the first document wins where several define one resource.
 */
export function locateIssues(issues: readonly SynthIssue[], report: Report): SynthIssue[] {
  const where = new Map<string, { file: string; line: number }>();
  for (const r of report.resources) {
    const key = resourceLabel(r);
    if (!where.has(key)) where.set(key, { file: r.file, line: r.line });
  }
  return issues.map((i) => {
    const at = where.get(resourceLabel(i.resource));
    return at === undefined ? i : { ...i, resource: { ...i.resource, ...at } };
  });
}

/**
 * `FILE:LINE:1: KIND/NAMESPACE/NAME: PATH: MESSAGE (CODE)`, with `, warning` after the code of a
 * warning: the shape of validate's lines, with the issue's code where validate names its level.
 */
export function synthIssueLine(issue: SynthIssue): string {
  const r = issue.resource;
  const where = r.file !== undefined ? `${r.file}:${r.line ?? 1}:1: ` : "";
  const tail = issue.severity === "warning" ? `(${issue.code}, warning)` : `(${issue.code})`;
  return `${where}${resourceLabel(r)}: ${issue.path ?? "-"}: ${issue.message.replace(/\s*\n\s*/g, " ")} ${tail}`;
}

/**
 * `report` with the issues added to the resources they concern, at the `runtime` level (what the
 * operator finds when it reconciles), an error making its resource invalid: how `mcpfleet
 * validate` shows what synthesis would say, in every output format it has.
 */
export function reportWithIssues(report: Report, issues: readonly SynthIssue[]): Report {
  if (issues.length === 0) return report;
  const byResource = new Map<string, SynthIssue[]>();
  for (const i of issues) {
    const key = resourceLabel(i.resource);
    byResource.set(key, [...(byResource.get(key) ?? []), i]);
  }
  const resources = report.resources.map((r): ResourceResult => {
    const mine = byResource.get(resourceLabel(r));
    if (mine === undefined || r.skipped) return r;
    byResource.delete(resourceLabel(r)); // the first document of a resource carries its issues
    const asIssue = (i: SynthIssue): Issue => ({
      path: i.path ?? "",
      line: r.line,
      column: 1,
      message: `${i.message.replace(/\s*\n\s*/g, " ")} (${i.code})`,
      level: "runtime",
    });
    const errors = [...r.errors, ...mine.filter((i) => i.severity === "error").map(asIssue)];
    const warnings = [...r.warnings, ...mine.filter((i) => i.severity === "warning").map(asIssue)];
    return { ...r, valid: r.valid && errors.length === r.errors.length, errors, warnings };
  });
  return { resources, summary: summarise(resources) };
}

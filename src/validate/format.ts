// The output formats of `mcpfleet validate`: text (one line per issue), json (the documented
// contract), junit (CI test reports) and tap.
import { resourceLabel } from "./resource.js";
import type { Issue, Report, ResourceResult, Summary } from "./types.js";

export const FORMATS = ["text", "json", "junit", "tap"] as const;
export type Format = (typeof FORMATS)[number];

export function isFormat(value: string): value is Format {
  return (FORMATS as readonly string[]).includes(value);
}

export interface FormatOptions {
  /** Add a summary (text: a last line; tap: a closing comment). */
  summary: boolean;
  /** ANSI colours (text only). */
  color: boolean;
}

export function formatReport(report: Report, format: Format, options: FormatOptions): string {
  switch (format) {
    case "json":
      return formatJson(report);
    case "junit":
      return formatJunit(report);
    case "tap":
      return formatTap(report, options);
    default:
      return formatText(report, options);
  }
}

const ANSI = {
  red: "\x1b[31m",
  yellow: "\x1b[33m",
  bold: "\x1b[1m",
  dim: "\x1b[2m",
  reset: "\x1b[0m",
};

function paint(on: boolean, code: string, text: string): string {
  return on ? `${code}${text}${ANSI.reset}` : text;
}

/** Control characters (other than tab) would garble a terminal or a log; shown escaped. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/** `FILE:LINE:COL: KIND/NAMESPACE/NAME: PATH: MESSAGE (LEVEL)`, the text form of one issue. */
export function issueLine(
  r: ResourceResult,
  issue: Issue,
  severity: "error" | "warning",
  color = false,
): string {
  // The text is made one line before it is painted: escaping after would escape the colours.
  const where = paint(color, ANSI.bold, oneLine(`${r.file}:${issue.line}:${issue.column}`));
  const level = severity === "warning" ? `(${issue.level}, warning)` : `(${issue.level})`;
  const tail = paint(color, severity === "warning" ? ANSI.yellow : ANSI.red, level);
  return `${where}: ${oneLine(`${resourceLabel(r)}: ${issue.path || "-"}: ${issue.message}`)} ${tail}`;
}

function byPosition(a: Issue, b: Issue): number {
  return a.line - b.line || a.column - b.column;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

export function summaryLine(s: Summary): string {
  return (
    `${count(s.resources, "resource")}: ${s.valid} valid, ${s.invalid} invalid, ${s.skipped} skipped; ` +
    `${count(s.errors, "error")}, ${count(s.warnings, "warning")}`
  );
}

function formatText(report: Report, options: FormatOptions): string {
  const lines: string[] = [];
  for (const r of report.resources) {
    const issues = [
      ...r.errors.map((i) => ({ i, s: "error" as const })),
      ...r.warnings.map((i) => ({ i, s: "warning" as const })),
    ].sort((a, b) => byPosition(a.i, b.i));
    for (const { i, s } of issues) lines.push(issueLine(r, i, s, options.color));
  }
  if (options.summary) lines.push(summaryLine(report.summary));
  return lines.length === 0 ? "" : lines.join("\n") + "\n";
}

/** The documented contract: exactly these keys, in this order. */
function formatJson(report: Report): string {
  const issue = (i: Issue) => ({
    path: i.path,
    line: i.line,
    column: i.column,
    message: i.message,
    level: i.level,
  });
  const out = {
    resources: report.resources.map((r) => ({
      file: r.file,
      line: r.line,
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
      valid: r.valid,
      skipped: r.skipped,
      errors: r.errors.map(issue),
      warnings: r.warnings.map(issue),
    })),
    summary: { ...report.summary },
  };
  return JSON.stringify(out, null, 2) + "\n";
}

function xml(text: string): string {
  return (
    text
      // Characters XML 1.0 cannot carry at all.
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd")
      .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
  );
}

function caseName(r: ResourceResult): string {
  return r.kind === "" ? `document at line ${r.line}` : resourceLabel(r);
}

/**
 * JUnit XML: one test suite per file, one test case per resource; errors are a failure, skipped
 * resources are skipped, warnings go to the case's system-out.
 */
function formatJunit(report: Report): string {
  const byFile = new Map<string, ResourceResult[]>();
  for (const r of report.resources) {
    const list = byFile.get(r.file);
    if (list === undefined) byFile.set(r.file, [r]);
    else list.push(r);
  }
  const s = report.summary;
  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mcpfleet validate" tests="${s.resources}" failures="${s.invalid}" errors="0" skipped="${s.skipped}">`,
  ];
  for (const [file, results] of byFile) {
    const failures = results.filter((r) => !r.valid).length;
    const skipped = results.filter((r) => r.skipped).length;
    out.push(
      `  <testsuite name="${xml(file)}" tests="${results.length}" failures="${failures}" errors="0" skipped="${skipped}">`,
    );
    for (const r of results) {
      out.push(`    <testcase classname="${xml(file)}" name="${xml(caseName(r))}">`);
      if (r.skipped) out.push("      <skipped/>");
      if (r.errors.length > 0) {
        const first = r.errors[0]!;
        const body = r.errors.map((i) => issueLine(r, i, "error")).join("\n");
        out.push(
          `      <failure message="${xml(first.message)}" type="${xml(first.level)}">${xml(body)}</failure>`,
        );
      }
      if (r.warnings.length > 0) {
        const body = r.warnings.map((i) => issueLine(r, i, "warning")).join("\n");
        out.push(`      <system-out>${xml(body)}</system-out>`);
      }
      out.push("    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return out.join("\n") + "\n";
}

/** TAP version 13: one test point per resource, issues in a YAML diagnostic block. */
function formatTap(report: Report, options: FormatOptions): string {
  const out = ["TAP version 13", `1..${report.resources.length}`];
  report.resources.forEach((r, n) => {
    const description = `${r.file}:${r.line} ${caseName(r)}`.replace(/#/g, "\\#");
    const status = r.valid ? "ok" : "not ok";
    const directive = r.skipped ? " # SKIP not validated" : "";
    out.push(oneLine(`${status} ${n + 1} - ${description}${directive}`));
    if (r.errors.length > 0 || r.warnings.length > 0) {
      out.push("  ---");
      for (const [label, list, sev] of [
        ["errors", r.errors, "error"],
        ["warnings", r.warnings, "warning"],
      ] as const) {
        if (list.length === 0) continue;
        out.push(`  ${label}:`);
        for (const i of list) out.push(`    - ${JSON.stringify(issueLine(r, i, sev))}`);
      }
      out.push("  ...");
    }
  });
  if (options.summary) out.push(`# ${summaryLine(report.summary)}`);
  return out.join("\n") + "\n";
}

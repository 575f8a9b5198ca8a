import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { stringify } from "yaml";
import { afterAll } from "vitest";
import {
  type Issue,
  type Report,
  type ResourceResult,
  type ValidateOptions,
  validateTexts,
} from "../../src/validate/index.js";

export const ROOT = join(import.meta.dirname, "../..");
export const GROUP = "toolhive.stacklok.dev";
export const V1 = `${GROUP}/v1alpha1`;

export type Doc = Record<string, unknown>;

/** A resource of ours with a name and spec. */
export function res(kind: string, name: string, spec: Doc = {}, extra: Doc = {}): Doc {
  return { apiVersion: V1, kind, metadata: { name }, spec, ...extra };
}

/** Several documents as one multi-document YAML text. */
export function yamlDocs(...docs: unknown[]): string {
  return docs.map((d) => stringify(d)).join("---\n");
}

/** Validates texts given as `{name: text}` (one "file" each). */
export async function check(
  files: Record<string, string>,
  options: Partial<ValidateOptions> = {},
): Promise<Report> {
  return validateTexts(
    Object.entries(files).map(([name, text]) => ({ name, text })),
    options,
  );
}

/** Validates documents written to one file `test.yaml`. */
export function checkDocs(docs: unknown[], options: Partial<ValidateOptions> = {}) {
  return check({ "test.yaml": yamlDocs(...docs) }, options);
}

export interface FlatIssue extends Issue {
  severity: "error" | "warning";
  resource: string;
  file: string;
}

/** Every issue of a report, flattened, with the resource it belongs to. */
export function issues(report: Report): FlatIssue[] {
  return report.resources.flatMap((r: ResourceResult) => [
    ...r.errors.map((e) => ({
      ...e,
      severity: "error" as const,
      resource: `${r.kind}/${r.name}`,
      file: r.file,
    })),
    ...r.warnings.map((e) => ({
      ...e,
      severity: "warning" as const,
      resource: `${r.kind}/${r.name}`,
      file: r.file,
    })),
  ]);
}

/** A temporary directory removed after the test file. */
export function tempDir(prefix = "mcpfleet-validate-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes files (path relative to `dir` -> content) and returns `dir`. */
export function writeTree(dir: string, files: Record<string, string | Buffer>): string {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  return dir;
}

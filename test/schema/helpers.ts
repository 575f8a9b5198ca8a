import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { expect } from "vitest";
import { type SchemaIssue, defaultSchemaSet } from "../../src/schema/index.js";

export { SHARED_DATA } from "../support/shared-data.js";
import { SHARED_DATA } from "../support/shared-data.js";
export const REFERENCE_RESOURCES = join(SHARED_DATA, "reference-resources");
export const REFERENCE_REGISTRY_CONFIGS = join(SHARED_DATA, "reference-registry-configs");

export type Doc = Record<string, unknown>;

/** Issues of a resource against its kind's schema, unknown-field warnings included. */
export function issuesOf(kind: string, doc: unknown): SchemaIssue[] {
  return defaultSchemaSet().validateKind(kind, doc);
}

/** Asserts a document has no schema, CEL or unknown-field issues. */
export function expectValid(kind: string, doc: unknown): void {
  expect(issuesOf(kind, doc)).toEqual([]);
}

/** Asserts that among the issues there is one at `path` with `level` (and message text, if given). */
export function expectIssue(
  kind: string,
  doc: unknown,
  want: { path: string; level: "schema" | "cel"; message?: string | RegExp },
): void {
  const issues = issuesOf(kind, doc);
  const match = issues.find(
    (i) =>
      i.path === want.path &&
      i.level === want.level &&
      (want.message === undefined ||
        (typeof want.message === "string"
          ? i.message.includes(want.message)
          : want.message.test(i.message))),
  );
  expect(
    match,
    `expected a ${want.level} issue at ${want.path}; got ${JSON.stringify(issues)}`,
  ).toBeDefined();
}

export interface ReferenceDoc {
  file: string;
  index: number;
  doc: Doc;
}

/** Every YAML document of every file in a directory (comments and empty documents dropped). */
export function loadYamlDocs(dir: string): ReferenceDoc[] {
  const out: ReferenceDoc[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()) {
    const docs = parseAllDocuments(readFileSync(join(dir, file), "utf8"));
    docs.forEach((d, index) => {
      const doc = d.toJS() as unknown;
      if (doc !== null && typeof doc === "object") out.push({ file, index, doc: doc as Doc });
    });
  }
  return out;
}

/** The reference resources of one of our kinds. */
export function loadReferenceDocs(kind?: string): ReferenceDoc[] {
  return loadYamlDocs(REFERENCE_RESOURCES).filter(
    (r) =>
      typeof r.doc.apiVersion === "string" &&
      r.doc.apiVersion.startsWith("toolhive.stacklok.dev/") &&
      (kind === undefined || r.doc.kind === kind),
  );
}

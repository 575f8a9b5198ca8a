import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { expect, it } from "vitest";
import { REGISTRY_CONFIG_SCHEMA_ID, defaultSchemaSet } from "../../src/schema/index.js";
import { type Doc, REFERENCE_REGISTRY_CONFIGS, SHARED_DATA, loadReferenceDocs } from "./helpers.js";
import { describeWithSharedData } from "../support/shared-data.js";

const COMPAT_DOC = join(import.meta.dirname, "../../docs/compat.md");

/** The exceptions table of docs/compat.md, as `file | resource | path | level` keys. */
function documentedExceptions(): string[] {
  const text = readFileSync(COMPAT_DOC, "utf8");
  const table = /<!-- exceptions:begin -->([\s\S]*?)<!-- exceptions:end -->/.exec(text)?.[1];
  if (table === undefined) throw new Error("docs/compat.md has no exceptions table");
  return (
    table
      .split("\n")
      .filter((line) => line.startsWith("| ") && !/^\| (File|-+) /.test(line))
      .map((line) => {
        const [file, resource, path, level] = line
          .split("|")
          .slice(1, 5)
          .map((cell) => cell.trim().replace(/^`|`$/g, ""));
        return `${file} | ${resource} | ${path} | ${level}`;
      })
      // The schema set alone: run-time rules are validate's (test/validate/corpus.test.ts).
      .filter((key) => !key.endsWith(" | runtime"))
  );
}

function actualIssues(): string[] {
  const set = defaultSchemaSet();
  return loadReferenceDocs().flatMap((r) => {
    const name = String((r.doc.metadata as Doc | undefined)?.name);
    return set
      .validateKind(String(r.doc.kind), r.doc)
      .map(
        (i) =>
          `${r.file} | ${String(r.doc.kind)}/${name} | ${i.path} | ${i.unknownField ? "unknown field" : i.level}`,
      );
  });
}

describeWithSharedData(
  "compatibility with the reference resources (docs/compat.md)",
  SHARED_DATA,
  () => {
    const documented = documentedExceptions();
    const actual = actualIssues();

    it("covers documents of every kind", () => {
      const kinds = new Set(loadReferenceDocs().map((r) => r.doc.kind));
      expect(kinds.size).toBe(12);
    });

    it("produces no issue that docs/compat.md does not list", () => {
      expect(actual.filter((a) => !documented.includes(a))).toEqual([]);
    });

    it("lists no exception that no longer occurs", () => {
      expect(documented.filter((d) => !actual.includes(d))).toEqual([]);
    });

    it.each(readdirSync(REFERENCE_REGISTRY_CONFIGS).filter((f) => f.endsWith(".yaml")))(
      "registry config %s validates without any issue",
      (file) => {
        const doc = parse(readFileSync(join(REFERENCE_REGISTRY_CONFIGS, file), "utf8")) as unknown;
        expect(defaultSchemaSet().validateSchema(REGISTRY_CONFIG_SCHEMA_ID, doc)).toEqual([]);
      },
    );

    it("validates the configYAML of every reference MCPRegistry against the config schema", () => {
      const registries = loadReferenceDocs("MCPRegistry").filter(
        (r) => typeof (r.doc.spec as Doc | undefined)?.configYAML === "string",
      );
      expect(registries.length).toBeGreaterThan(0);
      for (const r of registries) {
        const config = parse((r.doc.spec as { configYAML: string }).configYAML) as unknown;
        expect(
          defaultSchemaSet().validateSchema(REGISTRY_CONFIG_SCHEMA_ID, config),
          r.file,
        ).toEqual([]);
      }
    });
  },
);

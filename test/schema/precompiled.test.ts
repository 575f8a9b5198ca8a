// The validators `make generate` compiles ahead (generated/validators/) must judge every
// document exactly as validators compiled from the schemas at run time do: the installed schema
// set uses the former, any other the latter.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import {
  KINDS,
  REGISTRY_CONFIG_SCHEMA_ID,
  SchemaSet,
  defaultSchemaSet,
  isKind,
} from "../../src/schema/index.js";
import { loadSchemaFiles } from "../../src/schema/load.js";
import { PRECOMPILED_REFS } from "../../src/schema/precompiled.js";
import { applyValue } from "../validate/mutations.js";
import { REFERENCE_REGISTRY_CONFIGS, REFERENCE_RESOURCES } from "./helpers.js";
import { hasSharedData } from "../support/shared-data.js";

const ROOT = join(import.meta.dirname, "../..");

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return yamlFiles(path);
      return /\.ya?ml$/.test(name) ? [path] : [];
    });
}

function docsOf(files: readonly string[]): unknown[] {
  return files.flatMap((f) =>
    parseAllDocuments(readFileSync(f, "utf8")).map((d) => d.toJS() as unknown),
  );
}

type Resource = { kind: string } & Record<string, unknown>;

const precompiled = defaultSchemaSet();
const compiled = new SchemaSet(loadSchemaFiles());
const withReference = hasSharedData(
  REFERENCE_RESOURCES,
  "precompiled validators on the reference data",
);
const resources = docsOf([
  ...yamlFiles(join(ROOT, "examples")),
  ...(withReference ? yamlFiles(REFERENCE_RESOURCES) : []),
]).filter((d): d is Resource => {
  const kind = (d as { kind?: unknown } | null)?.kind;
  return typeof kind === "string" && isKind(kind);
});
const configs = withReference ? docsOf(yamlFiles(REFERENCE_REGISTRY_CONFIGS)) : [];

describe("precompiled validators", () => {
  it("serve the installed schemas; a schema set read from the YAML compiles its own", () => {
    for (const ref of PRECOMPILED_REFS) {
      expect([ref, precompiled.isPrecompiled(ref)]).toEqual([ref, true]);
      expect([ref, compiled.isPrecompiled(ref)]).toEqual([ref, false]);
    }
  });

  it("give every example and reference resource the issues compiled ones give", () => {
    expect(new Set(resources.map((r) => r.kind)).size).toBe(KINDS.length);
    for (const doc of resources) {
      expect(precompiled.validateKind(doc.kind, doc)).toEqual(compiled.validateKind(doc.kind, doc));
    }
  });

  it.skipIf(!withReference)(
    "give every reference registry configuration the issues compiled ones give",
    () => {
      expect(configs.length).toBeGreaterThan(20);
      for (const doc of configs) {
        expect(precompiled.validateSchema(REGISTRY_CONFIG_SCHEMA_ID, doc)).toEqual(
          compiled.validateSchema(REGISTRY_CONFIG_SCHEMA_ID, doc),
        );
      }
    },
  );

  it("give mutated resources the issues compiled ones give", () => {
    let invalid = 0;
    fc.assert(
      fc.property(
        fc.nat({ max: resources.length - 1 }),
        fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 5 }),
        fc.jsonValue({ maxDepth: 2 }),
        (i, path, value) => {
          const doc = resources[i]!;
          const mutated = applyValue(doc, path, value);
          const issues = precompiled.validateKind(doc.kind, mutated);
          if (issues.length > 0) invalid++;
          expect(issues).toEqual(compiled.validateKind(doc.kind, mutated));
        },
      ),
      { numRuns: 2000 },
    );
    // The property says something only if many of them are invalid.
    expect(invalid).toBeGreaterThan(500);
  });
});

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { REGISTRY_CONFIG_SCHEMA_ID, defaultSchemaSet, isKind } from "../../src/schema/index.js";
import { loadYamlDocs } from "./helpers.js";

const EXAMPLES = join(import.meta.dirname, "../../examples");
const resources = loadYamlDocs(join(EXAMPLES, "resources"));
const registryConfigs = readdirSync(join(EXAMPLES, "registry")).filter((f) => f.endsWith(".yaml"));

describe("examples", () => {
  it("has at least one example of every kind, several of the main workloads", () => {
    const count = new Map<string, number>();
    for (const r of resources)
      count.set(String(r.doc.kind), (count.get(String(r.doc.kind)) ?? 0) + 1);
    for (const kind of ["MCPServer", "VirtualMCPServer", "MCPRegistry"]) {
      expect(count.get(kind) ?? 0, kind).toBeGreaterThanOrEqual(2);
    }
    expect([...count.keys()].filter(isKind).length).toBe(12);
  });

  it.each(resources.map((r) => [`${r.file}#${r.index}`, r] as const))(
    "%s validates without any issue",
    (_name, r) => {
      expect(defaultSchemaSet().validateKind(String(r.doc.kind), r.doc)).toEqual([]);
    },
  );

  it.each(registryConfigs)("registry config %s validates without any issue", (file) => {
    const doc = parse(readFileSync(join(EXAMPLES, "registry", file), "utf8")) as unknown;
    expect(defaultSchemaSet().validateSchema(REGISTRY_CONFIG_SCHEMA_ID, doc)).toEqual([]);
  });
});

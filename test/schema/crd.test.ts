import { Environment } from "@marcbachmann/cel-js";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { buildCrd } from "../../src/schema/crd.js";
import { KINDS, SERVED_VERSIONS, STORAGE_VERSION } from "../../src/schema/kinds.js";
import { type SchemaNode, loadSchemaFiles } from "../../src/schema/load.js";
import { SchemaIndex } from "../../src/schema/resolve.js";

const index = new SchemaIndex(loadSchemaFiles());

/** Keywords JSONSchemaProps accepts in a structural schema (apiextensions.k8s.io/v1). */
const STRUCTURAL_KEYWORDS = new Set([
  "type",
  "properties",
  "additionalProperties",
  "items",
  "required",
  "enum",
  "default",
  "description",
  "title",
  "format",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "nullable",
  "x-kubernetes-validations",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-int-or-string",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-embedded-resource",
]);

// Only `self` may appear: these CRDs declare no transition rules, so `oldSelf` is not allowed.
const celEnv = new Environment({
  enableOptionalTypes: true,
  homogeneousAggregateLiterals: false,
}).registerVariable("self", "dyn");

interface Visit {
  path: string;
  node: SchemaNode;
}

function walk(node: SchemaNode, path: string, out: Visit[]): Visit[] {
  out.push({ path, node });
  const props = node.properties as Record<string, SchemaNode> | undefined;
  for (const [name, sub] of Object.entries(props ?? {})) walk(sub, `${path}.${name}`, out);
  if (node.items && typeof node.items === "object")
    walk(node.items as SchemaNode, `${path}[]`, out);
  if (node.additionalProperties && typeof node.additionalProperties === "object") {
    walk(node.additionalProperties as SchemaNode, `${path}{}`, out);
  }
  return out;
}

const defaultChecker = new Ajv({ strict: false, allErrors: true });

describe("schema files", () => {
  it("never use uniqueItems, which CustomResourceDefinitions refuse", () => {
    const offenders = loadSchemaFiles().filter((f) =>
      JSON.stringify(f.schema).includes('"uniqueItems"'),
    );
    expect(offenders.map((f) => f.path)).toEqual([]);
  });
});

describe.each(KINDS.map((k) => [k]))("CRD of %s", (kind) => {
  const crd = buildCrd(index, kind);
  const spec = crd.spec as SchemaNode;
  const versions = spec.versions as SchemaNode[];
  const schema = (versions[0]?.schema as SchemaNode).openAPIV3Schema as SchemaNode;
  const nodes = walk(schema, "", []);

  it("is namespaced, in category toolhive, with short names", () => {
    expect(spec.scope).toBe("Namespaced");
    const names = spec.names as SchemaNode;
    expect(names.kind).toBe(kind);
    expect(names.listKind).toBe(`${kind}List`);
    expect(names.categories).toEqual(["toolhive"]);
    expect((names.shortNames as string[]).length).toBeGreaterThan(0);
  });

  it("serves both versions with one storage version, status subresource and columns", () => {
    expect(versions.map((v) => v.name)).toEqual([...SERVED_VERSIONS]);
    expect(versions.filter((v) => v.storage).map((v) => v.name)).toEqual([STORAGE_VERSION]);
    for (const v of versions) {
      expect(v.subresources).toEqual({ status: {} });
      const columns = (v.additionalPrinterColumns as SchemaNode[]).map((c) => c.name);
      expect(columns).toContain("Age");
      expect(columns.some((c) => c === "Phase" || c === "Ready" || c === "Type")).toBe(true);
    }
  });

  it("has a type on every node, or an allowed untyped node", () => {
    const untyped = nodes.filter(
      (n) =>
        typeof n.node.type !== "string" &&
        n.node["x-kubernetes-preserve-unknown-fields"] !== true &&
        n.node["x-kubernetes-int-or-string"] !== true,
    );
    expect(untyped.map((n) => n.path)).toEqual([]);
  });

  it("uses only structural keywords, no references", () => {
    const bad = nodes.flatMap((n) =>
      Object.keys(n.node)
        .filter((k) => !STRUCTURAL_KEYWORDS.has(k))
        .map((k) => `${n.path}: ${k}`),
    );
    expect(bad).toEqual([]);
    expect(JSON.stringify(crd)).not.toMatch(/"\$ref"|"\$defs"|"anyOf"|"oneOf"|"allOf"|"const"/);
  });

  it("never has properties and additionalProperties on one node", () => {
    const both = nodes.filter((n) => n.node.properties && n.node.additionalProperties);
    expect(both.map((n) => n.path)).toEqual([]);
  });

  it("keeps metadata opaque, as the API server requires", () => {
    expect((schema.properties as SchemaNode).metadata).toEqual({ type: "object" });
  });

  it("has defaults that are valid against their own schema", () => {
    const invalid = nodes
      .filter((n) => n.node.default !== undefined)
      .filter((n) => {
        const { default: value, ...own } = n.node;
        return !defaultChecker.validate(own, value);
      });
    expect(invalid.map((n) => n.path)).toEqual([]);
  });

  it("has list-map keys that are required in the items", () => {
    for (const n of nodes.filter((v) => v.node["x-kubernetes-list-type"] === "map")) {
      const keys = n.node["x-kubernetes-list-map-keys"] as string[];
      const items = n.node.items as SchemaNode;
      const required = (items.required as string[] | undefined) ?? [];
      const props = (items.properties as Record<string, SchemaNode> | undefined) ?? {};
      for (const key of keys) {
        expect(
          required.includes(key) || props[key]?.default !== undefined,
          `${n.path} key ${key}`,
        ).toBe(true);
      }
    }
  });

  it("has CEL rules that compile, use only self, and carry a message", () => {
    const rules = nodes.flatMap((n) =>
      ((n.node["x-kubernetes-validations"] as SchemaNode[] | undefined) ?? []).map((r) => ({
        path: n.path,
        rule: r.rule as string,
        message: r.message,
      })),
    );
    for (const r of rules) {
      const checked = celEnv.check(r.rule);
      expect(checked.valid, `${kind}${r.path}: ${r.rule}`).toBe(true);
      expect(r.rule).not.toMatch(/\boldSelf\b/);
      expect(typeof r.message === "string" && r.message.length > 0, `${r.path}: ${r.rule}`).toBe(
        true,
      );
    }
  });
});

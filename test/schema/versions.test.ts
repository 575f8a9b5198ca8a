// Per-version schemas (x-mcpfleet-v1beta1) and what the API server cannot check with our CRDs.
import { describe, expect, it } from "vitest";
import { buildCrd } from "../../src/schema/crd.js";
import { defaultSchemaSet, loadSchemaFiles, type SchemaNode } from "../../src/schema/index.js";
import { SchemaIndex } from "../../src/schema/resolve.js";
import { v1beta1Files, v1beta1SchemaId } from "../../src/schema/versions.js";

const files = loadSchemaFiles();

function server(apiVersion: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion,
    kind: "MCPServer",
    metadata: { name: "s" },
    spec: { image: "a/b:1", ...spec },
  };
}

const V1ALPHA1 = "toolhive.stacklok.dev/v1alpha1";
const V1BETA1 = "toolhive.stacklok.dev/v1beta1";

describe("v1beta1 forms", () => {
  it("exist only for the kinds whose schema marks a difference", () => {
    expect(v1beta1Files(files).map((f) => f.id)).toEqual(
      ["MCPServer", "MCPRemoteProxy", "MCPServerEntry", "VirtualMCPServer"].map((k) =>
        v1beta1SchemaId(k as "MCPServer"),
      ),
    );
    // The marker itself is gone from the form.
    expect(JSON.stringify(v1beta1Files(files))).not.toContain("x-mcpfleet-v1beta1");
  });

  it("are picked by the document's apiVersion", () => {
    const set = defaultSchemaSet();
    expect(set.validateKind("MCPServer", server(V1ALPHA1, { groupRef: "tools" }))).toEqual([]);
    expect(set.validateKind("MCPServer", server(V1BETA1, { groupRef: { name: "tools" } }))).toEqual(
      [],
    );
    expect(set.validateKind("MCPServer", server(V1BETA1, { groupRef: "tools" }))).toEqual([
      { path: "/spec/groupRef", message: "must be object, not string", level: "schema" },
    ]);
  });

  it("give the CRD a schema per version: v1beta1's groupRef typed, v1alpha1's a union", () => {
    const crd = buildCrd(new SchemaIndex(files), "VirtualMCPServer") as {
      spec: { versions: { name: string; schema: { openAPIV3Schema: SchemaNode } }[] };
    };
    const spec = (name: string) => {
      const v = crd.spec.versions.find((x) => x.name === name)!;
      return (v.schema.openAPIV3Schema.properties as Record<string, SchemaNode>).spec!;
    };
    const groupRef = (name: string) =>
      (spec(name).properties as Record<string, SchemaNode>).groupRef;
    expect(groupRef("v1alpha1")).toMatchObject({ "x-kubernetes-preserve-unknown-fields": true });
    expect(groupRef("v1beta1")).toMatchObject({ type: "object", required: ["name"] });
    expect(spec("v1beta1").required).toEqual(["groupRef", "incomingAuth"]);
    // The rule reading the v1alpha1 union cannot compile on the API server: left out there.
    const rules = (name: string) =>
      ((spec(name)["x-kubernetes-validations"] as { rule: string }[]) ?? []).map((r) => r.rule);
    expect(rules("v1alpha1").some((r) => r.includes("self.groupRef"))).toBe(false);
    expect(rules("v1beta1").some((r) => r.includes("self.groupRef"))).toBe(true);
  });
});

describe("what the API server cannot check", () => {
  it("marks a union's type and a rule reading a union", () => {
    const set = defaultSchemaSet();
    expect(set.validateKind("MCPServer", server(V1ALPHA1, { groupRef: 5 }))).toEqual([
      {
        path: "/spec/groupRef",
        message: "must be a string or an object",
        level: "schema",
        serverUnchecked: true,
      },
    ]);
    const vmcp = {
      apiVersion: V1ALPHA1,
      kind: "VirtualMCPServer",
      metadata: { name: "g" },
      spec: { incomingAuth: { type: "anonymous" } },
    };
    expect(set.validateKind("VirtualMCPServer", vmcp)).toEqual([
      expect.objectContaining({ path: "/spec/groupRef", level: "cel", serverUnchecked: true }),
    ]);
    // In v1beta1 the same omission is the API server's own verdict: a required field.
    expect(set.validateKind("VirtualMCPServer", { ...vmcp, apiVersion: V1BETA1 })).toContainEqual({
      path: "/spec/groupRef",
      message: 'missing required field "groupRef"',
      level: "schema",
    });
  });
});

// What the reference level takes from each resource as it is read.
import { describe, expect, it } from "vitest";
import { defaultSchemaSet } from "../../src/schema/index.js";
import type { Kind } from "../../src/schema/kinds.js";
import { type KnownName, resourceFacts } from "../../src/validate/reference-facts.js";
import { referencePatternsOf } from "../../src/validate/reference-table.js";

const patterns = referencePatternsOf(defaultSchemaSet().files);

const server = {
  apiVersion: "toolhive.stacklok.dev/v1alpha1",
  kind: "MCPServer",
  metadata: { name: "s", namespace: "team" },
  spec: {
    image: "ghcr.io/example/mcp:1",
    groupRef: "tools",
    toolConfigRef: { name: "read-only" },
    oidcConfigRef: { name: "idp", audience: "s" },
    externalAuthConfigRef: { name: "exchange" },
  },
};

function references(value: unknown, kind: Kind, known?: KnownName): string[] {
  const facts = resourceFacts({ kind, namespace: "team", name: "s" }, value, patterns(kind), known);
  return facts.references.map((r) => `${r.at} ${r.name}${r.inObject ? " (object)" : ""}`);
}

describe("resource facts", () => {
  it("lists every reference with its pointer", () => {
    expect(references(server, "MCPServer")).toEqual([
      "/spec/externalAuthConfigRef exchange (object)",
      "/spec/groupRef tools",
      "/spec/oidcConfigRef idp (object)",
      "/spec/toolConfigRef read-only (object)",
    ]);
  });

  it("leaves out the references to names known already, asking with the targets and namespace", () => {
    const asked: string[] = [];
    const known: KnownName = (kinds, namespace, name) => {
      asked.push(`${kinds.join("|")} ${namespace}/${name}`);
      return name === "tools" || name === "idp";
    };
    expect(references(server, "MCPServer", known)).toEqual([
      "/spec/externalAuthConfigRef exchange (object)",
      "/spec/toolConfigRef read-only (object)",
    ]);
    expect(asked).toEqual([
      "MCPExternalAuthConfig team/exchange",
      "MCPGroup team/tools",
      "MCPOIDCConfig team/idp",
      "MCPToolConfig team/read-only",
    ]);
  });

  it("keeps the audience of an OIDC reference even when the configuration is known", () => {
    const facts = resourceFacts(
      { kind: "MCPServer", namespace: "team", name: "s" },
      server,
      patterns("MCPServer"),
      () => true,
    );
    expect(facts.references).toEqual([]);
    expect(facts.audience).toEqual({ at: "/spec/oidcConfigRef", config: "idp", audience: "s" });
  });

  it("lists each item of a list of references, and asks only about named ones", () => {
    const vmcp = {
      spec: {
        groupRef: "g",
        config: { compositeToolRefs: [{ name: "a" }, { name: "" }, "b", 7] },
      },
    };
    const asked: string[] = [];
    const known: KnownName = (_kinds, _namespace, name) => {
      asked.push(name);
      return name === "a";
    };
    expect(references(vmcp, "VirtualMCPServer", known)).toEqual([
      "/spec/config/compositeToolRefs/2 b",
      "/spec/groupRef g",
    ]);
    expect(asked).toEqual(["a", "b", "g"]);
  });
});

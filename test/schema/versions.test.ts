// Per-version schemas (x-mcpfleet-v1beta1) and what the API server cannot check with our CRDs.
import { describe, expect, it } from "vitest";
import { buildCrd } from "../../src/schema/crd.js";
import { defaultSchemaSet, loadSchemaFiles, type SchemaNode } from "../../src/schema/index.js";
import { SchemaIndex } from "../../src/schema/resolve.js";
import { typeForms, v1beta1Files } from "../../src/schema/versions.js";

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
  it("exist for the files that mark a difference and the files that refer to them", () => {
    expect(v1beta1Files(files).map((f) => f.path)).toEqual([
      // Marks the embedded authorization server's v1beta1 fields.
      "config/authtypes.v1beta1.yaml",
      // Refer to it; their references point at its v1beta1 copy.
      "crd/mcpexternalauthconfig.v1beta1.yaml",
      "crd/mcpoidcconfig.v1beta1.yaml",
      // Mark differences of their own (and refer to it).
      "crd/mcpremoteproxy.v1beta1.yaml",
      "crd/mcpserver.v1beta1.yaml",
      "crd/mcpserverentry.v1beta1.yaml",
      "crd/virtualmcpserver.v1beta1.yaml",
    ]);
    // The marker itself is gone from the form.
    expect(JSON.stringify(v1beta1Files(files))).not.toContain("x-mcpfleet-v1beta1");
    const auth = v1beta1Files(files).find((f) => f.path.startsWith("crd/mcpexternalauthconfig"))!;
    expect(JSON.stringify(auth.schema)).toContain("../config/authtypes.v1beta1.yaml#/$defs/");
  });

  it("in a shared file: v1beta1 admits the reference's later forms, v1alpha1 keeps the spec's", () => {
    const set = defaultSchemaSet();
    const auth = (
      apiVersion: string,
      redis: Record<string, unknown>,
      issuer = "https://a.example",
    ) => ({
      apiVersion,
      kind: "MCPExternalAuthConfig",
      metadata: { name: "a" },
      spec: {
        type: "embeddedAuthServer",
        embeddedAuthServer: {
          issuer,
          ...(apiVersion === V1BETA1 ? { allowConfidentialClientRegistration: true } : {}),
          upstreamProviders: [
            {
              name: "gh",
              type: "oauth2",
              oauth2Config: {
                authorizationEndpoint: "https://gh.example/authorize",
                tokenEndpoint: "https://gh.example/token",
                clientId: "c",
              },
            },
          ],
          storage: {
            type: "redis",
            redis: { ...redis, aclUserConfig: { passwordSecretRef: { name: "r", key: "p" } } },
          },
        },
      },
    });
    const cluster = { addr: "redis:6379", clusterMode: true };
    expect(set.validateKind("MCPExternalAuthConfig", auth(V1BETA1, cluster))).toEqual([]);
    const paths = (issues: { path: string }[]) => issues.map((i) => i.path).sort();
    expect(paths(set.validateKind("MCPExternalAuthConfig", auth(V1ALPHA1, cluster)))).toEqual([
      "/spec/embeddedAuthServer/storage/redis/aclUserConfig/usernameSecretRef",
      "/spec/embeddedAuthServer/storage/redis/addr",
      "/spec/embeddedAuthServer/storage/redis/clusterMode",
      "/spec/embeddedAuthServer/storage/redis/sentinelConfig",
      "/spec/embeddedAuthServer/upstreamProviders/0/oauth2Config/userInfo",
    ]);
    const messages = (doc: unknown) =>
      set.validateKind("MCPExternalAuthConfig", doc).map((i) => i.message);
    expect(messages(auth(V1BETA1, { clusterMode: true }))).toEqual([
      "exactly one of addr or sentinelConfig must be set",
      "clusterMode requires addr to be set",
    ]);
    expect(messages(auth(V1BETA1, { addr: "redis:6379" }, "http://localhost:8080"))).toEqual([
      expect.stringMatching(/^allowConfidentialClientRegistration requires an https issuer/),
    ]);
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

describe("the forms the generated types describe", () => {
  it("hold either version: a marked node's properties of both, required only what both require", () => {
    const [file] = typeForms([
      {
        id: "https://mcpfleet.dev/schemas/config/t.yaml",
        path: "config/t.yaml",
        schema: {
          type: "object",
          required: ["a", "b"],
          properties: { a: { type: "string" }, b: { $ref: "#/$defs/Wide" } },
          "x-mcpfleet-v1beta1": {
            required: ["b", "c"],
            properties: { b: { $ref: "#/$defs/Narrow" }, c: { type: "boolean" } },
          },
        },
      },
    ]);
    expect(file!.schema).toEqual({
      type: "object",
      required: ["b"],
      // v1alpha1's b (the wider form), v1beta1's own c.
      properties: { a: { type: "string" }, b: { $ref: "#/$defs/Wide" }, c: { type: "boolean" } },
    });
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

// Table-driven cases per level: each case lists every issue the documents must produce (path,
// level, severity), nothing more.
import { describe, expect, it } from "vitest";
import { type ValidateOptions } from "../../src/validate/index.js";
import { type Doc, GROUP, V1, checkDocs, issues, res } from "./helpers.js";

interface Case {
  name: string;
  docs: unknown[];
  options?: Partial<ValidateOptions>;
  /** `severity level path` of every issue, in any order. */
  want: string[];
  /** Optional text each message must contain, by path. */
  messages?: Record<string, RegExp>;
}

const server = (spec: Doc = {}, name = "srv") =>
  res("MCPServer", name, { image: "ghcr.io/example/mcp:1", ...spec });

async function run(c: Case): Promise<void> {
  const report = await checkDocs(c.docs, c.options);
  const got = issues(report).map((i) => `${i.severity} ${i.level} ${i.path}`);
  expect(got.sort()).toEqual([...c.want].sort());
  for (const [path, re] of Object.entries(c.messages ?? {})) {
    const found = issues(report).find((i) => i.path === path);
    expect(found?.message, path).toMatch(re);
  }
}

describe("objects two resources would both create", () => {
  const registry = (name: string) =>
    res("MCPRegistry", name, {
      configYAML:
        "sources:\n  - name: k\n    kubernetes: {}\nregistries:\n  - name: d\n    sources: [k]\nauth:\n  mode: anonymous\n",
    });
  const proxy = (name: string) => res("MCPRemoteProxy", name, { remoteURL: "https://x" });
  const vmcp = (name: string) =>
    res("VirtualMCPServer", name, { groupRef: "g", incomingAuth: { type: "anonymous" } });

  /** Every reference issue, as `resource: message` with the file position left out. */
  async function collisions(docs: unknown[]): Promise<string[]> {
    const report = await checkDocs([res("MCPGroup", "g"), ...docs]);
    return issues(report)
      .filter((i) => i.level === "reference")
      .map((i) => `${i.resource}: ${i.message.replace(/ \(test\.yaml:\d+\)/, "")}`);
  }

  it("finds a registry's Deployment whichever of the two comes first", async () => {
    const want = [
      'MCPServer/catalog-api: MCPServer default/catalog-api and MCPRegistry default/catalog would both create the Deployment "catalog-api"',
      'MCPRegistry/catalog: MCPRegistry default/catalog and MCPServer default/catalog-api would both create the Deployment "catalog-api"',
    ];
    expect(await collisions([server({}, "catalog-api"), registry("catalog")])).toEqual(want);
    expect(await collisions([registry("catalog"), server({}, "catalog-api")])).toEqual([
      want[1],
      want[0],
    ]);
  });

  it("finds a Service named like another kind's", async () => {
    expect(
      await collisions([res("EmbeddingServer", "mcp-x-proxy", { model: "m" }), server({}, "x")]),
    ).toEqual([
      'EmbeddingServer/mcp-x-proxy: EmbeddingServer default/mcp-x-proxy and MCPServer default/x would both create the Service "mcp-x-proxy"',
      'MCPServer/x: MCPServer default/x and EmbeddingServer default/mcp-x-proxy would both create the Service "mcp-x-proxy"',
    ]);
  });

  it("reports each pair of three resources sharing a name on both", async () => {
    expect(await collisions([server({}, "a"), proxy("a"), vmcp("a")])).toEqual([
      'MCPServer/a: MCPServer default/a and MCPRemoteProxy default/a would both create the Deployment "a" and the ConfigMap "a-runconfig"',
      'MCPServer/a: MCPServer default/a and VirtualMCPServer default/a would both create the Deployment "a"',
      'MCPRemoteProxy/a: MCPRemoteProxy default/a and MCPServer default/a would both create the Deployment "a" and the ConfigMap "a-runconfig"',
      'MCPRemoteProxy/a: MCPRemoteProxy default/a and VirtualMCPServer default/a would both create the Deployment "a"',
      'VirtualMCPServer/a: VirtualMCPServer default/a and MCPServer default/a would both create the Deployment "a"',
      'VirtualMCPServer/a: VirtualMCPServer default/a and MCPRemoteProxy default/a would both create the Deployment "a"',
    ]);
  });

  it("reports a resource defined twice as a duplicate, not as a collision", async () => {
    expect(await collisions([server({}, "a"), proxy("a"), server({}, "a")])).toEqual([
      'MCPServer/a: MCPServer default/a and MCPRemoteProxy default/a would both create the Deployment "a" and the ConfigMap "a-runconfig"',
      'MCPRemoteProxy/a: MCPRemoteProxy default/a and MCPServer default/a would both create the Deployment "a" and the ConfigMap "a-runconfig"',
      "MCPServer/a: duplicate MCPServer default/a: also defined at test.yaml:7",
    ]);
  });

  it("finds nothing across namespaces", async () => {
    const other = { ...proxy("a"), metadata: { name: "a", namespace: "ops" } };
    expect(await collisions([server({}, "a"), other])).toEqual([]);
  });
});

describe("schema level", () => {
  const cases: Case[] = [
    { name: "a valid MCPServer", docs: [server()], want: [] },
    {
      // `env:` with nothing after it: absent, as on the API server (and the defaults still apply).
      name: "a field that is null",
      docs: [server({ env: null, resources: { limits: null } })],
      want: [],
    },
    {
      name: "a field that is null next to a wrong one",
      docs: [server({ env: null, proxyPort: 70000 })],
      want: ["error schema /spec/proxyPort"],
    },
    {
      name: "a port out of range",
      docs: [server({ proxyPort: 70000 })],
      want: ["error schema /spec/proxyPort"],
      messages: { "/spec/proxyPort": /65535/ },
    },
    {
      name: "a value outside an enum",
      docs: [server({ transport: "websocket" })],
      want: ["error schema /spec/transport"],
      messages: { "/spec/transport": /stdio/ },
    },
    {
      name: "a wrong type",
      docs: [server({ args: "--verbose" })],
      want: ["error schema /spec/args"],
      messages: { "/spec/args": /must be array, not string/ },
    },
    {
      name: "a missing required field",
      docs: [res("MCPServer", "srv", { transport: "stdio" })],
      want: ["error schema /spec/image"],
      messages: { "/spec/image": /missing required field "image"/ },
    },
    {
      name: "a malformed duration",
      docs: [
        server({
          sessionStorage: { provider: "redis", address: "redis:6379" },
          rateLimiting: { shared: { maxTokens: 10, refillPeriod: "1 minute" } },
        }),
      ],
      want: ["error schema /spec/rateLimiting/shared/refillPeriod"],
      messages: { "/spec/rateLimiting/shared/refillPeriod": /duration such as 30s/ },
    },
    {
      name: "every error of a document, not the first",
      docs: [server({ proxyPort: 0, transport: "x", replicas: -1 })],
      want: [
        "error schema /spec/proxyPort",
        "error schema /spec/transport",
        "error schema /spec/replicas",
      ],
    },
    {
      name: "an unknown field is an error, as the API server's strict field validation has it",
      docs: [server({ imagePullPolicy: "Always" })],
      want: ["error schema /spec/imagePullPolicy"],
      messages: { "/spec/imagePullPolicy": /^unknown field "imagePullPolicy"$/ },
    },
    {
      name: "a misspelt field names the field of that object it most likely meant",
      docs: [res("MCPServer", "s", { image: "i", transprot: "stdio", resources: { limts: {} } })],
      want: ["error schema /spec/transprot", "error schema /spec/resources/limts"],
      messages: {
        "/spec/transprot": /^unknown field "transprot" \(did you mean "transport"\?\)$/,
        "/spec/resources/limts": /\(did you mean "limits"\?\)$/,
      },
    },
    {
      name: "an unknown field is a warning with --unknown-fields=warn",
      docs: [server({ imagePullPolicy: "Always" })],
      options: { unknownFields: "warn" },
      want: ["warning schema /spec/imagePullPolicy"],
    },
    {
      name: "an unknown field is not reported with --unknown-fields=ignore",
      docs: [server({ imagePullPolicy: "Always", proxyPort: 0 })],
      options: { unknownFields: "ignore" },
      want: ["error schema /spec/proxyPort"],
    },
    {
      name: "--strict, kept for compatibility, makes unknown fields errors whatever the mode",
      docs: [server({ imagePullPolicy: "Always" })],
      options: { strict: true, unknownFields: "warn" },
      want: ["error schema /spec/imagePullPolicy"],
    },
    {
      name: "an apiVersion our group does not serve",
      docs: [{ ...server(), apiVersion: `${GROUP}/v2` }],
      want: ["error schema /apiVersion"],
    },
    {
      name: "both served versions",
      docs: [server(), { ...server({}, "other"), apiVersion: `${GROUP}/v1beta1` }],
      want: [],
    },
    {
      name: "a kind our group does not have",
      docs: [{ apiVersion: V1, kind: "MCPThing", metadata: { name: "x" } }],
      want: ["error schema /kind"],
      messages: { "/kind": /unknown kind "MCPThing".*; the kinds are .*MCPServer/ },
    },
    {
      name: "a misspelt kind of our group",
      docs: [{ apiVersion: V1, kind: "MCPSever", metadata: { name: "x" } }],
      want: ["error schema /kind"],
      messages: { "/kind": /unknown kind "MCPSever" .*\(did you mean "MCPServer"\?\)$/ },
    },
    {
      name: "an API group close to ours is a typo, not another group",
      docs: [{ ...server(), apiVersion: "toolhive.stacklok.io/v1alpha1" }],
      // Not relaxed by ignoreMissingSchemas: it would pass CI and deploy nothing.
      options: { ignoreMissingSchemas: true },
      want: ["error schema /apiVersion"],
      messages: {
        "/apiVersion":
          /^unknown API group "toolhive.stacklok.io" \(did you mean "toolhive.stacklok.dev"\?\)/,
      },
    },
    {
      name: "another toolhive group",
      docs: [{ ...server(), apiVersion: "toolhive.io/v1alpha1" }],
      want: ["error schema /apiVersion"],
    },
    {
      name: "a kind of ours without its group",
      docs: [{ ...server(), apiVersion: "v1alpha1" }],
      want: ["error schema /apiVersion"],
      messages: { "/apiVersion": /MCPServer is served as toolhive\.stacklok\.dev\/v1alpha1/ },
    },
    {
      name: "a resource without a name",
      docs: [{ ...server(), metadata: { namespace: "x" } }],
      want: ["error schema /metadata/name"],
      messages: { "/metadata/name": /missing required field "name"/ },
    },
    {
      name: "a missing apiVersion",
      docs: [{ kind: "MCPServer", metadata: { name: "x" }, spec: { image: "i" } }],
      want: ["error schema /apiVersion"],
    },
    {
      name: "a missing kind",
      docs: [{ apiVersion: V1, metadata: { name: "x" } }],
      want: ["error schema /kind"],
    },
    {
      name: "a kind that is not a string",
      docs: [{ apiVersion: V1, kind: 3, metadata: { name: "x" } }],
      want: ["error schema /kind"],
    },
    {
      name: "a top-level list",
      docs: [[server()]],
      want: ["error schema "],
    },
    {
      name: "a top-level scalar",
      docs: ["just text"],
      want: ["error schema "],
    },
    {
      name: "a kind of another group has no schema: an error, as kubeconform has it",
      docs: [{ apiVersion: "example.com/v1", kind: "MCPServer", metadata: { name: "x" } }],
      want: ["error schema /kind"],
      messages: {
        "/kind": /no schema for MCPServer of example\.com\/v1.*--ignore-missing-schemas/,
      },
    },
    {
      name: "a kind of another group is skipped with ignoreMissingSchemas",
      docs: [{ apiVersion: "example.com/v1", kind: "MCPServer", metadata: { name: "x" } }],
      options: { ignoreMissingSchemas: true },
      want: [],
    },
    {
      name: "a kustomization is not a resource, and says what to run instead",
      docs: [
        { apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources: ["a"] },
        { resources: ["a.yaml"], namespace: "tools" },
      ],
      want: ["error schema /kind", "error schema "],
      messages: { "/kind": /kustomize build DIR \| mcpfleet validate/ },
    },
    {
      name: "the items of a List",
      docs: [
        {
          apiVersion: "v1",
          kind: "List",
          items: [server({ proxyPort: "eighty" }), server({}, "second")],
        },
      ],
      want: ["error schema /spec/proxyPort"],
    },
  ];
  it.each(cases)("$name", run);

  it("names the kind, namespace and name of each resource", async () => {
    const report = await checkDocs([
      server(),
      { ...server({}, "b"), metadata: { name: "b", namespace: "team" } },
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
    ]);
    expect(report.resources.map((r) => [r.kind, r.namespace, r.name, r.valid, r.skipped])).toEqual([
      ["MCPServer", "default", "srv", true, false],
      ["MCPServer", "team", "b", true, false],
      ["ConfigMap", "default", "c", true, false],
    ]);
  });

  it("assumes --namespace where metadata has none", async () => {
    const report = await checkDocs([server()], { namespace: "tools" });
    expect(report.resources[0]?.namespace).toBe("tools");
  });
});

describe("cel level", () => {
  const cases: Case[] = [
    {
      name: "mutually exclusive fields",
      docs: [
        server({
          oidcConfig: { type: "kubernetes" },
          oidcConfigRef: { name: "idp", audience: "a" },
        }),
        res("MCPOIDCConfig", "idp", { type: "inline", inline: { issuer: "https://idp" } }),
      ],
      want: ["error cel /spec/oidcConfigRef"],
      messages: { "/spec/oidcConfigRef": /mutually exclusive/ },
    },
    {
      name: "a field required by another",
      docs: [server({ rateLimiting: { shared: { maxTokens: 5, refillPeriod: "1m" } } })],
      want: ["error cel /spec/rateLimiting"],
      messages: { "/spec/rateLimiting": /sessionStorage with provider redis/ },
    },
    {
      name: "a rule on a list item",
      docs: [
        res("VirtualMCPServer", "v", {
          groupRef: "g",
          incomingAuth: { type: "anonymous" },
          outgoingAuth: { source: "inline", backends: { b: { type: "external_auth_config_ref" } } },
        }),
        res("MCPGroup", "g"),
        server({ groupRef: "g" }, "b"),
      ],
      want: ["error cel /spec/outgoingAuth/backends/b/externalAuthConfigRef"],
    },
    {
      name: "schema and cel errors together",
      docs: [server({ proxyPort: -1, telemetry: {}, telemetryConfigRef: { name: "t" } })],
      options: { allowMissingRefs: true },
      want: [
        "error schema /spec/proxyPort",
        "error cel /spec/telemetryConfigRef",
        "warning reference /spec/telemetryConfigRef/name",
      ],
    },
  ];
  it.each(cases)("$name", run);
});

describe("reference level", () => {
  const group = res("MCPGroup", "eng");
  const cases: Case[] = [
    {
      name: "a groupRef naming a group given",
      docs: [group, server({ groupRef: "eng" })],
      want: [],
    },
    {
      name: "a groupRef as an object",
      docs: [group, server({ groupRef: { name: "eng" } })],
      want: [],
    },
    {
      name: "a missing group",
      docs: [server({ groupRef: "ops" })],
      want: ["error reference /spec/groupRef"],
      messages: { "/spec/groupRef": /MCPGroup "ops" not found in namespace default/ },
    },
    {
      name: "a missing group named by an object",
      docs: [server({ groupRef: { name: "ops" } })],
      want: ["error reference /spec/groupRef/name"],
    },
    {
      name: "missing references are warnings with --allow-missing-refs",
      docs: [server({ groupRef: "ops", toolConfigRef: { name: "t" } })],
      options: { allowMissingRefs: true },
      want: ["warning reference /spec/groupRef", "warning reference /spec/toolConfigRef/name"],
    },
    {
      name: "a reference into another namespace does not resolve, and says where the name is",
      docs: [
        { ...group, metadata: { name: "eng", namespace: "other" } },
        server({ groupRef: "eng" }),
      ],
      want: ["error reference /spec/groupRef"],
      messages: {
        "/spec/groupRef":
          /^groupRef: MCPGroup "eng" not found in namespace default; it exists in namespace other, and a reference names a resource of its own namespace \(this resource has no metadata\.namespace, so it is in default\)$/,
      },
    },
    {
      name: "a resource in another namespace than the one it refers to, named explicitly",
      docs: [
        { ...group, metadata: { name: "eng", namespace: "team-a" } },
        { ...group, metadata: { name: "eng", namespace: "team-c" } },
        { ...server({ groupRef: "eng" }), metadata: { name: "srv", namespace: "team-b" } },
      ],
      want: ["error reference /spec/groupRef"],
      messages: {
        "/spec/groupRef":
          /^groupRef: MCPGroup "eng" not found in namespace team-b; it exists in namespaces team-a, team-c, and a reference names a resource of its own namespace$/,
      },
    },
    {
      name: "a mistyped reference names the closest resource of its kind in the namespace",
      docs: [
        res("MCPGroup", "team-a-tools"),
        res("MCPToolConfig", "team-a-tool"),
        server({ groupRef: "team-a-tool" }),
      ],
      want: ["error reference /spec/groupRef"],
      messages: {
        "/spec/groupRef":
          /^groupRef: MCPGroup "team-a-tool" not found in namespace default \(did you mean "team-a-tools"\?\)$/,
      },
    },
    {
      name: "a mistyped backend workload name names the closest workload",
      docs: [
        res("MCPGroup", "g"),
        server({ groupRef: "g" }, "github"),
        res("VirtualMCPServer", "v", {
          groupRef: "g",
          incomingAuth: { type: "anonymous" },
          outgoingAuth: { backends: { githb: { type: "discovered" } } },
        }),
      ],
      want: ["error reference /spec/outgoingAuth/backends/githb"],
      messages: { "/spec/outgoingAuth/backends/githb": /\(did you mean "github"\?\)$/ },
    },
    {
      name: "a reference to a resource of the wrong kind",
      docs: [res("MCPToolConfig", "eng"), server({ groupRef: "eng" })],
      want: ["error reference /spec/groupRef"],
    },
    {
      name: "every reference of an MCPServer",
      docs: [
        server({
          toolConfigRef: { name: "tc" },
          externalAuthConfigRef: { name: "ea" },
          authServerRef: { kind: "MCPExternalAuthConfig", name: "as" },
          telemetryConfigRef: { name: "tel" },
          oidcConfigRef: { name: "oidc", audience: "srv" },
        }),
      ],
      want: [
        "error reference /spec/toolConfigRef/name",
        "error reference /spec/externalAuthConfigRef/name",
        "error reference /spec/authServerRef/name",
        "error reference /spec/telemetryConfigRef/name",
        "error reference /spec/oidcConfigRef/name",
      ],
    },
    {
      name: "the references of a VirtualMCPServer, nested ones included",
      docs: [
        res("VirtualMCPServer", "v", {
          groupRef: { name: "g" },
          incomingAuth: { type: "oidc", oidcConfigRef: { name: "o", audience: "v" } },
          outgoingAuth: {
            source: "inline",
            default: { type: "external_auth_config_ref", externalAuthConfigRef: { name: "d" } },
            backends: {
              b: { type: "external_auth_config_ref", externalAuthConfigRef: { name: "e" } },
            },
          },
          telemetryConfigRef: { name: "t" },
          embeddingServerRef: { name: "emb" },
          config: {
            compositeToolRefs: [{ name: "wf" }],
            aggregation: { tools: [{ workload: "b", toolConfigRef: { name: "tc" } }] },
          },
        }),
        server({ groupRef: "g" }, "b"),
      ],
      want: [
        "error reference /spec/groupRef/name",
        "error reference /spec/incomingAuth/oidcConfigRef/name",
        "error reference /spec/outgoingAuth/default/externalAuthConfigRef/name",
        "error reference /spec/outgoingAuth/backends/b/externalAuthConfigRef/name",
        "error reference /spec/telemetryConfigRef/name",
        "error reference /spec/embeddingServerRef/name",
        "error reference /spec/config/compositeToolRefs/0/name",
        "error reference /spec/config/aggregation/tools/0/toolConfigRef/name",
        "error reference /spec/groupRef",
      ],
    },
    {
      name: "backend workload names of a virtual server",
      docs: [
        res("MCPGroup", "g"),
        server({ groupRef: "g" }, "fetch"),
        res("VirtualMCPServer", "v", {
          groupRef: "g",
          incomingAuth: { type: "anonymous" },
          outgoingAuth: {
            backends: { fetch: { type: "discovered" }, ghost: { type: "discovered" } },
          },
          config: {
            backends: [{ name: "static", url: "https://s.example.com", transport: "sse" }],
            aggregation: {
              tools: [{ workload: "fetch" }, { workload: "static" }, { workload: "nope" }],
              conflictResolution: "priority",
              conflictResolutionConfig: { priorityOrder: ["fetch", "missing"] },
            },
          },
        }),
      ],
      want: [
        "error reference /spec/outgoingAuth/backends/ghost",
        "error reference /spec/config/aggregation/tools/2/workload",
        "error reference /spec/config/aggregation/conflictResolutionConfig/priorityOrder/1",
      ],
    },
    {
      name: "a duplicate kind/namespace/name",
      docs: [group, group],
      want: ["error reference /metadata/name"],
      messages: {
        "/metadata/name": /duplicate MCPGroup default\/eng: also defined at test.yaml:1/,
      },
    },
    {
      name: "the same name in two namespaces is no duplicate",
      docs: [group, { ...group, metadata: { name: "eng", namespace: "ops" } }],
      want: [],
    },
    {
      name: "an MCPServer and an MCPRemoteProxy sharing a name",
      docs: [server({}, "github"), res("MCPRemoteProxy", "github", { remoteURL: "https://x" })],
      want: ["error reference /metadata/name", "error reference /metadata/name"],
      messages: {
        "/metadata/name":
          /MCPServer default\/github and MCPRemoteProxy default\/github \(test.yaml:\d+\) would both create the Deployment "github" and the ConfigMap "github-runconfig"/,
      },
    },
    {
      name: "a VirtualMCPServer and an MCPServer sharing a name",
      docs: [
        res("MCPGroup", "g"),
        server({}, "api"),
        res("VirtualMCPServer", "api", { groupRef: "g", incomingAuth: { type: "anonymous" } }),
      ],
      want: ["error reference /metadata/name", "error reference /metadata/name"],
      messages: { "/metadata/name": /would both create the Deployment "api"$/ },
    },
    {
      name: "an MCPRegistry's Deployment named like another workload",
      docs: [
        server({}, "catalog-api"),
        res("MCPRegistry", "catalog", {
          configYAML:
            "sources:\n  - name: k\n    kubernetes: {}\nregistries:\n  - name: d\n    sources: [k]\nauth:\n  mode: anonymous\n",
        }),
      ],
      want: ["error reference /metadata/name", "error reference /metadata/name"],
      messages: { "/metadata/name": /Deployment "catalog-api"/ },
    },
    {
      name: "the same name for kinds that create different objects",
      docs: [
        server({}, "x"),
        res("MCPGroup", "x"),
        res("MCPToolConfig", "x"),
        res("EmbeddingServer", "x"),
      ],
      want: [],
    },
    {
      name: "two servers with one audience and issuer",
      docs: [
        res("MCPOIDCConfig", "idp", { type: "inline", inline: { issuer: "https://idp" } }),
        server({ oidcConfigRef: { name: "idp", audience: "mcp" } }, "a"),
        res("MCPRemoteProxy", "b", {
          remoteURL: "https://x",
          oidcConfigRef: { name: "idp", audience: "mcp" },
        }),
        server({ oidcConfigRef: { name: "idp", audience: "c" } }, "c"),
      ],
      want: [
        "error reference /spec/oidcConfigRef/audience",
        "error reference /spec/oidcConfigRef/audience",
      ],
      messages: { "/spec/oidcConfigRef/audience": /audience "mcp" is also used by/ },
    },
    {
      name: "one audience under two different issuers",
      docs: [
        res("MCPOIDCConfig", "a", { type: "inline", inline: { issuer: "https://a" } }),
        res("MCPOIDCConfig", "b", { type: "inline", inline: { issuer: "https://b" } }),
        server({ oidcConfigRef: { name: "a", audience: "mcp" } }, "s1"),
        server({ oidcConfigRef: { name: "b", audience: "mcp" } }, "s2"),
      ],
      want: [],
    },
  ];
  it.each(cases)("$name", run);
});

describe("MCPRegistry and registry-server configuration", () => {
  const source = (name: string, extra: Doc = {}) => ({
    name,
    git: { repository: "https://github.com/example/registry" },
    syncPolicy: { interval: "1h" },
    ...extra,
  });
  const config = (sources: unknown[], registries: unknown[]) => ({
    sources,
    registries,
    auth: { mode: "anonymous" },
  });
  const cases: Case[] = [
    {
      name: "a valid configuration file",
      docs: [config([source("a")], [{ name: "default", sources: ["a"] }])],
      want: [],
    },
    {
      name: "a registry naming an undefined source",
      docs: [config([source("a")], [{ name: "default", sources: ["a", "b"] }])],
      want: ["error reference /registries/0/sources/1"],
      messages: { "/registries/0/sources/1": /names source "b", which is not defined/ },
    },
    {
      name: "two managed sources",
      docs: [
        config(
          [
            { name: "m1", managed: {} },
            { name: "m2", managed: {} },
          ],
          [{ name: "default", sources: ["m1", "m2"] }],
        ),
      ],
      want: ["error reference /sources/1/managed"],
    },
    {
      name: "a schema error in a configuration file",
      docs: [config([source("Bad_Name")], [{ name: "default", sources: ["Bad_Name"] }])],
      want: ["error schema /sources/0/name", "error schema /registries/0/sources/0"],
    },
    {
      name: "an MCPRegistry's legacy views and sources",
      docs: [
        res("MCPRegistry", "r", {
          sources: [
            { name: "m1", managed: {} },
            { name: "m2", managed: {} },
          ],
          registries: [{ name: "default", sources: ["m1", "zz"] }],
        }),
      ],
      want: [
        "error reference /spec/sources/1/managed",
        "error reference /spec/registries/0/sources/1",
      ],
    },
    {
      name: "an MCPRegistry's configYAML is validated as a configuration file",
      docs: [
        res("MCPRegistry", "r", {
          configYAML:
            "sources:\n  - name: a\n    managed: {}\nregistries:\n  - name: d\n    sources: [b]\nauth:\n  mode: anonymous\n",
        }),
      ],
      want: ["error runtime /spec/configYAML"],
      messages: { "/spec/configYAML": /configYAML at \/registries\/0\/sources\/0: .*"b"/ },
    },
    {
      name: "--registry-config forces the shape",
      docs: [{ sources: "not a list", extra: 1 }],
      options: { registryConfig: true },
      want: [
        "error schema /sources",
        "error schema /registries",
        "error schema /extra",
        "error cel /auth",
      ],
      messages: { "/auth": /auth is required/ },
    },
    {
      name: "an unknown field of a configuration is a warning with --unknown-fields=warn",
      docs: [{ ...config([source("a")], [{ name: "d", sources: ["a"] }]), registires: [] }],
      options: { unknownFields: "warn" },
      want: ["warning schema /registires"],
      messages: { "/registires": /did you mean "registries"/ },
    },
  ];
  it.each(cases)("$name", run);

  it("names a configuration file after the file", async () => {
    const report = await checkDocs([config([source("a")], [{ name: "d", sources: ["a"] }])]);
    expect(report.resources[0]).toMatchObject({ kind: "RegistryServerConfig", name: "test" });
  });
});

describe("core Kubernetes kinds", () => {
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "d" },
    spec: {
      replicas: "two",
      selector: { matchLabels: { app: "d" } },
      template: { metadata: { labels: { app: "d" } }, spec: { containers: [{ image: "x" }] } },
    },
  };
  const cases: Case[] = [
    {
      name: "core kinds are skipped with kube: false (--no-kube)",
      docs: [deployment],
      options: { kube: false },
      want: [],
    },
    {
      name: "core kinds are checked by default",
      docs: [deployment],
      want: ["error schema /spec/replicas", "error schema /spec/template/spec/containers/0/name"],
    },
    {
      name: "a misspelt core kind",
      docs: [{ ...deployment, kind: "Deploymnet" }],
      want: ["error schema /kind"],
      messages: {
        "/kind": /unknown kind "Deploymnet" in apps\/v1 \(did you mean "Deployment"\?\)$/,
      },
    },
    {
      name: "a core kind in a version that does not have it",
      docs: [{ ...deployment, apiVersion: "v1" }],
      want: ["error schema /kind"],
      messages: { "/kind": /no Deployment in v1; Kubernetes serves it as apps\/v1$/ },
    },
    {
      name: "a core kind kubernetes-models lacks is skipped with ignoreMissingSchemas",
      docs: [{ ...deployment, kind: "Deploymnet" }],
      options: { ignoreMissingSchemas: true },
      want: [],
    },
    {
      name: "a valid Service",
      docs: [
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "s" },
          spec: { ports: [{ port: 80 }] },
        },
      ],
      options: { kube: true },
      want: [],
    },
    {
      name: "kinds of other groups are skipped with ignoreMissingSchemas",
      docs: [{ apiVersion: "databases.example.com/v1", kind: "Redis", metadata: { name: "r" } }],
      options: { ignoreMissingSchemas: true },
      want: [],
    },
  ];
  it.each(cases)("$name", run);

  it("reports which were checked and which skipped", async () => {
    const report = await checkDocs(
      [deployment, { apiVersion: "example.com/v1", kind: "Thing", metadata: { name: "t" } }],
      { ignoreMissingSchemas: true },
    );
    expect(report.resources.map((r) => [r.kind, r.valid, r.skipped])).toEqual([
      ["Deployment", false, false],
      ["Thing", true, true],
    ]);
  });
});

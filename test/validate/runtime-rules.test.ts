// The run-time level: rules the operator checks when it reconciles, which the API server does
// not; each found by validate as a `runtime` issue at the field it concerns.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cedarShapeError } from "../../src/validate/cedar-shape.js";
import { privateEndpoint } from "../../src/validate/endpoint-guard.js";
import { type Doc, ROOT, checkDocs, issues, res, tempDir, yamlDocs } from "./helpers.js";

const CTD = "VirtualMCPCompositeToolDefinition";

function tool(spec: Doc): Doc {
  return res(CTD, "t", { name: "t", description: "does things", ...spec });
}

/** The run-time issues of documents, as `path: message` with the severity when a warning. */
async function runtime(...docs: Doc[]): Promise<string[]> {
  const report = await checkDocs(docs, { allowMissingRefs: true });
  return issues(report)
    .filter((i) => i.level === "runtime")
    .map((i) => `${i.path}${i.severity === "warning" ? " (warning)" : ""}: ${i.message}`);
}

describe("composite-tool workflows", () => {
  it("accepts a workflow that satisfies every rule", async () => {
    const steps = [
      { id: "a", tool: "github.get_issue", condition: "{{.params.go}}", defaultResults: { x: 1 } },
      {
        id: "b",
        tool: "github.create_issue",
        dependsOn: ["a"],
        arguments: { v: "{{.steps.a.output.x}}" },
      },
      { id: "c", tool: "fetch", onError: { action: "retry", retryCount: 2 } },
    ];
    expect(await runtime(tool({ steps }))).toEqual([]);
  });

  it("requires a description", async () => {
    const doc = res(CTD, "t", { name: "t", steps: [{ id: "a", tool: "x.y" }] });
    expect(await runtime(doc)).toEqual([
      "/spec/description: description is required: it is what clients are told the tool does",
    ]);
  });

  it("requires retryCount of at least 1 with action retry", async () => {
    const steps = [{ id: "a", tool: "x.y", onError: { action: "retry" } }];
    expect(await runtime(tool({ steps }))).toEqual([
      "/spec/steps/0/onError/retryCount: retryCount must be at least 1 with action retry",
    ]);
  });

  it("finds a dependency cycle and names its steps", async () => {
    const steps = [
      { id: "a", tool: "x.y", dependsOn: ["c"] },
      { id: "b", tool: "x.y", dependsOn: ["a"] },
      { id: "c", tool: "x.y", dependsOn: ["b"] },
    ];
    const found = await runtime(tool({ steps }));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^\/spec\/steps: dependency cycle: a -> c -> b -> a/);
  });

  it("requires the defaultResults later steps and the output read from a skippable step", async () => {
    const steps = [
      { id: "a", tool: "x.y", condition: "{{.params.go}}", defaultResults: { data: 1 } },
      { id: "b", tool: "x.y", onError: { action: "continue" } },
      { id: "c", tool: "x.y", arguments: { v: "{{.steps.a.output.other}}" } },
    ];
    const output = { properties: { r: { type: "string", value: "{{.steps.b.output.text}}" } } };
    expect(await runtime(tool({ steps, output }))).toEqual([
      "/spec/steps/0/defaultResults: defaultResults.other required: later steps use this step's output, which is empty when the step is skipped (it has a condition)",
      "/spec/steps/1/defaultResults: defaultResults.text required: later steps use this step's output, which is empty when the step is skipped (it has onError action continue)",
    ]);
  });

  it("checks a virtual server's inline composite tools too (a missing description warns)", async () => {
    const steps = [{ id: "a", tool: "x.y", onError: { action: "retry" } }];
    const vmcp = res("VirtualMCPServer", "v", {
      groupRef: "g",
      incomingAuth: { type: "anonymous" },
      config: { groupRef: "g", compositeTools: [{ name: "t", steps }] },
    });
    expect(await runtime(vmcp)).toEqual([
      "/spec/config/compositeTools/0/steps/0/onError/retryCount: retryCount must be at least 1 with action retry",
      "/spec/config/compositeTools/0/description (warning): no description: clients are told nothing of what the tool does",
    ]);
  });
});

describe("pod templates", () => {
  it("make synth refuse the input with validate's errors (exit 1), never crash", () => {
    const dir = tempDir();
    const bad = { spec: { containers: "mcp" } };
    const file = join(dir, "bad.yaml");
    writeFileSync(
      file,
      yamlDocs(
        res("MCPServer", "s", { image: "i", podTemplateSpec: bad }),
        res("EmbeddingServer", "e", { podTemplateSpec: bad }),
        res("MCPRegistry", "r", { configYAML: "x: 1", podTemplateSpec: bad }),
        res("MCPGroup", "g"),
        res("VirtualMCPServer", "v", {
          groupRef: "g",
          incomingAuth: { type: "anonymous" },
          podTemplateSpec: bad,
        }),
      ),
    );
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "synth", file, "-o", "yaml"],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(run.status).toBe(1);
    // The errors are printed as validate prints them; nothing is rendered.
    expect(run.stderr).toContain("synth: invalid input; nothing written");
    expect(run.stderr + run.stdout).not.toContain("TypeError");
    const lines = run.stdout
      .split("\n")
      .filter((l) => l.includes("/spec/podTemplateSpec/spec/containers: must be array"));
    expect(lines).toHaveLength(4);
  });

  it("refuses a template that is not a PodTemplateSpec, on every kind that has one", async () => {
    const bad = { spec: { containers: "mcp" } };
    const docs = [
      res("MCPServer", "s", { image: "i", podTemplateSpec: bad }),
      res("EmbeddingServer", "e", { podTemplateSpec: bad }),
      res("MCPRegistry", "r", { configYAML: "x: 1", podTemplateSpec: bad }),
    ];
    const found = await runtime(...docs);
    expect(
      found.filter((f) => f.startsWith("/spec/podTemplateSpec/spec/containers: must be array")),
    ).toHaveLength(3);
  });

  it("accepts a partial template (no image, no containers) and requires container names", async () => {
    const ok = res("MCPServer", "s", {
      image: "i",
      podTemplateSpec: {
        spec: { nodeSelector: { a: "b" }, containers: [{ name: "mcp", resources: {} }] },
      },
    });
    expect(await runtime(ok)).toEqual([]);
    const unnamed = res("MCPServer", "s", {
      image: "i",
      podTemplateSpec: { spec: { containers: [{ resources: {} }] } },
    });
    expect(await runtime(unnamed)).toEqual([
      '/spec/podTemplateSpec/spec/containers/0/name: missing required field "name": containers are merged by name (the mcp container is named "mcp")',
    ]);
  });
});

describe("catalog entries", () => {
  it.each([
    ["http://127.0.0.1:8080/", "a loopback address"],
    ["http://[::1]/", "a loopback address"],
    [
      "http://169.254.169.254/latest/meta-data/",
      "a link-local address (cloud metadata endpoints live there)",
    ],
    ["http://10.0.0.5:8080", "a private address"],
    ["https://172.20.1.1", "a private address"],
    ["https://192.168.1.1", "a private address"],
    ["http://localhost:9000", "localhost"],
    ["http://[fd00::1]/", "a unique local (private) address"],
    ["http://[::ffff:127.0.0.1]/", "a loopback address"],
  ])("%s names %s", (url, why) => {
    expect(privateEndpoint(url)).toBe(why);
  });

  it.each([
    "https://example.com/mcp",
    "http://172.32.0.1",
    "http://mcp.tools.svc:8080",
    "not a url",
  ])("%s is not private", (url) => {
    expect(privateEndpoint(url)).toBeUndefined();
  });

  it("refuses a private URL unless allowPrivateEndpoint is set", async () => {
    const entry = (extra: Doc) =>
      res("MCPServerEntry", "e", {
        remoteURL: "http://10.0.0.5:8080",
        transport: "sse",
        groupRef: "g",
        ...extra,
      });
    expect(await runtime(entry({}))).toEqual([
      "/spec/remoteURL: remoteURL names a private address; set allowPrivateEndpoint: true if the entry is meant to reach it",
    ]);
    expect(await runtime(entry({ allowPrivateEndpoint: true }))).toEqual([]);
  });
});

describe("virtual server optimizer and telemetry", () => {
  const vmcp = (spec: Doc) =>
    res("VirtualMCPServer", "v", { groupRef: "g", incomingAuth: { type: "anonymous" }, ...spec });

  it("refuses an optimizer without an embedding service", async () => {
    expect(await runtime(vmcp({ config: { groupRef: "g", optimizer: {} } }))).toEqual([
      "/spec/config/optimizer: the optimizer needs an embedding service: set embeddingServerRef or optimizer.embeddingService",
    ]);
  });

  it("warns when embeddingServerRef overrides optimizer.embeddingService", async () => {
    const doc = vmcp({
      embeddingServerRef: { name: "emb" },
      config: { groupRef: "g", optimizer: { embeddingService: "http://emb:8080" } },
    });
    expect(await runtime(doc)).toEqual([
      "/spec/config/optimizer/embeddingService (warning): embeddingService is overridden by embeddingServerRef: the referenced EmbeddingServer is used",
    ]);
  });

  it("refuses a CA bundle for an insecure OTLP endpoint", async () => {
    const doc = res("MCPTelemetryConfig", "t", {
      openTelemetry: {
        endpoint: "otel:4317",
        insecure: true,
        caBundleRef: { configMapRef: { name: "ca", key: "ca.crt" } },
      },
    });
    expect(await runtime(doc)).toEqual([
      "/spec/openTelemetry/caBundleRef: caBundleRef cannot be set when insecure is true: a CA bundle is for TLS, insecure turns TLS off",
    ]);
  });
});

describe("authorization servers (reference level)", () => {
  const ext = (name: string, spec: Doc) => res("MCPExternalAuthConfig", name, spec);
  const embedded = ext("auth", {
    type: "embeddedAuthServer",
    embeddedAuthServer: {
      issuer: "https://auth.example.com",
      upstreamProviders: [
        {
          name: "github",
          type: "oauth2",
          oauth2Config: {
            authorizationEndpoint: "https://github.com/login/oauth/authorize",
            tokenEndpoint: "https://github.com/login/oauth/access_token",
            clientId: "c",
            userInfo: { endpointUrl: "https://api.github.com/user" },
          },
        },
      ],
    },
  });
  const inject = (provider: string) =>
    ext("inject", { type: "upstreamInject", upstreamInject: { providerName: provider } });
  const server = (spec: Doc) => res("MCPServer", "s", { image: "i", ...spec });

  async function referenceIssues(...docs: Doc[]): Promise<string[]> {
    const report = await checkDocs(docs);
    return issues(report)
      .filter((i) => i.level === "reference")
      .map((i) => `${i.resource} ${i.path}: ${i.message}`);
  }

  it("accepts an embedded server and an upstreamInject of one of its providers", async () => {
    const s = server({
      authServerRef: { name: "auth" },
      externalAuthConfigRef: { name: "inject" },
    });
    expect(await referenceIssues(s, embedded, inject("github"))).toEqual([]);
  });

  it("refuses an authServerRef to another type of configuration, in either order", async () => {
    const sts = ext("auth", {
      type: "awsSts",
      awsSts: { region: "us-east-1", fallbackRoleArn: "arn:aws:iam::123456789012:role/r" },
    });
    const s = server({ authServerRef: { name: "auth" } });
    const expected = [
      'MCPServer/s /spec/authServerRef/name: authServerRef: MCPExternalAuthConfig "auth" is of type awsSts; an authorization server must be of type embeddedAuthServer',
    ];
    expect(await referenceIssues(s, sts)).toEqual(expected);
    expect(await referenceIssues(sts, s)).toEqual(expected);
  });

  it("refuses an upstreamInject provider the authorization server does not have", async () => {
    const s = server({
      authServerRef: { name: "auth" },
      externalAuthConfigRef: { name: "inject" },
    });
    expect(await referenceIssues(s, embedded, inject("google"))).toEqual([
      'MCPServer/s /spec/externalAuthConfigRef/name: externalAuthConfigRef: "inject" injects the token of upstream provider "google", which is not an upstream provider of authorization server "auth" (github)',
    ]);
    const alone = server({ externalAuthConfigRef: { name: "inject" } });
    expect(await referenceIssues(alone, inject("github"))).toEqual([
      'MCPServer/s /spec/externalAuthConfigRef/name: externalAuthConfigRef: "inject" injects the token of upstream provider "github", but the workload has no authServerRef (an embedded authorization server) with upstream providers',
    ]);
  });
});

describe("Cedar policies", () => {
  it.each([
    "permit(principal, action, resource);",
    'permit(principal, action == Action::"call_tool", resource == Tool::"weather");',
    '@id("read-only")\nforbid(principal, action, resource)\nwhen { resource.readOnlyHint == false }\nunless { principal.claim_groups.contains("admin") };',
    '// comment with ( and ;\npermit(principal in Group::"a(b)", action, resource) when { context.x like "*;)*" };',
    "permit(principal, action, resource);\nforbid(principal, action, resource) when { false };",
  ])("accepts %j", (policy) => {
    expect(cedarShapeError(policy)).toBeUndefined();
  });

  it.each([
    ["not valid cedar policy syntax", 'expected permit or forbid, found "not" at offset 0'],
    [
      "permit(principal, action, resource)",
      'expected ";" or a when/unless condition, found the end',
    ],
    [
      "permit(action, principal, resource);",
      'the scope must start with principal, found "action" at offset 7',
    ],
    ["permit(principal, action, resource", "unclosed bracket at offset 6"],
    ['permit(principal, action, resource) when { "x };', "unterminated string at offset 43"],
    ["", "no policy"],
  ])("refuses %j", (policy, why) => {
    expect(cedarShapeError(policy)).toBe(why);
  });

  it("reports an inline policy that is not Cedar at its place", async () => {
    const proxy = res("MCPRemoteProxy", "p", {
      remoteURL: "https://mcp.example.com",
      authzConfig: {
        type: "inline",
        inline: { policies: ["permit(principal, action, resource);", "nope"] },
      },
    });
    expect(await runtime(proxy)).toEqual([
      '/spec/authzConfig/inline/policies/1: not a Cedar policy: expected permit or forbid, found "nope" at offset 0',
    ]);
  });
});

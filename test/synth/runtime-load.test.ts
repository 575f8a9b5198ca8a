// The programs that read what synth renders load every file rendered from examples/ and from
// the reference operator's test inputs: the proxy runner's run-config through the runner's own
// decoder (runconfig-check; the runner has no check command and ignores unknown keys, so a key
// it would drop fails here), and the vmcp config through `vmcp validate` (its strict loader and
// validator), then `vmcp serve` on one of them until it answers /health.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/registry/config/load.js";
import { loadPaths, loadTexts } from "../../src/synth/load.js";
import type { KubeObject, Resource } from "../../src/synth/model.js";
import { DEFAULT_SYNTH_OPTIONS, TOOLHIVE_VERSION } from "../../src/synth/options.js";
import { synthesize } from "../../src/synth/render.js";
import { SHARED_DATA } from "../schema/helpers.js";
import { hasSharedData } from "../support/shared-data.js";
import {
  ROOT,
  notDecoded,
  pinnedToolhiveVersion,
  programPath,
  runtimeMissing,
} from "./runtime-tools.js";
import { freePort } from "../support/ports.js";

const missing = runtimeMissing();
if (missing !== undefined) console.warn(`runtime load tests SKIPPED: ${missing}`);
const PEER_INPUTS = join(SHARED_DATA, "peer-tests", "synth", "inputs");
const havePeer = hasSharedData(PEER_INPUTS, "runtime load of the reference inputs");

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-runtime-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Rendered {
  source: string;
  objects: KubeObject[];
}

/** Every input set synth renders in the tests: examples/ as one set, each peer input alone. */
async function renderedSets(): Promise<Rendered[]> {
  const sets: Rendered[] = [];
  const examples = await loadPaths([join(ROOT, "examples")]);
  expect(examples.valid).toBe(true);
  sets.push({
    source: "examples",
    objects: synthesize(examples.resources, DEFAULT_SYNTH_OPTIONS).objects,
  });
  sets.push({
    source: "examples + probes",
    objects: synthesize(
      [...examples.resources, ...probes(examples.resources)],
      DEFAULT_SYNTH_OPTIONS,
    ).objects,
  });
  const v1beta1 = await loadTexts([{ name: "v1beta1-auth.yaml", text: V1BETA1_AUTH_SERVER }]);
  expect(v1beta1.report.resources.flatMap((r) => r.errors)).toEqual([]);
  sets.push({
    source: "v1beta1 auth server",
    objects: synthesize(v1beta1.resources, DEFAULT_SYNTH_OPTIONS).objects,
  });
  if (havePeer) {
    for (const f of readdirSync(PEER_INPUTS)
      .filter((x) => x.endsWith(".yaml"))
      .sort()) {
      const loaded = await loadPaths([join(PEER_INPUTS, f)]);
      if (!loaded.valid) continue; // docs/compat.md: inputs validate refuses render nothing
      sets.push({
        source: f,
        objects: synthesize(loaded.resources, DEFAULT_SYNTH_OPTIONS).objects,
      });
    }
  }
  return sets;
}

/**
 * An embedded authorization server in the forms only v1beta1 admits: an OAuth 2.0 upstream
 * without userInfo, Redis Cluster by address, a password without a user name, confidential
 * client registration.
 */
const V1BETA1_AUTH_SERVER = `
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPExternalAuthConfig
metadata: { name: cluster-auth, namespace: default }
spec:
  type: embeddedAuthServer
  embeddedAuthServer:
    issuer: https://auth.example.com
    allowConfidentialClientRegistration: true
    upstreamProviders:
      - name: github
        type: oauth2
        oauth2Config:
          authorizationEndpoint: https://github.com/login/oauth/authorize
          tokenEndpoint: https://github.com/login/oauth/access_token
          clientId: client
    storage:
      type: redis
      redis:
        addr: redis-cluster.default.svc:6379
        clusterMode: true
        aclUserConfig:
          passwordSecretRef: { name: redis, key: password }
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata: { name: behind-cluster-auth, namespace: default }
spec:
  image: ghcr.io/example/probe:1
  transport: streamable-http
  authServerRef: { name: cluster-auth }
`;

/**
 * MCPServers that use what no example MCPServer does: each example MCPExternalAuthConfig (an
 * embedded authorization server by authServerRef), Redis session storage and backend replicas;
 * and the engineering gateway with the VirtualMCPServer fields later than the spec that synth
 * renders (an OpenAI-compatible optimizer, per-user rate limits, the backend auth type spelled
 * externalAuthConfigRef).
 */
function probes(resources: Resource[]): Resource[] {
  const server = (name: string, namespace: string, spec: Record<string, unknown>): Resource =>
    ({
      apiVersion: "toolhive.stacklok.dev/v1alpha1",
      kind: "MCPServer",
      metadata: { name, namespace },
      spec: { image: "ghcr.io/example/probe:1", transport: "streamable-http", ...spec },
    }) as unknown as Resource;
  const out = resources
    .filter((r) => r.kind === "MCPExternalAuthConfig")
    .map((r) =>
      server(`probe-${r.metadata.name}`, r.metadata.namespace, {
        [(r.spec as { type: string }).type === "embeddedAuthServer"
          ? "authServerRef"
          : "externalAuthConfigRef"]: { name: r.metadata.name },
      }),
    );
  out.push(
    server("probe-scaling", "default", {
      backendReplicas: 2,
      sessionStorage: {
        provider: "redis",
        address: "redis:6379",
        db: 1,
        keyPrefix: "p:",
        passwordRef: { name: "redis", key: "password" },
      },
    }),
  );
  const gateway = resources.find(
    (r) =>
      r.kind === "VirtualMCPServer" &&
      (r.spec as { outgoingAuth?: { backends?: unknown } }).outgoingAuth?.backends !== undefined,
  );
  if (gateway !== undefined) out.push(laterFieldsGateway(gateway));
  return out;
}

function laterFieldsGateway(gateway: Resource): Resource {
  const spec = gateway.spec as Record<string, unknown> & {
    config?: Record<string, unknown>;
    outgoingAuth?: { backends?: Record<string, { type: string }> };
  };
  const backends = Object.fromEntries(
    Object.entries(spec.outgoingAuth?.backends ?? {}).map(([name, b]) => [
      name,
      { ...b, type: "externalAuthConfigRef" },
    ]),
  );
  return {
    ...gateway,
    metadata: { ...gateway.metadata, name: "probe-later-fields" },
    spec: {
      ...spec,
      outgoingAuth: { ...spec.outgoingAuth, backends },
      config: {
        ...spec.config,
        optimizer: {
          embeddingProvider: "openai",
          embeddingService: "https://embeddings.example.com/v1",
          embeddingModel: "text-embedding-3-small",
          embeddingHeaders: { "X-Team": "engineering" },
        },
        rateLimiting: {
          shared: { maxTokens: 100, refillPeriod: "1m" },
          perUser: { maxTokens: 20, refillPeriod: "1m" },
          tools: [{ name: "search", perUser: { maxTokens: 5, refillPeriod: "30s" } }],
        },
      },
    },
  } as unknown as Resource;
}

function configFiles(sets: Rendered[], key: string): { name: string; text: string }[] {
  return sets.flatMap((s) =>
    s.objects
      .filter((o) => o.kind === "ConfigMap")
      .flatMap((o) => {
        const text = (o as { data?: Record<string, string> }).data?.[key];
        return text === undefined
          ? []
          : [{ name: `${s.source} ${o.metadata.namespace ?? ""}/${o.metadata.name}`, text }];
      }),
  );
}

/**
 * The variables of the vmcp container of the Deployment rendered with the config named
 * `file.name` (`<source> <ns>/<n>-vmcp-config` → Deployment `<n>`), each with a stand-in value:
 * vmcp resolves the variables its config names when it loads it, so a name the config uses
 * and the container lacks fails the load.
 */
function vmcpEnvFor(sets: Rendered[], file: { name: string }): Record<string, string> {
  const m = /^(.*) (.*)\/(.*)-vmcp-config$/.exec(file.name);
  const set = sets.find((x) => x.source === m?.[1]);
  const deployment = set?.objects.find(
    (o) => o.kind === "Deployment" && o.metadata.namespace === m?.[2] && o.metadata.name === m?.[3],
  );
  if (deployment === undefined) throw new Error(`no Deployment rendered with ${file.name}`);
  const containers = (
    deployment as unknown as {
      spec: { template: { spec: { containers: { name: string; env?: { name: string }[] }[] } } };
    }
  ).spec.template.spec.containers;
  const env: Record<string, string> = {};
  for (const e of containers.find((c) => c.name === "vmcp")?.env ?? []) env[e.name] = "test-value";
  return env;
}

function secretEnvOnly(env: Record<string, string>): Record<string, string> {
  const { VMCP_NAME: _n, VMCP_NAMESPACE: _ns, POD_NAMESPACE: _p, ...rest } = env;
  void [_n, _ns, _p];
  return rest;
}

describe("pinned runtime versions", () => {
  it("the default images carry the version the programs are built at, none :latest", () => {
    expect(pinnedToolhiveVersion()).toBe(TOOLHIVE_VERSION);
    expect(DEFAULT_SYNTH_OPTIONS.runnerImage).toMatch(new RegExp(`:${TOOLHIVE_VERSION}$`));
    expect(DEFAULT_SYNTH_OPTIONS.vmcpImage).toMatch(new RegExp(`:${TOOLHIVE_VERSION}$`));
    for (const image of Object.values(DEFAULT_SYNTH_OPTIONS)) expect(image).not.toMatch(/latest$/);
  });
});

describe.skipIf(missing !== undefined)("the runtime programs load what synth renders", () => {
  it("the proxy runner decodes every rendered run-config, every key as written", async () => {
    const files = configFiles(await renderedSets(), "runconfig.json");
    expect(files.length).toBeGreaterThan(10);
    const failures: string[] = [];
    for (const [i, f] of files.entries()) {
      const path = join(dir, `runconfig-${i}.json`);
      writeFileSync(path, f.text);
      const run = spawnSync(programPath("runconfig-check"), [path], { encoding: "utf8" });
      if (run.status !== 0) {
        failures.push(`${f.name}: ${run.stderr.trim()}`);
        continue;
      }
      const lost = notDecoded(JSON.parse(f.text), JSON.parse(run.stdout));
      if (lost.length > 0) failures.push(`${f.name}: ${lost.join(", ")}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it("v1beta1's Redis Cluster by address reaches the runner as written", async () => {
    const [file] = configFiles(await renderedSets(), "runconfig.json").filter((f) =>
      f.name.startsWith("v1beta1 auth server"),
    );
    const path = join(dir, "v1beta1-auth.json");
    writeFileSync(path, file!.text);
    const run = spawnSync(programPath("runconfig-check"), [path], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    const auth = (JSON.parse(run.stdout) as Record<string, Record<string, unknown>>)
      .embedded_auth_server_config!;
    expect(auth.allow_confidential_client_registration).toBe(true);
    const redis = (auth.storage as { redis_config: Record<string, unknown> }).redis_config;
    expect(redis).toMatchObject({ addr: "redis-cluster.default.svc:6379", cluster_mode: true });
    expect(redis.sentinel_config).toBeUndefined();
    const [upstream] = auth.upstreams as { oauth2_config: Record<string, unknown> }[];
    expect(upstream!.oauth2_config.userinfo).toBeUndefined();
  });

  it("the runner refuses confidential registration behind a cleartext issuer (the check can fail)", async () => {
    const [file] = configFiles(await renderedSets(), "runconfig.json").filter((f) =>
      f.name.startsWith("v1beta1 auth server"),
    );
    const config = JSON.parse(file!.text) as { embedded_auth_server_config: { issuer: string } };
    config.embedded_auth_server_config.issuer = "http://auth.example.com";
    const path = join(dir, "v1beta1-auth-http.json");
    writeFileSync(path, JSON.stringify(config));
    const run = spawnSync(programPath("runconfig-check"), [path], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/confidential/);
  });

  it("a run-config with a key the runner does not read is refused (the check can fail)", () => {
    const path = join(dir, "unknown.json");
    writeFileSync(
      path,
      JSON.stringify({ name: "x", image: "y", transport: "stdio", session_storage: {} }),
    );
    const run = spawnSync(programPath("runconfig-check"), [path], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/session_storage/);
  });

  it("vmcp validate accepts every rendered vmcp config", async () => {
    const sets = await renderedSets();
    const files = configFiles(sets, "config.yaml").filter((f) => / .*-vmcp-config$/.test(f.name));
    expect(files.length).toBeGreaterThan(3);
    const failures: string[] = [];
    for (const [i, f] of files.entries()) {
      const path = join(dir, `vmcp-${i}.yaml`);
      writeFileSync(path, f.text);
      const run = spawnSync(programPath("vmcp"), ["validate", "--config", path], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, ...vmcpEnvFor(sets, f) },
      });
      if (run.status !== 0) failures.push(`${f.name}: ${(run.stderr + run.stdout).trim()}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it("vmcp validate refuses a config with a key it does not read (the check can fail)", () => {
    const path = join(dir, "vmcp-unknown.yaml");
    writeFileSync(path, "name: x\ngroupRef: g\nincomingAuth: {type: anonymous}\nnotAKey: 1\n");
    const run = spawnSync(programPath("vmcp"), ["validate", "--config", path], {
      encoding: "utf8",
    });
    expect(run.status).not.toBe(0);
  });

  it("vmcp serve starts with a rendered config and answers /health", async () => {
    const sets = await renderedSets();
    const file = configFiles(sets, "config.yaml").find((f) =>
      f.name.endsWith("/engineering-tools-vmcp-config"),
    );
    expect(file).toBeDefined();
    const path = join(dir, "serve.yaml");
    writeFileSync(path, file!.text);
    const port = await freePort();
    const child = spawn(
      programPath("vmcp"),
      ["serve", `--config=${path}`, "--host=127.0.0.1", `--port=${port}`],
      // Without VMCP_NAME and VMCP_NAMESPACE, which make it report its status through the
      // in-cluster API server (its pod's account), vmcp serves on its own.
      {
        env: { PATH: process.env.PATH, ...secretEnvOnly(vmcpEnvFor(sets, file!)) },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let log = "";
    child.stdout.on("data", (d: Buffer) => (log += d.toString()));
    child.stderr.on("data", (d: Buffer) => (log += d.toString()));
    try {
      const status = await pollHealth(port, () => child.exitCode !== null);
      expect(status, log).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
  }, 90_000);
});

// The reference registry server (github.com/stacklok/toolhive-registry-server) is not served by
// the Go module proxy, so it cannot be built here: its rendered configs are checked against its
// documented format, which our registry server's loader implements (schemas/config).
describe("the registry server's configuration", () => {
  it("every rendered registry config.yaml loads without an error or a warning", async () => {
    const files = configFiles(await renderedSets(), "config.yaml").filter((f) =>
      f.name.endsWith("-registry-server-config"),
    );
    expect(files.length).toBeGreaterThan(1);
    for (const f of files) expect(parseConfig(f.text, f.name).warnings, f.name).toEqual([]);
  });
});

async function pollHealth(port: number, exited: () => boolean): Promise<number | undefined> {
  for (let i = 0; i < 600; i++) {
    if (exited()) return undefined;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      return res.status;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return undefined;
}

// `make bench` for `mcpfleet validate`: a generated corpus of 10,000 resources of every kind
// (realistic sizes, about 10% invalid, 200 files), validated at all three levels in one process,
// against the floor of only reading and YAML-parsing the same corpus; the same with worker
// threads; and the cold start of the built CLI on one small file against `node -e 0`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { CORE_SCHEMA, constructFromEvents, parseEvents } from "js-yaml";
import { parseAllDocuments, stringify } from "yaml";
import type { validatePaths as ValidatePaths } from "../src/validate/index.js";
import type { Summary } from "../src/validate/types.js";
import type { plainValues as PlainValues } from "../src/yaml/values.js";

const RESOURCES = Number(process.env.BENCH_RESOURCES ?? 10_000);
const FILES = 200;
const TARGET_RATE = 10_000;
const TARGET_FLOOR_RATIO = 1.5;
const ROOT = join(import.meta.dirname, "..");
const V = "toolhive.stacklok.dev/v1alpha1";

type Doc = Record<string, unknown>;

/** A small deterministic generator, so every run sees the same corpus. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const meta = (name: string, ns: string, extra: Doc = {}) => ({
  name,
  namespace: ns,
  labels: { "app.kubernetes.io/part-of": "platform", team: ns },
  ...extra,
});

/** One namespace's worth of resources: shared config first, then workloads that use it. */
function namespaceResources(ns: string, count: number, rand: () => number): Doc[] {
  const out: Doc[] = [
    {
      apiVersion: V,
      kind: "MCPGroup",
      metadata: meta("tools", ns),
      spec: { description: `Tools of ${ns}` },
    },
    {
      apiVersion: V,
      kind: "MCPToolConfig",
      metadata: meta("read-only", ns),
      spec: {
        toolsFilter: ["search", "get_file", "list_issues", "get_issue"],
        toolsOverride: { search: { name: "code_search", description: "Search the code base" } },
      },
    },
    {
      apiVersion: V,
      kind: "MCPTelemetryConfig",
      metadata: meta("otel", ns),
      spec: {
        openTelemetry: {
          enabled: true,
          endpoint: "otel-collector.observability.svc:4317",
          insecure: true,
          resourceAttributes: { "deployment.environment": "prod" },
          metrics: { enabled: true },
          tracing: { enabled: true, samplingRate: "0.1" },
        },
        prometheus: { enabled: true },
      },
    },
    {
      apiVersion: V,
      kind: "MCPOIDCConfig",
      metadata: meta("corp-idp", ns),
      spec: {
        type: "inline",
        inline: {
          issuer: "https://idp.example.com/realms/corp",
          jwksUrl: "https://idp.example.com/realms/corp/certs",
        },
      },
    },
    {
      apiVersion: V,
      kind: "MCPExternalAuthConfig",
      metadata: meta("github-exchange", ns),
      spec: {
        type: "tokenExchange",
        tokenExchange: {
          tokenUrl: "https://idp.example.com/realms/corp/token",
          clientId: "mcp-proxy",
          clientSecretRef: { name: "exchange-secret", key: "client-secret" },
          audience: "github",
          scopes: ["repo", "read:org"],
        },
      },
    },
    {
      apiVersion: V,
      kind: "EmbeddingServer",
      metadata: meta("embeddings", ns),
      spec: {
        model: "BAAI/bge-small-en-v1.5",
        port: 8080,
        modelCache: { enabled: true, size: "10Gi" },
        resources: {
          requests: { cpu: "500m", memory: "1Gi" },
          limits: { cpu: "2", memory: "4Gi" },
        },
      },
    },
    {
      apiVersion: V,
      kind: "VirtualMCPCompositeToolDefinition",
      metadata: meta("triage", ns),
      spec: {
        name: "triage_issue",
        description: "Fetch an issue and summarise related code",
        parameters: { type: "object", properties: { issue: { type: "integer" } } },
        steps: [
          {
            id: "fetch",
            type: "tool",
            tool: "github.get_issue",
            arguments: { number: "{{.params.issue}}" },
          },
          {
            id: "search",
            type: "tool",
            tool: "github.search",
            dependsOn: ["fetch"],
            arguments: { q: "{{.steps.fetch.output.title}}" },
          },
        ],
      },
    },
  ];
  let i = 0;
  while (out.length < count) {
    const n = i++;
    // The first workload of a namespace is an MCPServer, the backend its virtual servers name.
    const pick = n === 0 ? 0 : rand();
    const name = `srv-${n}`;
    if (pick < 0.5) {
      out.push({
        apiVersion: V,
        kind: "MCPServer",
        metadata: meta(name, ns, { annotations: { "example.com/owner": `team-${n % 7}` } }),
        spec: {
          image: `ghcr.io/example/mcp-${n % 40}:v1.${n % 10}.0`,
          transport: n % 3 === 0 ? "stdio" : "streamable-http",
          proxyPort: 8080,
          mcpPort: 9000 + (n % 100),
          args: ["--log-level", "info", "--read-only"],
          env: [
            { name: "LOG_FORMAT", value: "json" },
            { name: "REGION", value: "eu-west-1" },
          ],
          secrets: [{ name: `${name}-token`, key: "token", targetEnvName: "API_TOKEN" }],
          resources: {
            requests: { cpu: "100m", memory: "128Mi" },
            limits: { cpu: "500m", memory: "512Mi" },
          },
          groupRef: "tools",
          toolConfigRef: { name: "read-only" },
          telemetryConfigRef: { name: "otel", serviceName: name },
          oidcConfigRef: { name: "corp-idp", audience: `${ns}-${name}` },
          audit: { enabled: true },
          permissionProfile: { type: "builtin", name: "network" },
        },
      });
    } else if (pick < 0.7) {
      out.push({
        apiVersion: V,
        kind: "MCPRemoteProxy",
        metadata: meta(`remote-${n}`, ns),
        spec: {
          remoteURL: `https://mcp-${n}.example.com/mcp`,
          transport: "streamable-http",
          proxyPort: 8080,
          groupRef: "tools",
          externalAuthConfigRef: { name: "github-exchange" },
          oidcConfigRef: { name: "corp-idp", audience: `${ns}-remote-${n}` },
          toolConfigRef: { name: "read-only" },
          headerForward: { addPlaintextHeaders: { "X-Tenant": ns } },
          resources: { requests: { cpu: "50m", memory: "64Mi" } },
        },
      });
    } else if (pick < 0.85) {
      out.push({
        apiVersion: V,
        kind: "MCPServerEntry",
        metadata: meta(`entry-${n}`, ns),
        spec: {
          remoteURL: `https://entry-${n}.example.com/mcp`,
          transport: "sse",
          groupRef: "tools",
          headerForward: { addPlaintextHeaders: { "X-Source": "catalog" } },
        },
      });
    } else if (pick < 0.95) {
      out.push({
        apiVersion: V,
        kind: "VirtualMCPServer",
        metadata: meta(`vmcp-${n}`, ns),
        spec: {
          groupRef: "tools",
          incomingAuth: {
            type: "oidc",
            oidcConfigRef: { name: "corp-idp", audience: `${ns}-vmcp-${n}` },
          },
          outgoingAuth: { source: "discovered" },
          telemetryConfigRef: { name: "otel" },
          embeddingServerRef: { name: "embeddings" },
          config: {
            aggregation: {
              conflictResolution: "prefix",
              conflictResolutionConfig: { prefixFormat: "{workload}_" },
              tools: [{ workload: "srv-0", filter: ["search"] }],
            },
            compositeToolRefs: [{ name: "triage" }],
            operational: {
              timeouts: { default: "30s" },
              failureHandling: { healthCheckInterval: "30s", unhealthyThreshold: 3 },
            },
          },
        },
      });
    } else {
      out.push({
        apiVersion: V,
        kind: "MCPRegistry",
        metadata: meta(`registry-${n}`, ns),
        spec: {
          displayName: `Registry ${n}`,
          configYAML: stringify({
            sources: [
              {
                name: "catalog",
                format: "upstream",
                git: {
                  repository: "https://github.com/example/catalog",
                  branch: "main",
                  path: "registry.json",
                },
                syncPolicy: { interval: "1h" },
              },
              { name: "team", managed: {} },
            ],
            registries: [{ name: "default", sources: ["catalog", "team"] }],
            auth: { mode: "anonymous" },
          }),
        },
      });
    }
  }
  return out;
}

/** About one resource in ten gets one of these mistakes. */
const MISTAKES: ((d: Doc) => void)[] = [
  (d) => ((d.spec as Doc).proxyPort = 70000),
  (d) => ((d.spec as Doc).transport = "websocket"),
  (d) => ((d.spec as Doc).groupRef = "no-such-group"),
  (d) => delete (d.metadata as Doc).name,
  (d) => ((d.spec as Doc).unexpectedField = true),
  (d) => ((d.spec as Doc).telemetry = { openTelemetry: { enabled: true } }),
  (d) => (d.apiVersion = "toolhive.stacklok.dev/v2"),
];

function generateCorpus(dir: string): number {
  const rand = rng(42);
  const namespaces = 20;
  const perNs = Math.ceil(RESOURCES / namespaces);
  const all: Doc[] = [];
  for (let n = 0; n < namespaces; n++) all.push(...namespaceResources(`team-${n}`, perNs, rand));
  all.length = RESOURCES;
  let invalid = 0;
  for (const d of all) {
    if (d.kind === "MCPServer" && rand() < 0.23) {
      MISTAKES[Math.floor(rand() * MISTAKES.length)]!(d);
      invalid++;
    }
  }
  const perFile = Math.ceil(all.length / FILES);
  for (let f = 0; f < FILES; f++) {
    const docs = all.slice(f * perFile, (f + 1) * perFile);
    const text = docs.map((d) => `# ${String(d.kind)}\n${stringify(d)}`).join("---\n");
    writeFileSync(join(dir, `resources-${String(f).padStart(3, "0")}.yaml`), text);
  }
  return invalid;
}

/**
 * The floor: reading every file and YAML-parsing it with js-yaml as its loadAll does (its event
 * parser, which validate reads files with too, and its construction of the values).
 */
function floorRun(dir: string): number {
  let docs = 0;
  for (const f of readdirSync(dir).sort()) {
    const text = readFileSync(join(dir, f), "utf8");
    const events = parseEvents(text, {});
    for (const d of constructFromEvents(events, { source: text, schema: CORE_SCHEMA })) {
      if (d !== null) docs++;
    }
  }
  return docs;
}

/**
 * For context: reading as validate does, the same events and the values built by src/yaml/values.ts
 * (a leaner construction than js-yaml's for files without anchors, tags or odd keys).
 */
function ownReadRun(dir: string, plainValues: typeof PlainValues): number {
  let docs = 0;
  for (const f of readdirSync(dir).sort()) {
    const text = readFileSync(join(dir, f), "utf8");
    const built = plainValues(text, parseEvents(text, {}));
    for (const d of built?.values ?? []) if (d !== null) docs++;
  }
  return docs;
}

/** For context: the same with the yaml package's node tree, which validate keeps for diagnostics. */
function treeRun(dir: string): number {
  let docs = 0;
  for (const f of readdirSync(dir).sort()) {
    for (const d of parseAllDocuments(readFileSync(join(dir, f), "utf8"))) {
      if (d.toJS() !== null) docs++;
    }
  }
  return docs;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** CPU time of this (single-threaded) process in ms: robust when other work shares the machine. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * CPU time of the main thread alone in ms (Node 23.9 and later; else NaN): the difference from
 * cpuMs() is what the collector and the JIT compiler do on their helper threads.
 */
function mainThreadMs(): number {
  const u = process.threadCpuUsage?.();
  return u === undefined ? NaN : (u.user + u.system) / 1000;
}

async function measure<T>(
  fn: () => T | Promise<T>,
): Promise<{ cpu: number; main: number; wall: number; out: T }> {
  const c = cpuMs();
  const m = mainThreadMs();
  const w = performance.now();
  const out = await fn();
  return { cpu: cpuMs() - c, main: mainThreadMs() - m, wall: performance.now() - w, out };
}

function wall(args: string[], runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    // A cold start: no validate server answers.
    const env = { ...process.env, MCPFLEET_VALIDATE_SERVER: "off" };
    const r = spawnSync(process.execPath, args, { cwd: ROOT, env, stdio: "ignore" });
    times.push(performance.now() - t);
    if (r.status !== 0 && r.status !== 1)
      throw new Error(`${args.join(" ")} exited ${String(r.status)}`);
  }
  return median(times);
}

// BENCH_CORPUS_DIR=dir writes the corpus there and stops (for profiling with --cpu-prof).
const only = process.env.BENCH_CORPUS_DIR;
if (only !== undefined) {
  generateCorpus(only);
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-bench-validate-"));
try {
  const mistakes = generateCorpus(dir);
  // Seven rounds of the one-thread comparison: the machine is shared and noisy, and each round
  // takes under a second; the pooled runs (seconds each) take three.
  const rounds = Number(process.env.BENCH_ROUNDS ?? 7);

  // The compiled code `make bench` builds first: what the CLI runs (under tsx every function of
  // ours would carry the loader's wrappers).
  const built = join(ROOT, "build/src/validate/index.js");
  const { validatePaths } = (await import(built)) as { validatePaths: typeof ValidatePaths };
  const { plainValues } = (await import(join(ROOT, "build/src/yaml/values.js"))) as {
    plainValues: typeof PlainValues;
  };
  // Warm-up, the two alternated for at least WARMUP_MS as benchmark harnesses do (criterion's
  // default is 3 s): schemas compiled, files in the page cache, and V8 done optimising the
  // validators. Until it is, its compiler works on helper threads, which the process's CPU
  // time counts: 20 to 60 ms of each of the first rounds of a process, on this corpus.
  // Then the two alternate again and the best round of each counts (the least disturbed by
  // other processes). Only the times and the summary of each round are kept: reports kept
  // from earlier rounds would be live heap that a CLI run never has.
  const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 3000);
  const warmupRound = async (): Promise<Summary> => {
    floorRun(dir);
    return (await validatePaths([dir])).summary;
  };
  const warmupStart = performance.now();
  let summary = await warmupRound();
  let warmups = 1;
  for (; performance.now() - warmupStart < warmupMs; warmups++) summary = await warmupRound();
  type Round = { cpu: number; main: number; wall: number };
  const floors: Round[] = [];
  const fulls: Round[] = [];
  const ownReads: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const floor = await measure(() => floorRun(dir));
    floors.push({ cpu: floor.cpu, main: floor.main, wall: floor.wall });
    const full = await measure(async () => (await validatePaths([dir])).summary);
    fulls.push({ cpu: full.cpu, main: full.main, wall: full.wall });
    summary = full.out;
  }
  const floorMs = Math.min(...floors.map((f) => f.cpu));
  const floorMain = Math.min(...floors.map((f) => f.main));
  const floorWall = Math.min(...floors.map((f) => f.wall));
  treeRun(dir);
  const treeMs = (await measure(() => treeRun(dir))).cpu;
  const fullMs = Math.min(...fulls.map((f) => f.cpu));
  const fullWall = Math.min(...fulls.map((f) => f.wall));
  const fullMain = Math.min(...fulls.map((f) => f.main));
  // Measured apart, after the rounds: between them, its garbage would be collected in theirs.
  for (let r = 0; r < rounds; r++)
    ownReads.push((await measure(() => ownReadRun(dir, plainValues))).cpu);
  const ownReadMs = Math.min(...ownReads);
  const resources = summary.resources;
  const rate = resources / (fullMs / 1000);
  const invalidShare = summary.invalid / resources;
  if (resources !== RESOURCES || invalidShare < 0.05 || invalidShare > 0.15 || mistakes === 0) {
    throw new Error(`unexpected corpus: ${JSON.stringify(summary)}`);
  }
  console.log(
    `bench: validate-throughput ${Math.round(rate)} resources/s ratio=${(TARGET_RATE / rate).toFixed(2)} ` +
      `(target ${TARGET_RATE} resources/s over measured, <= 1 meets it; schema+CEL+reference levels, ` +
      `${resources} resources in ${FILES} files, ${(invalidShare * 100).toFixed(1)}% invalid, built code, one thread, ` +
      `CPU time ${Math.round(fullMs)} ms, wall ${Math.round(fullWall)} ms)`,
  );
  console.log(
    `bench: validate-vs-parse-floor ${Math.round(fullMs)} ms ratio=${(fullMs / floorMs).toFixed(2)} ` +
      `(CPU time of full validation over reading and YAML-parsing the same corpus with js-yaml as ` +
      `its loadAll does, ${Math.round(floorMs)} ms = ${Math.round(resources / (floorMs / 1000))} ` +
      `resources/s; target <= ${TARGET_FLOOR_RATIO}; in wall time ${Math.round(fullWall)} ms over ` +
      `${Math.round(floorWall)} ms = ${(fullWall / floorWall).toFixed(2)}; main thread alone ` +
      `${Math.round(fullMain)} ms over ${Math.round(floorMain)} ms = ${(fullMain / floorMain).toFixed(2)}, ` +
      `the rest of the CPU time being the collector's and the JIT compiler's helper threads; ` +
      `best of ${rounds} rounds after ${warmups} warm-up rounds in ${(warmupMs / 1000).toFixed(0)} s; ` +
      `validate's own reading, js-yaml's events and its leaner values, alone takes ` +
      `${Math.round(ownReadMs)} ms, so full validation takes ${(fullMs / ownReadMs).toFixed(2)} times ` +
      `that reading; the yaml package's node tree alone takes ${Math.round(treeMs)} ms)`,
  );

  // Worker threads (opt-in `threads`): wall time of the built code (the workers load compiled
  // JavaScript, as the CLI's would), a fresh pool per run as a CLI run has, against one thread.
  const threads = Math.min(availableParallelism(), 4);
  await validatePaths([dir], { threads });
  const single: number[] = [];
  const pooled: { cpu: number; wall: number }[] = [];
  for (let r = 0; r < Math.min(rounds, 3); r++) {
    single.push((await measure(() => validatePaths([dir], { threads: 1 }))).wall);
    const run = await measure(async () => (await validatePaths([dir], { threads })).summary);
    if (run.out.invalid !== summary.invalid) throw new Error("pooled report differs");
    pooled.push({ cpu: run.cpu, wall: run.wall });
  }
  const pooledWall = Math.min(...pooled.map((p) => p.wall));
  const singleWall = Math.min(...single);
  console.log(
    `bench: validate-throughput-threads ${Math.round(resources / (pooledWall / 1000))} resources/s ` +
      `ratio=${(pooledWall / singleWall).toFixed(2)} (wall time with ${threads} worker threads over one ` +
      `thread's, ${Math.round(pooledWall)} ms vs ${Math.round(singleWall)} ms, built code, ` +
      `${availableParallelism()} cores; CPU time ${Math.round(Math.min(...pooled.map((p) => p.cpu)))} ms)`,
  );

  // Cold start: the built CLI on one small file, against an empty node process.
  const cli = join(ROOT, "bin/mcpfleet.js");
  const small = join(dir, "small.yaml");
  writeFileSync(
    small,
    stringify({
      apiVersion: V,
      kind: "MCPServer",
      metadata: { name: "one" },
      spec: { image: "ghcr.io/example/mcp:1" },
    }),
  );
  wall(["-e", "0"], 2);
  const nodeMs = wall(["-e", "0"], 7);
  const cliMs = wall([cli, "validate", small], 7);
  console.log(
    `bench: validate-cold-start ${Math.round(cliMs)} ms ratio=${(cliMs / nodeMs).toFixed(2)} ` +
      `(wall time of the built CLI validating one small file over node -e 0, ${Math.round(nodeMs)} ms)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

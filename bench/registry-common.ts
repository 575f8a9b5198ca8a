// Shared parts of the registry benchmarks: generated catalogs, servers from config text (in
// process, or the real command in its own process), peak RSS and an autocannon run.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import { pino } from "pino";
import { parseConfig } from "../src/registry/config/load.js";
import { RegistryServer } from "../src/registry/server.js";
import { MCPFLEET_REGISTRY_ENV } from "../src/synth/constructs/mcpregistry.js";
import { listeningUrl } from "../test/support/listening.js";

export function generatedServer(i: number): Record<string, unknown> {
  const id = String(i).padStart(6, "0");
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
    name: `io.bench.ns${i % 50}/server-${id}`,
    title: `Server ${id}`,
    description: `Generated benchmark server number ${i}, with a description of ordinary length`,
    version: `1.${i % 7}.0`,
    repository: { url: `https://github.com/bench/server-${id}`, source: "github" },
    packages: [
      {
        registryType: "oci",
        identifier: `ghcr.io/bench/server-${id}:1.0.0`,
        transport: { type: "stdio" },
        environmentVariables: [{ name: "API_KEY", isRequired: true, isSecret: true }],
      },
    ],
    _meta: {
      "io.modelcontextprotocol.registry/publisher-provided": {
        "io.bench": { tags: ["bench", `group-${i % 10}`], tier: "Community" },
      },
    },
  };
}

/**
 * Version `i` of a catalog of `count` versions over `names` names: versions 0 to names-1 are
 * generatedServer's (one per name), each further round of names a newer release of each.
 */
export function generatedVersion(i: number, names: number): Record<string, unknown> {
  const server = generatedServer(i % names);
  const release = Math.floor(i / names);
  return release === 0 ? server : { ...server, version: `${1 + release}.${i % 7}.0` };
}

/**
 * Writes `count` generated versions over `names` names as an upstream-format registry file
 * and, when `seed` is given, as the official registry's seed (an array of server.json), a
 * thousand servers at a time so that 200,000 never sit in memory at once.
 */
export function writeVersionCatalog(
  path: string,
  count: number,
  names: number,
  seed?: string,
): void {
  const files = [
    {
      fd: openSync(path, "w"),
      open: '{"version":"1.0.0","meta":{},"data":{"servers":[',
      close: "]}}",
    },
    ...(seed !== undefined ? [{ fd: openSync(seed, "w"), open: "[", close: "]" }] : []),
  ];
  for (const f of files) writeSync(f.fd, f.open);
  for (let i = 0; i < count; i += 1000) {
    const chunk: string[] = [];
    for (let j = i; j < Math.min(i + 1000, count); j++) {
      chunk.push(JSON.stringify(generatedVersion(j, names)));
    }
    for (const f of files) writeSync(f.fd, `${i === 0 ? "" : ","}${chunk.join(",")}`);
  }
  for (const f of files) {
    writeSync(f.fd, f.close);
    closeSync(f.fd);
  }
}

/** Writes an upstream-format registry file of `count` generated servers. */
export function writeCatalog(path: string, count: number): void {
  const servers = Array.from({ length: count }, (_, i) => generatedServer(i));
  writeFileSync(path, JSON.stringify({ version: "1.0.0", meta: {}, data: { servers } }));
}

/**
 * A configuration serving the one source `catalog` (the file catalog.json unless `source` says
 * otherwise) as the registry `default`, anonymous, on the store `database` describes.
 */
export function catalogConfig(database = "", source = "file: { path: catalog.json }"): string {
  return `sources:
  - name: catalog
    ${source}
    syncPolicy: { interval: 1h }
registries:
  - name: default
    sources: [catalog]
auth: { mode: anonymous }
${database}
`;
}

export async function startFromYaml(yaml: string, dir: string): Promise<RegistryServer> {
  const path = join(dir, "config.yaml");
  writeFileSync(path, yaml);
  return RegistryServer.start(
    { ...parseConfig(yaml, path), path, baseDir: dir },
    { port: 0, log: pino({ level: "warn" }) },
  );
}

export interface RegistryProcess {
  child: ChildProcess;
  url: string;
  /** What runs: bin/mcpfleet.js with build/ (as `make bench` builds it) or the sources through tsx. */
  how: string;
  stop(): Promise<void>;
}

/** `mcpfleet registry serve --config CONFIG --port 0` in its own process; resolves once it listens. */
/** The environment a rendered MCPRegistry pod gives our server (synth), for the process here. */
export const REGISTRY_POD_ENV: Record<string, string> = Object.fromEntries(
  MCPFLEET_REGISTRY_ENV.map((e) => [e.name, e.value ?? ""]),
);

export async function spawnRegistry(
  config: string,
  nodeArgs: string[] = [],
): Promise<RegistryProcess> {
  // As the image's entry point starts it: bin/mcpfleet.js and the bundle `make build` makes.
  const bin = join(import.meta.dirname, "../bin/mcpfleet.js");
  const source = join(import.meta.dirname, "../src/cli/main.ts");
  const useBuilt = existsSync(join(import.meta.dirname, "../build/cli/main.js"));
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      ...(useBuilt ? [bin] : ["--import", "tsx", source]),
      "registry",
      "serve",
      "--config",
      config,
      "--port",
      "0",
    ],
    { env: { ...process.env, ...REGISTRY_POD_ENV }, stdio: ["ignore", "pipe", "inherit"] },
  );
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  };
  try {
    const url = await listeningUrl(child);
    return { child, url, how: useBuilt ? "bin/mcpfleet.js" : "tsx", stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Peak resident memory (VmHWM) of a process, in MB. */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

export async function waitReady(url: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await fetch(`${url}/readiness`).catch(() => undefined);
    if (r?.status === 200) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`${url} not ready`);
}

export interface LoadResult {
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function load(opts: autocannon.Options): Promise<LoadResult> {
  const r = await autocannon({ connections: 20, duration: 5, ...opts });
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

/** The mean of several runs' figures (errors summed). */
export function mean(rs: LoadResult[]): LoadResult {
  const avg = (f: (r: LoadResult) => number): number =>
    rs.reduce((a, r) => a + f(r), 0) / Math.max(rs.length, 1);
  return {
    rps: avg((r) => r.rps),
    p99: avg((r) => r.p99),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
  };
}

export function line(name: string, value: number, unit: string, ratio: number, what: string): void {
  console.log(
    `bench: ${name} ${Number.isInteger(value) ? value : value.toFixed(1)} ${unit} ratio=${ratio.toFixed(2)} (${what})`,
  );
}

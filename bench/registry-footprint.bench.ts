// The registry server's footprint beside a bare Fastify server on the same Node with the same
// flags, each in a process of its own, in interleaved rounds so drift in the machine's speed
// falls on both alike (medians of the rounds):
//   ready     process start to the first 200 on /readiness, with the example configuration
//             (examples/registry/config-anonymous.yaml: a file source of a dozen entries, a
//             managed source, the temporary embedded store), four starts of each per round,
//             alternated; target <= 1.5x the bare server's start to its first 200
//   idle      resident memory (VmRSS) 2 s after readiness, with the example configuration and
//             with a file source of 10,000 generated entries on the temporary embedded store;
//             target (at 10,000) <= the bare server's + 30 MB
//   peak      peak resident memory (VmHWM) of that server after the request mix of
//             registry-read and registry-vs-official (first pages, uncached searches, version
//             lookups, paging); target <= 150 MB
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  catalogConfig,
  generatedServer,
  line,
  load,
  peakRssMb,
  REGISTRY_POD_ENV,
  spawnRegistry,
  waitReady,
  writeCatalog,
  type RegistryProcess,
} from "./registry-common.js";
import { listeningUrl } from "../test/support/listening.js";

const ROUNDS = 3;
/**
 * Starts timed to readiness per round, bare and ours alternated: a start is a fifth of a second,
 * and three rounds alone left the median at the mercy of one slow start.
 */
const READY_STARTS = 4;
const ENTRIES = 10_000;
const READY_LIMIT = 1.5;
const IDLE_MARGIN_MB = 30;
const PEAK_LIMIT_MB = 150;
const EXAMPLE = join(import.meta.dirname, "../examples/registry/config-anonymous.yaml");

/** The floor: Fastify with a /readiness route, announcing its URL as the registry's log does. */
const BARE = `import Fastify from ${JSON.stringify(import.meta.resolve("fastify"))};
const app = Fastify();
app.get("/readiness", async () => ({ status: "ok" }));
const url = await app.listen({ host: "127.0.0.1", port: 0 });
console.log(JSON.stringify({ url }));
`;

interface Started {
  readyS: number;
  pid: number;
  url: string;
  stop: () => Promise<void>;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;

/** Time from spawning to the first 200 on /readiness (polled every 5 ms). */
async function untilReady(url: string, t0: number): Promise<number> {
  while ((await fetch(`${url}/readiness`).catch(() => undefined))?.status !== 200) {
    await new Promise((r) => setTimeout(r, 5));
  }
  return (performance.now() - t0) / 1000;
}

async function startBare(file: string): Promise<Started> {
  const t0 = performance.now();
  // The registry pod's environment too: the same Node, the same flags, the same malloc.
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, ...REGISTRY_POD_ENV },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await listeningUrl(child);
  const readyS = await untilReady(url, t0);
  const stop = async () => {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  };
  return { readyS, pid: child.pid ?? 0, url, stop };
}

async function startOurs(config: string): Promise<Started & { how: string }> {
  const t0 = performance.now();
  const p: RegistryProcess = await spawnRegistry(config);
  const readyS = await untilReady(p.url, t0);
  return { readyS, pid: p.child.pid ?? 0, url: p.url, stop: () => p.stop(), how: p.how };
}

/** Each started process's figure, stopped after. */
async function measure<T>(start: () => Promise<Started>, f: (s: Started) => Promise<T>) {
  const s = await start();
  try {
    return await f(s);
  } finally {
    await s.stop();
  }
}

const settle = () => new Promise((r) => setTimeout(r, 2000));

/** registry-read's and registry-vs-official's requests, a few seconds each. */
async function requestMix(url: string): Promise<void> {
  const base = `${url}/default/v0.1/servers`;
  let n = 0;
  const next = (f: (k: number) => string) => [
    { setupRequest: (req: object) => ({ ...req, path: f(n++) }) },
  ];
  const runs = [
    { url: base },
    { url, requests: next((k) => `/default/v0.1/servers?search=${(k % 9000) + 1000}`) },
    {
      url,
      requests: next((k) => {
        const s = generatedServer((k * 7919) % ENTRIES);
        return `/default/v0.1/servers/${encodeURIComponent(String(s.name))}/versions/${String(s.version)}`;
      }),
    },
    { url, requests: next((k) => `/default/v0.1/servers?limit=100&search=${k % 50}`) },
  ];
  for (const r of runs) {
    const res = await load({ ...r, duration: 3 });
    if (res.errors + res.non2xx > 0) throw new Error(`errors under load: ${JSON.stringify(res)}`);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-footprint-"));
  const bare = join(dir, "bare.mjs");
  writeFileSync(bare, BARE);
  writeCatalog(join(dir, "catalog.json"), ENTRIES);
  const big = join(dir, "config.yaml");
  writeFileSync(big, catalogConfig("database: { embedded: {} }"));
  const r = {
    bareReady: [] as number[],
    ready: [] as number[],
    bareIdle: [] as number[],
    exampleIdle: [] as number[],
  };
  const idle: number[] = [];
  const peak: number[] = [];
  let how = "";
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (let k = 0; k < READY_STARTS; k++) {
        r.bareReady.push(
          await measure(
            () => startBare(bare),
            (s) => Promise.resolve(s.readyS),
          ),
        );
        r.ready.push(
          await measure(
            () => startOurs(EXAMPLE),
            (s) => Promise.resolve(s.readyS),
          ),
        );
      }
      const example = await measure(
        async () => {
          const s = await startOurs(EXAMPLE);
          how = s.how;
          return s;
        },
        async (s) => settle().then(() => rssMb(s.pid)),
      );
      r.exampleIdle.push(example);
      r.bareIdle.push(
        await measure(
          () => startBare(bare),
          (s) => settle().then(() => rssMb(s.pid)),
        ),
      );
      await measure(
        () => startOurs(big),
        async (s) => {
          await waitReady(s.url);
          await settle();
          idle.push(rssMb(s.pid));
          await requestMix(s.url);
          peak.push(peakRssMb(s.pid));
        },
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  report(r, idle, peak, how);
}

function report(
  r: { bareReady: number[]; ready: number[]; bareIdle: number[]; exampleIdle: number[] },
  idle: number[],
  peak: number[],
  how: string,
): void {
  const [ready, bareReady] = [median(r.ready), median(r.bareReady)];
  line(
    "registry-footprint-ready",
    Math.round(ready * 1000),
    "ms",
    ready / bareReady / READY_LIMIT,
    `process start to the first /readiness 200 with the example configuration (${how}), bare Fastify ${Math.round(bareReady * 1000)} ms; ours/bare ${(ready / bareReady).toFixed(2)}x, target <= ${READY_LIMIT}x, ratio <= 1 meets it; medians of ${r.ready.length} starts each, alternated; ours ${r.ready.map((x) => Math.round(x * 1000)).join(" ")} ms`,
  );
  const [ours, floor] = [median(idle), median(r.bareIdle)];
  const small = median(r.exampleIdle);
  line(
    "registry-footprint-idle-rss",
    Math.round(small),
    "MB",
    (small - floor) / IDLE_MARGIN_MB,
    `VmRSS 2 s after readiness with the example configuration, bare Fastify ${Math.round(floor)} MB; ours - bare ${Math.round(small - floor)} MB, against the ${IDLE_MARGIN_MB} MB margin of the 10,000-entry target`,
  );
  line(
    "registry-footprint-idle-rss-10k",
    Math.round(ours),
    "MB",
    (ours - floor) / IDLE_MARGIN_MB,
    `VmRSS 2 s after readiness with ${ENTRIES} entries on the temporary embedded store, bare Fastify ${Math.round(floor)} MB; ours - bare ${Math.round(ours - floor)} MB, target <= ${IDLE_MARGIN_MB} MB, ratio <= 1 meets it`,
  );
  const top = median(peak);
  line(
    "registry-footprint-peak-rss-10k",
    Math.round(top),
    "MB",
    top / PEAK_LIMIT_MB,
    `VmHWM of that server after the request mix (first pages, uncached searches, version lookups, paging); target <= ${PEAK_LIMIT_MB} MB, ratio <= 1 meets it; rounds ${peak.map((x) => Math.round(x)).join(" ")} MB`,
  );
}

await main();

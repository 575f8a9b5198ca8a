// (f) Ours against the official MCP registry (built by `make peer-tools` from its Go module), side
// by side on one machine, one PostgreSQL server (a database each) and the same catalog of
// 10,000 generated servers: the official server imports them as its seed, ours syncs the file
// they come from. Four workloads, each in interleaved rounds (official, ours, ...) so drift in
// the machine's speed falls on both alike, each line the ratio of ours to the official rate:
//   search   a distinct `search` term per request (ours cannot answer it from its cache; each
//            term matches one or two servers on both); target >= 2
//   list     the first page of GET servers, as clients poll it; target > 1
//   version  GET servers/{name}/versions/{version}, a different server each request, all 10,000
//            in turn (ours answers from its cache from the second time a version is asked
//            for, as in production; the cache holds one answer per version of this catalog);
//            target > 1
//   paging   GET servers?limit=100&cursor=..., every page of the catalog in turn, each server
//            through its own cursors; target > 1
// Then the same at 200,000 versions of 52,000 names (the size of the official production
// registry), ours on both stores (PostgreSQL, and the embedded store in a data directory), each
// mirroring the official server through an `api` source (the catalog file is over a file
// source's 64 MiB limit), in fewer rounds and with paging bounded to the first 300 pages, so
// that `make bench` stays reasonable. The official server's seed import and our api syncs of the
// same catalog are timed, and our peak RSS taken after the sync (BENCH_OFFICIAL_LARGE=0 skips
// this round). Skipped with one line when the official registry
// is not built or PostgreSQL is missing.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  officialRegistryMissing,
  startOfficialRegistry,
  type OfficialRegistry,
} from "../test/support/official-registry.js";
import { findPostgresBin, startPostgres, type PostgresServer } from "../test/support/postgres.js";
import {
  catalogConfig,
  generatedVersion,
  line,
  load,
  mean,
  peakRssMb,
  spawnRegistry,
  waitReady,
  writeVersionCatalog,
  type LoadResult,
  type RegistryProcess,
} from "./registry-common.js";

const SECONDS = 3;

/** One catalog size: its versions, its names, rounds per workload and pages cycled through. */
interface Scale {
  suffix: string;
  total: number;
  names: number;
  rounds: number;
  maxPages: number;
}

const SCALES: Scale[] = [
  { suffix: "", total: 10_000, names: 10_000, rounds: 3, maxPages: Infinity },
  ...(process.env.BENCH_OFFICIAL_LARGE === "0"
    ? []
    : [{ suffix: "-200k", total: 200_000, names: 52_000, rounds: 2, maxPages: 300 }]),
];

/** Paths of one workload at a server's API base, request by request. */
type Paths = (base: string) => () => string;

/**
 * A search term per request that never repeats on one server, each matching the versions of
 * the one or two names whose id it is part of: `-00kkkk`, then `00kkkk`, `0kkkk`, `kkkk`.
 */
const search =
  (scale: Scale): Paths =>
  (base) => {
    let n = 0;
    return () => {
      const k = n++;
      const id = String(k % scale.names).padStart(6, "0");
      const term = `-${id}`.slice(Math.floor(k / scale.names) % 4);
      return `${base}/servers?search=${encodeURIComponent(term)}`;
    };
  };

const list: Paths = (base) => () => `${base}/servers`;

/** Every version in turn, in a scattered order (7919 is prime to both totals). */
const version =
  (scale: Scale): Paths =>
  (base) => {
    let n = 0;
    return () => {
      const s = generatedVersion((n++ * 7919) % scale.total, scale.names);
      return `${base}/servers/${encodeURIComponent(String(s.name))}/versions/${String(s.version)}`;
    };
  };

/** The catalog's pages at limit=100 (at most `max`), through the server's own cursors. */
async function pages(url: string, base: string, max: number): Promise<string[]> {
  const out = [`${base}/servers?limit=100`];
  while (out.length < max) {
    const r = await fetch(`${url}${out[out.length - 1] ?? ""}`);
    const body = (await r.json()) as { metadata?: { nextCursor?: string } };
    const next = body.metadata?.nextCursor;
    if (r.status !== 200 || next === undefined || next === "") return out;
    out.push(`${base}/servers?limit=100&cursor=${encodeURIComponent(next)}`);
  }
  return out;
}

async function measure(url: string, next: () => string): Promise<LoadResult> {
  const r = await load({
    url,
    duration: SECONDS,
    requests: [{ setupRequest: (req) => ({ ...req, path: next() }) }],
  });
  if (r.errors + r.non2xx > 0) throw new Error(`${url} answered errors: ${JSON.stringify(r)}`);
  return r;
}

interface Side {
  url: string;
  next: () => string;
}

async function compare(
  name: string,
  scale: Scale,
  official: Side,
  ours: Side,
  target: number,
  what: string,
): Promise<void> {
  await measure(official.url, official.next);
  await measure(ours.url, ours.next);
  const rounds = { official: [] as LoadResult[], ours: [] as LoadResult[] };
  for (let i = 0; i < scale.rounds; i++) {
    rounds.official.push(await measure(official.url, official.next));
    rounds.ours.push(await measure(ours.url, ours.next));
  }
  const [o, x] = [mean(rounds.official), mean(rounds.ours)];
  const size =
    scale.names === scale.total
      ? `${scale.total} entries`
      : `${scale.total} versions of ${scale.names} names`;
  line(
    `registry-vs-official${scale.suffix}-${name}`,
    Math.round(x.rps),
    "req/s",
    x.rps / o.rps,
    `${what} on ${size}, ours / the official registry at ${Math.round(o.rps)} req/s (p99 ${Math.round(x.p99)} ms vs ${Math.round(o.p99)} ms); target ${target > 1 ? `>= ${target}` : "> 1"}`,
  );
}

/** Our server on one store, as a process of its own, once its catalog source has synced. */
interface Ours {
  store: string;
  process: RegistryProcess;
  /** From spawning to the first sync of the catalog. */
  syncedS: number;
  peakMb: number;
  entries: number | undefined;
}

/**
 * The catalog source: at 10,000 the catalog file; at 200,000 (a file that size is over a file
 * source's 64 MiB limit) an `api` source pulling every version from the official server's API,
 * as a mirror of the official registry would.
 */
function catalogSource(scale: Scale, official: string): string {
  return scale.suffix === ""
    ? "file: { path: catalog.json }"
    : `api: { endpoint: ${JSON.stringify(official)} }`;
}

async function startOurs(
  dir: string,
  store: string,
  database: string,
  source: string,
): Promise<Ours> {
  const config = join(dir, `config-${store}.yaml`);
  writeFileSync(config, catalogConfig(database, source));
  const t = performance.now();
  const p = await spawnRegistry(config);
  try {
    await waitReady(p.url);
    let status: { phase?: string; entryCount?: number } = {};
    while (status.phase !== "Ready" && status.phase !== "Failed") {
      const r = await fetch(`${p.url}/v1/sources/catalog`);
      status = ((await r.json()) as { status: typeof status }).status;
      if (status.phase !== "Ready") await new Promise((res) => setTimeout(res, 200));
    }
    if (status.phase !== "Ready")
      throw new Error(`${store}: the sync ended ${JSON.stringify(status)}`);
    const syncedS = (performance.now() - t) / 1000;
    return {
      store,
      process: p,
      syncedS,
      peakMb: peakRssMb(p.child.pid ?? 0),
      entries: status.entryCount,
    };
  } catch (err) {
    await p.stop();
    throw err;
  }
}

function postgresDatabase(pg: PostgresServer, database: string): string {
  return `database:
  host: ${pg.host}
  port: ${pg.port}
  database: ${database}
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable`;
}

/** The four workloads, the official server against one of ours. */
async function workloads(scale: Scale, official: string, ours: Ours): Promise<void> {
  const suffix = ours.store === "postgres" ? "" : `-${ours.store}`;
  const [o, x] = [
    { url: official, base: "/v0.1" },
    { url: ours.process.url, base: "/default/v0.1" },
  ];
  const run = (name: string, paths: Paths, target: number, what: string) =>
    compare(
      `${name}${suffix}`,
      scale,
      { url: o.url, next: paths(o.base) },
      { url: x.url, next: paths(x.base) },
      target,
      what,
    );
  await run("search", search(scale), 2, "uncached search (a distinct term per request)");
  await run("list", list, 1, "the first page of GET servers");
  await run(
    "version",
    version(scale),
    1,
    "GET servers/{name}/versions/{version}, a different version each request",
  );
  const cycle = (paths: string[]) => {
    let n = 0;
    return () => paths[n++ % paths.length] ?? "";
  };
  const [po, px] = [
    await pages(o.url, o.base, scale.maxPages),
    await pages(x.url, x.base, scale.maxPages),
  ];
  await compare(
    `paging${suffix}`,
    scale,
    { url: o.url, next: cycle(po) },
    { url: x.url, next: cycle(px) },
    1,
    `every page at limit=100 in turn (${px.length} pages ours, ${po.length} the official${Number.isFinite(scale.maxPages) ? `, at most ${scale.maxPages}` : ""})`,
  );
}

async function runScale(pg: PostgresServer, scale: Scale): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-official-"));
  const running: { stop(): Promise<void> }[] = [];
  try {
    writeVersionCatalog(
      join(dir, "catalog.json"),
      scale.total,
      scale.names,
      join(dir, "seed.json"),
    );
    writeFileSync(join(dir, "app-pw"), pg.appPassword);
    writeFileSync(join(dir, "mig-pw"), pg.migrationPassword);
    const started = Date.now();
    const official: OfficialRegistry = await startOfficialRegistry({
      pg,
      seed: join(dir, "seed.json"),
      readyTimeoutMs: 3_600_000,
    });
    running.push(official);
    const seeded = (Date.now() - started) / 1000;
    const db = `ours${scale.suffix.replace(/\W/g, "")}`;
    await pg.createDatabase(db);
    const stores = [["postgres", postgresDatabase(pg, db)]];
    if (scale.suffix !== "") stores.push(["sqlite", "database: { embedded: { dataDir: data } }"]);
    const ours: Ours[] = [];
    for (const [store = "", database = ""] of stores) {
      const o = await startOurs(dir, store, database, catalogSource(scale, official.url));
      running.push(o.process);
      ours.push(o);
      if (o.entries !== scale.total) {
        throw new Error(`${store}: ${String(o.entries)} entries synced of ${scale.total}`);
      }
    }
    console.log(
      `bench: registry-vs-official${scale.suffix} setup: the official server imported ${scale.total} versions in ${seeded.toFixed(0)} s; ours ${ours[0]?.process.how}, its catalog synced ${ours.map((o) => `in ${o.syncedS.toFixed(0)} s on ${o.store} (peak RSS ${Math.round(o.peakMb)} MB)`).join(", ")}`,
    );
    if (scale.suffix !== "") {
      for (const o of ours) {
        line(
          `registry-vs-official${scale.suffix}-api-sync-${o.store}`,
          Number(o.syncedS.toFixed(1)),
          "s",
          o.syncedS / seeded,
          `our start to the first sync of an api source pulling all ${scale.total} versions from the official server's API, ours / the official server's seed import of the same catalog (${seeded.toFixed(0)} s); target < 1; peak RSS ${Math.round(o.peakMb)} MB (target < 300 MB)`,
        );
      }
    }
    for (const o of ours) await workloads(scale, official.url, o);
  } finally {
    for (const r of running.reverse()) await r.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const missing = officialRegistryMissing();
  if (missing !== undefined || findPostgresBin() === undefined) {
    console.log(
      `bench: registry-vs-official skipped (${missing ?? "no PostgreSQL binaries"}; make peer-tools)`,
    );
    return;
  }
  let pg: PostgresServer | undefined;
  try {
    pg = await startPostgres();
    for (const scale of SCALES) await runScale(pg, scale);
  } finally {
    await pg?.stop();
  }
}

await main();

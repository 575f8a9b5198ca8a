// (f) Ours against the official MCP registry (built by `make peer-tools` from its Go module), side
// by side on one machine, one PostgreSQL server (a database each) and the same catalog of
// 10,000 generated servers: the official server imports them as its seed, ours syncs the file
// they come from. Four workloads, each in interleaved rounds (official, ours, ...) so drift in
// the machine's speed falls on both alike, each line the ratio of ours to the official rate:
//   search   a distinct `search` term per request (ours cannot answer it from its cache; each
//            term matches one or two servers on both); target >= 2
//   list     the first page of GET servers, as clients poll it; target > 1
//   version  GET servers/{name}/versions/{version}, a different server each request, all 10,000
//            in turn (ours answers from its cache once it has computed an answer, as in
//            production; the cache holds one answer per version of this catalog); target > 1
//   paging   GET servers?limit=100&cursor=..., every page of the catalog in turn, each server
//            through its own cursors; target > 1
// Skipped with one line when the official registry is not built or PostgreSQL is missing.
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
  generatedServer,
  line,
  load,
  mean,
  spawnRegistry,
  waitReady,
  type LoadResult,
  type RegistryProcess,
} from "./registry-common.js";

const ENTRIES = 10_000;
const ROUNDS = 3;
const SECONDS = 3;

/** Paths of one workload at a server's API base, request by request. */
type Paths = (base: string) => () => string;

/**
 * A search term per request that never repeats on one server, each matching the one or two
 * servers whose id it is part of: `-00kkkk`, then `00kkkk`, `0kkkk`, `kkkk` for the next cycles.
 */
const search: Paths = (base) => {
  let n = 0;
  return () => {
    const k = n++;
    const term = `-${String(k % ENTRIES).padStart(6, "0")}`.slice(Math.floor(k / ENTRIES) % 4);
    return `${base}/servers?search=${encodeURIComponent(term)}`;
  };
};

const list: Paths = (base) => () => `${base}/servers`;

const version: Paths = (base) => {
  let n = 0;
  return () => {
    const s = generatedServer((n++ * 7919) % ENTRIES);
    return `${base}/servers/${encodeURIComponent(String(s.name))}/versions/${String(s.version)}`;
  };
};

/** Every page of the catalog at limit=100, through the server's own cursors. */
async function pages(url: string, base: string): Promise<string[]> {
  const out = [`${base}/servers?limit=100`];
  for (;;) {
    const r = await fetch(`${url}${out[out.length - 1] ?? ""}`);
    const body = (await r.json()) as { metadata?: { nextCursor?: string } };
    const next = body.metadata?.nextCursor;
    if (r.status !== 200 || next === undefined || next === "") return out;
    out.push(`${base}/servers?limit=100&cursor=${encodeURIComponent(next)}`);
  }
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

async function compare(
  name: string,
  official: { url: string; next: () => string },
  ours: { url: string; next: () => string },
  target: number,
  what: string,
): Promise<void> {
  await measure(official.url, official.next);
  await measure(ours.url, ours.next);
  const rounds = { official: [] as LoadResult[], ours: [] as LoadResult[] };
  for (let i = 0; i < ROUNDS; i++) {
    rounds.official.push(await measure(official.url, official.next));
    rounds.ours.push(await measure(ours.url, ours.next));
  }
  const [o, x] = [mean(rounds.official), mean(rounds.ours)];
  line(
    `registry-vs-official-${name}`,
    Math.round(x.rps),
    "req/s",
    x.rps / o.rps,
    `${what} on ${ENTRIES} entries, ours / the official registry at ${Math.round(o.rps)} req/s (p99 ${Math.round(x.p99)} ms vs ${Math.round(o.p99)} ms); target ${target > 1 ? `>= ${target}` : "> 1"}`,
  );
}

async function main(): Promise<void> {
  const missing = officialRegistryMissing();
  if (missing !== undefined || findPostgresBin() === undefined) {
    console.log(
      `bench: registry-vs-official skipped (${missing ?? "no PostgreSQL binaries"}; make peer-tools)`,
    );
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "bench-official-"));
  const servers = Array.from({ length: ENTRIES }, (_, i) => generatedServer(i));
  writeFileSync(
    join(dir, "catalog.json"),
    JSON.stringify({ version: "1.0.0", meta: {}, data: { servers } }),
  );
  writeFileSync(join(dir, "seed.json"), JSON.stringify(servers));
  let pg: PostgresServer | undefined;
  let official: OfficialRegistry | undefined;
  let ours: RegistryProcess | undefined;
  try {
    pg = await startPostgres();
    await pg.createDatabase("ours");
    writeFileSync(join(dir, "app-pw"), pg.appPassword);
    writeFileSync(join(dir, "mig-pw"), pg.migrationPassword);
    const config = join(dir, "config.yaml");
    writeFileSync(
      config,
      `
sources:
  - name: catalog
    file: { path: catalog.json }
    syncPolicy: { interval: 1h }
registries:
  - name: default
    sources: [catalog]
auth: { mode: anonymous }
database:
  host: ${pg.host}
  port: ${pg.port}
  database: ours
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable
`,
    );
    const started = Date.now();
    official = await startOfficialRegistry({
      pg,
      seed: join(dir, "seed.json"),
      readyTimeoutMs: 900_000,
    });
    const seeded = (Date.now() - started) / 1000;
    ours = await spawnRegistry(config);
    await waitReady(ours.url);
    console.log(
      `bench: registry-vs-official setup: the official server imported ${ENTRIES} servers in ${seeded.toFixed(0)} s; ours ${ours.how}`,
    );
    const [o, x] = [
      { url: official.url, base: "/v0.1" },
      { url: ours.url, base: "/default/v0.1" },
    ];
    await compare(
      "search",
      { url: o.url, next: search(o.base) },
      { url: x.url, next: search(x.base) },
      2,
      "uncached search (a distinct term per request)",
    );
    await compare(
      "list",
      { url: o.url, next: list(o.base) },
      { url: x.url, next: list(x.base) },
      1,
      "the first page of GET servers",
    );
    await compare(
      "version",
      { url: o.url, next: version(o.base) },
      { url: x.url, next: version(x.base) },
      1,
      "GET servers/{name}/versions/{version}, a different server each request",
    );
    const cycle = (paths: string[]) => {
      let n = 0;
      return () => paths[n++ % paths.length] ?? "";
    };
    const [po, px] = [await pages(o.url, o.base), await pages(x.url, x.base)];
    await compare(
      "paging",
      { url: o.url, next: cycle(po) },
      { url: x.url, next: cycle(px) },
      1,
      `every page at limit=100 in turn (${px.length} pages ours, ${po.length} the official)`,
    );
  } finally {
    await ours?.stop();
    await official?.stop();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

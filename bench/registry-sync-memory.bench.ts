// Memory of a large url and of a large api sync: for each, a registry server alone in a child
// process started with --expose-gc (test/registry/memory/) with that one source, synced from
// 200 servers at start and then from 30,000 (34 MB as one file). Reported: the server's peak RSS
// during the big sync (VmHWM, reset just before it) and what it still holds after full
// collections (heap plus external memory) minus before. On the embedded store (SQLite in a data
// directory) and, when its binaries exist, on PostgreSQL.
import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Upstream } from "../test/registry/memory/upstream.js";
import { findPostgresBin, startPostgres, type PostgresServer } from "../test/support/postgres.js";
import { line } from "./registry-common.js";

const MB = 1024 * 1024;
const COUNT = Number(process.env.BENCH_SYNC_MEMORY_COUNT ?? 30_000);
const PEAK_LIMIT_MB = 300;

interface Usage {
  heapUsed: number;
  external: number;
}
const held = (u: Usage) => u.heapUsed + u.external;

function status(pid: number, key: "VmHWM" | "VmRSS"): number {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${key}:\\s+(\\d+)`).exec(text)?.[1] ?? 0) / 1024;
}

async function run(
  store: string,
  database: string,
  upstream: Upstream,
  base: string,
  kind: "url" | "api",
) {
  upstream.setCount(200);
  const dir = mkdtempSync(join(tmpdir(), "bench-sync-memory-"));
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `sources:
  - name: big
    ${kind === "url" ? `url: { url: "${base}/catalog.json", timeout: 5m }` : `api: { endpoint: "${base}" }`}
    syncPolicy: { interval: 24h }
registries:
  - name: default
    sources: [big]
auth: { mode: anonymous }
database: ${database.replace("DIR", dir)}
`,
  );
  const child = fork(
    join(import.meta.dirname, "../test/registry/memory/sync-memory-child.ts"),
    [config],
    {
      execArgv: ["--expose-gc", "--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  const pid = child.pid ?? 0;
  const measure = () =>
    new Promise<Usage>((resolve) => {
      child.once("message", (m) => resolve(m as Usage));
      child.send("measure");
    });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.once("message", (m) => resolve(m as string));
      child.once("exit", (code) => reject(new Error(`registry exited with ${String(code)}`)));
    });
    while ((await fetch(`${url}/readiness`)).status !== 200) {
      await new Promise((r) => setTimeout(r, 100));
    }
    upstream.setCount(COUNT);
    const catalogMb = upstream.fileBytes / MB;
    const heldLimit = catalogMb / 4;
    {
      const before = await measure();
      const rssBefore = status(pid, "VmRSS");
      // Writing 5 resets the peak RSS to the current RSS, so VmHWM is the sync's own peak.
      writeFileSync(`/proc/${pid}/clear_refs`, "5");
      const r = await fetch(`${url}/v1/sources/big/sync?wait=true`, { method: "POST" });
      const body = (await r.json()) as { status: { phase: string; entryCount: number } };
      if (body.status.phase !== "Ready" || body.status.entryCount !== COUNT) {
        throw new Error(`${kind} sync ended ${JSON.stringify(body.status)}`);
      }
      const peak = status(pid, "VmHWM");
      const after = await measure();
      const rssAfter = status(pid, "VmRSS");
      line(
        `registry-sync-memory-${kind}-peak-rss-${store}`,
        Math.round(peak),
        "MB",
        peak / PEAK_LIMIT_MB,
        `peak RSS of the registry server process during ${kind === "api" ? "an" : "a"} ${kind} sync of ${COUNT} servers (${catalogMb.toFixed(0)} MB as one file); target < ${PEAK_LIMIT_MB} MB`,
      );
      const kept = (held(after) - held(before)) / MB;
      line(
        `registry-sync-memory-${kind}-held-after-${store}`,
        Number(kept.toFixed(1)),
        "MB",
        Math.max(kept, 0) / heldLimit,
        `heap + external memory held after the sync and full GCs, minus before; limit a quarter of the catalog, ${heldLimit.toFixed(1)} MB; RSS ${rssBefore.toFixed(0)} MB before, ${rssAfter.toFixed(0)} MB after`,
      );
    }
  } finally {
    const exited = new Promise((r) => child.once("exit", r));
    if (child.exitCode === null) child.send("stop");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const upstream = new Upstream(200);
await new Promise<void>((r) => upstream.http.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${(upstream.http.address() as AddressInfo).port}`;
let pg: PostgresServer | undefined;
try {
  if (findPostgresBin() !== undefined) {
    pg = await startPostgres();
    await pg.createDatabase("bench");
    const pw = mkdtempSync(join(tmpdir(), "bench-sync-memory-pw-"));
    writeFileSync(join(pw, "app"), pg.appPassword);
    writeFileSync(join(pw, "mig"), pg.migrationPassword);
    const db = `{ host: 127.0.0.1, port: ${pg.port}, database: bench, user: ${pg.appUser}, migrationUser: ${pg.migrationUser}, passwordFile: ${join(pw, "app")}, migrationPasswordFile: ${join(pw, "mig")}, sslMode: disable }`;
    await run("postgres", db, upstream, base, "url");
    await run("postgres", db, upstream, base, "api");
    rmSync(pw, { recursive: true, force: true });
  } else {
    console.log("bench: registry-sync-memory-postgres skipped (no PostgreSQL binaries)");
  }
  await run("sqlite", "{ embedded: { dataDir: DIR/data } }", upstream, base, "url");
  await run("sqlite", "{ embedded: { dataDir: DIR/data } }", upstream, base, "api");
} finally {
  upstream.http.close();
  await pg?.stop();
}

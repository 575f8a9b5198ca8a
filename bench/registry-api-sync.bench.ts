// (b) An `api` source syncing 200,000 versions of 52,000 servers (the size of the official
// production registry) from a local upstream-shaped registry (run in a child process so that
// only the registry server's memory is measured): sync time and the server's peak RSS (target
// < 300 MB: the sync streams pages into the store in batches of 250 rows, each entry kept only
// as its row text). BENCH_API_COUNT and BENCH_API_NAMES change the sizes.
import { fork } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fetchApiPages } from "../src/registry/sources/fetch.js";
import { findPostgresBin, startPostgres, type PostgresServer } from "../test/support/postgres.js";
import { generatedVersion, line, peakRssMb, spawnRegistry } from "./registry-common.js";

const COUNT = Number(process.env.BENCH_API_COUNT ?? 200_000);
const NAMES = Math.min(Number(process.env.BENCH_API_NAMES ?? 52_000), COUNT);

if (process.argv[2] === "serve-upstream") {
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://x");
    if (u.pathname !== "/v0.1/servers") {
      res.writeHead(404).end();
      return;
    }
    const limit = Math.min(Number(u.searchParams.get("limit") ?? 30), 100);
    const start = Number(u.searchParams.get("cursor") ?? 0);
    const servers = [];
    for (let i = start; i < Math.min(start + limit, COUNT); i++) {
      servers.push({
        server: generatedVersion(i, NAMES),
        _meta: {
          "io.modelcontextprotocol.registry/official": {
            status: "active",
            publishedAt: "2025-01-01T00:00:00Z",
            updatedAt: "2025-01-01T00:00:00Z",
            isLatest: i + NAMES >= COUNT,
          },
        },
      });
    }
    const next = start + limit < COUNT ? String(start + limit) : undefined;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ servers, metadata: { count: servers.length, nextCursor: next } }));
  });
  server.listen(0, "127.0.0.1", () => {
    process.send?.((server.address() as AddressInfo).port);
  });
} else {
  await main();
}

async function syncOnce(endpoint: string, store: string, database: string, floorS: number) {
  const t = performance.now();
  const cfgDir = mkdtempSync(join(tmpdir(), "bench-api-cfg-"));
  const cfg = join(cfgDir, "config.yaml");
  writeFileSync(
    cfg,
    `sources:\n  - name: upstream\n    api: { endpoint: "${endpoint}" }\nregistries:\n  - name: default\n    sources: [upstream]\nauth: { mode: anonymous }\ndatabase: ${database}\n`,
  );
  const heap = process.env.BENCH_HEAP ? [`--max-old-space-size=${process.env.BENCH_HEAP}`] : [];
  const registry = await spawnRegistry(cfg, heap);
  const { child, url, how } = registry;
  try {
    let status: { phase?: string; entryCount?: number; message?: string } = {};
    for (;;) {
      const r = (await (await fetch(`${url}/v1/sources/upstream`)).json()) as {
        status: typeof status;
      };
      status = r.status;
      if (status.phase === "Ready" || status.phase === "Failed") break;
      await new Promise((res) => setTimeout(res, 200));
    }
    const syncS = (performance.now() - t) / 1000;
    const mb = peakRssMb(child.pid ?? 0);
    if (status.phase !== "Ready" || status.entryCount !== COUNT) {
      throw new Error(`sync ended ${JSON.stringify(status)}`);
    }
    line(
      `registry-api-sync-time-${store}`,
      Number(syncS.toFixed(1)),
      "s",
      syncS / floorS,
      `${COUNT} versions of ${NAMES} servers from an upstream API in pages of 100, server start included; ratio = ours / bare paging ${floorS.toFixed(1)} s`,
    );
    line(
      `registry-api-sync-peak-rss-${store}`,
      Math.round(mb),
      "MB",
      mb / 300,
      `peak RSS (VmHWM) of the registry server process (${how}); target < 300 MB, ratio < 1 meets it`,
    );
  } finally {
    await registry.stop();
    rmSync(cfgDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const up = fork(import.meta.filename, ["serve-upstream"], {
    execArgv: ["--import", "tsx"],
    stdio: "inherit",
  });
  const port = await new Promise<number>((resolve) =>
    up.once("message", (m) => resolve(Number(m))),
  );
  const endpoint = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), "bench-api-"));
  let pg: PostgresServer | undefined;
  try {
    // Floor: paging through the upstream without storing anything.
    const t = performance.now();
    let seen = 0;
    for await (const page of fetchApiPages(endpoint, { pageSize: 100 })) seen += page.items.length;
    const floorS = (performance.now() - t) / 1000;
    if (seen !== COUNT) throw new Error(`upstream served ${seen} of ${COUNT}`);
    if (findPostgresBin() !== undefined) {
      pg = await startPostgres();
      await pg.createDatabase("bench");
      writeFileSync(join(dir, "app-pw"), pg.appPassword);
      writeFileSync(join(dir, "mig-pw"), pg.migrationPassword);
      await syncOnce(
        endpoint,
        "postgres",
        `{ host: 127.0.0.1, port: ${pg.port}, database: bench, user: ${pg.appUser}, migrationUser: ${pg.migrationUser}, passwordFile: ${join(dir, "app-pw")}, migrationPasswordFile: ${join(dir, "mig-pw")}, sslMode: disable }`,
        floorS,
      );
    } else {
      console.log("bench: registry-api-sync-postgres skipped (no PostgreSQL binaries)");
    }
    await syncOnce(endpoint, "sqlite", `{ embedded: { dataDir: ${join(dir, "data")} } }`, floorS);
  } finally {
    up.kill();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

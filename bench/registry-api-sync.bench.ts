// (b) An `api` source syncing 100,000 servers from a local upstream-shaped registry (run in a
// child process so that only the registry server's memory is measured): sync time and the
// server's peak RSS (target < 300 MB: the sync streams pages into the store in batches of 250
// rows, each entry kept only as its row text).
import { fork, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fetchApiPages } from "../src/registry/sources/fetch.js";
import { findPostgresBin, startPostgres, type PostgresServer } from "../test/support/postgres.js";
import { generatedServer, line, startFromYaml } from "./registry-common.js";

const COUNT = Number(process.env.BENCH_API_COUNT ?? 100_000);

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
        server: generatedServer(i),
        _meta: {
          "io.modelcontextprotocol.registry/official": {
            status: "active",
            publishedAt: "2025-01-01T00:00:00Z",
            updatedAt: "2025-01-01T00:00:00Z",
            isLatest: true,
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
} else if (process.argv[2] === "serve-registry") {
  // The registry server under test, alone in its process: argv[3] endpoint, argv[4] database.
  const dir = mkdtempSync(join(tmpdir(), "bench-api-reg-"));
  const server = await startFromYaml(
    `
sources:
  - name: upstream
    api: { endpoint: "${process.argv[3]}" }
registries:
  - name: default
    sources: [upstream]
auth: { mode: anonymous }
database: ${process.argv[4]}
`,
    dir,
  );
  process.send?.(server.url);
  process.once("SIGTERM", () => {
    void server.close().then(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  });
} else {
  await main();
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function syncOnce(endpoint: string, store: string, database: string, floorS: number) {
  const t = performance.now();
  // The real command from build/ when it is built (as `make bench` does), else through tsx.
  const built = join(import.meta.dirname, "../build/src/cli/main.js");
  const cfgDir = mkdtempSync(join(tmpdir(), "bench-api-cfg-"));
  const cfg = join(cfgDir, "config.yaml");
  writeFileSync(
    cfg,
    `sources:\n  - name: upstream\n    api: { endpoint: "${endpoint}" }\nregistries:\n  - name: default\n    sources: [upstream]\nauth: { mode: anonymous }\ndatabase: ${database}\n`,
  );
  const heap = process.env.BENCH_HEAP ? [`--max-old-space-size=${process.env.BENCH_HEAP}`] : [];
  const child = existsSync(built)
    ? spawn(
        process.execPath,
        [...heap, built, "registry", "serve", "--config", cfg, "--port", "0"],
        {
          stdio: ["ignore", "pipe", "inherit"],
        },
      )
    : fork(import.meta.filename, ["serve-registry", endpoint, database], {
        execArgv: ["--import", "tsx", ...heap],
        stdio: ["ignore", "pipe", "inherit", "ipc"],
      });
  const how = existsSync(built) ? "build/ command" : "tsx";
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /"url":"(http:[^"]+)"/.exec(out);
        if (m?.[1] !== undefined) resolve(m[1]);
      });
      child.once("message", (m) => resolve(m as string));
      child.once("exit", (code) => reject(new Error(`registry exited with ${String(code)}`)));
    });
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
      `${COUNT} servers from an upstream API in pages of 100, server start included; ratio = ours / bare paging ${floorS.toFixed(1)} s`,
    );
    line(
      `registry-api-sync-peak-rss-${store}`,
      Math.round(mb),
      "MB",
      mb / 300,
      `peak RSS (VmHWM) of the registry server process (${how}); target < 300 MB, ratio < 1 meets it${store === "pglite" ? "; embedded store on a new data directory: its peak is PGlite's in-process initdb and V8 compiling PostgreSQL's SQL parser (raw_parser) to optimized code, about 575 MB of compiler memory for a moment; see docs/registry.md" : ""}`,
    );
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
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
    await syncOnce(endpoint, "pglite", `{ embedded: { dataDir: ${join(dir, "data")} } }`, floorS);
  } finally {
    up.kill();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

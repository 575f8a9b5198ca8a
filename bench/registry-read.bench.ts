// (a) GET /{registry}/v0.1/servers on a registry of 10,000 entries (a generated upstream file
// source), under autocannon, against a bare Fastify route serving the same page bytes in the
// same run (the floor of this stack). On the embedded store and, when its binaries exist, on
// PostgreSQL. Target ratio >= 0.5. Then uncached search: a different `search` term on every
// request, so each one queries the store; target >= 2,000 req/s on each store. The registry
// (the real command) and the floor each run in their own process, as in production, so that
// neither shares its thread with the load generator.
import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { findPostgresBin, startPostgres, type PostgresServer } from "../test/support/postgres.js";
import {
  catalogConfig,
  line,
  load,
  mean,
  spawnRegistry,
  waitReady,
  writeCatalog,
  type LoadResult,
} from "./registry-common.js";

const ENTRIES = 10_000;
const SEARCH_TARGET = 2000;

if (process.argv[2] === "floor") {
  // The floor: bare Fastify serving the bytes of the file argv[3].
  const body = readFileSync(process.argv[3] ?? "");
  const app = Fastify();
  app.get("/page", (_req, reply) => {
    void reply.header("content-type", "application/json; charset=utf-8").send(body);
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  process.send?.(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/page`);
} else {
  await main();
}

async function bareFloor(bodyFile: string): Promise<{ url: string; close: () => Promise<void> }> {
  const child = fork(import.meta.filename, ["floor", bodyFile], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("message", (m) => resolve(m as string));
    child.once("exit", (code) => reject(new Error(`floor exited with ${String(code)}`)));
  });
  return {
    url,
    close: async () => {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill();
      await exited;
    },
  };
}

async function run(dir: string, store: string, database: string): Promise<void> {
  const config = join(dir, `config-${store}.yaml`);
  writeFileSync(config, catalogConfig(database));
  const server = await spawnRegistry(config);
  try {
    await waitReady(server.url);
    const url = `${server.url}/default/v0.1/servers`;
    const bodyFile = join(dir, "page.json");
    writeFileSync(bodyFile, Buffer.from(await (await fetch(url)).arrayBuffer()));
    const bare = await bareFloor(bodyFile);
    try {
      await load({ url: bare.url, duration: 1 });
      await load({ url, duration: 1 });
      // Interleaved rounds, so drift in the machine's speed falls on both sides alike.
      const rounds = { floor: [] as LoadResult[], ours: [] as LoadResult[] };
      for (let i = 0; i < 3; i++) {
        rounds.floor.push(await load({ url: bare.url, duration: 3 }));
        rounds.ours.push(await load({ url, duration: 3 }));
      }
      const floor = mean(rounds.floor);
      const ours = mean(rounds.ours);
      if (ours.errors + ours.non2xx > 0)
        throw new Error(`registry answered errors: ${JSON.stringify(ours)}`);
      line(
        `registry-get-servers-${store}`,
        Math.round(ours.rps),
        "req/s",
        ours.rps / floor.rps,
        `GET /default/v0.1/servers on ${ENTRIES} entries vs bare Fastify with the same bytes at ${Math.round(floor.rps)} req/s; target >= 0.5`,
      );
      line(
        `registry-get-servers-${store}-p99`,
        ours.p99,
        "ms",
        floor.p99 / Math.max(ours.p99, 0.001),
        `p99 latency; ratio = bare p99 ${floor.p99} ms / ours`,
      );
      // Uncached: every request a different search, so each one queries the store.
      let n = 0;
      const miss = await load({
        url,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              path: `/default/v0.1/servers?search=${(n++ % 9000) + 1000}`,
            }),
          },
        ],
      });
      if (miss.errors + miss.non2xx > 0)
        throw new Error(`registry answered errors: ${JSON.stringify(miss)}`);
      line(
        `registry-get-servers-${store}-uncached`,
        Math.round(miss.rps),
        "req/s",
        miss.rps / SEARCH_TARGET,
        `a distinct search per request on ${ENTRIES} entries (a store query each time; ${server.how}); target >= ${SEARCH_TARGET} req/s, ratio >= 1 meets it; cached reads ${Math.round(ours.rps)} req/s`,
      );
    } finally {
      await bare.close();
    }
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-read-"));
  writeCatalog(join(dir, "catalog.json"), ENTRIES);
  let pg: PostgresServer | undefined;
  try {
    await run(dir, "sqlite", "database: { embedded: {} }");
    if (findPostgresBin() !== undefined) {
      pg = await startPostgres();
      await pg.createDatabase("bench");
      writeFileSync(join(dir, "app-pw"), pg.appPassword);
      writeFileSync(join(dir, "mig-pw"), pg.migrationPassword);
      await run(
        dir,
        "postgres",
        `database:
  host: 127.0.0.1
  port: ${pg.port}
  database: bench
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable`,
      );
    } else {
      console.log("bench: registry-get-servers-postgres skipped (no PostgreSQL binaries)");
    }
  } finally {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// (a) GET /{registry}/v0.1/servers on a registry of 10,000 entries (a generated upstream file
// source), under autocannon, against a bare Fastify route serving the same page bytes in the
// same run (the floor of this stack). On the embedded store and, when its binaries exist, on
// PostgreSQL. Target ratio >= 0.5.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { findPostgresBin, startPostgres, type PostgresServer } from "../test/support/postgres.js";
import { line, load, startFromYaml, waitReady, writeCatalog } from "./registry-common.js";

const ENTRIES = 10_000;
const dir = mkdtempSync(join(tmpdir(), "bench-read-"));
writeCatalog(join(dir, "catalog.json"), ENTRIES);

async function bareFloor(body: Buffer): Promise<{ url: string; close: () => Promise<void> }> {
  const app = Fastify();
  app.get("/page", (_req, reply) => {
    void reply.header("content-type", "application/json; charset=utf-8").send(body);
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return { url: `${url}/page`, close: () => app.close() };
}

async function run(store: string, database: string): Promise<void> {
  const server = await startFromYaml(
    `
sources:
  - name: catalog
    file: { path: catalog.json }
    syncPolicy: { interval: 1h }
registries:
  - name: default
    sources: [catalog]
auth: { mode: anonymous }
${database}
`,
    dir,
  );
  try {
    await waitReady(server.url);
    const url = `${server.url}/default/v0.1/servers`;
    const body = Buffer.from(await (await fetch(url)).arrayBuffer());
    const bare = await bareFloor(body);
    try {
      await load({ url: bare.url, duration: 1 });
      await load({ url, duration: 1 });
      const floor = await load({ url: bare.url });
      const ours = await load({ url });
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
        duration: 3,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              path: `/default/v0.1/servers?search=${(n++ % 9000) + 1000}`,
            }),
          },
        ],
      });
      line(
        `registry-get-servers-${store}-uncached`,
        Math.round(miss.rps),
        "req/s",
        miss.rps / ours.rps,
        "distinct search per request (store query each time) vs cached reads; informational",
      );
    } finally {
      await bare.close();
    }
  } finally {
    await server.close();
  }
}

let pg: PostgresServer | undefined;
try {
  await run("pglite", "database: { embedded: {} }");
  if (findPostgresBin() !== undefined) {
    pg = await startPostgres();
    await pg.createDatabase("bench");
    writeFileSync(join(dir, "app-pw"), pg.appPassword);
    writeFileSync(join(dir, "mig-pw"), pg.migrationPassword);
    await run(
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

// (c) Publish throughput on PostgreSQL: POST /{registry}/v0.1/publish under autocannon, each
// request a new version (of 50 names), against the floor of the same database: plain INSERTs
// of the same rows through a pool of the same size, at the same concurrency.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { findPostgresBin, startPostgres } from "../test/support/postgres.js";
import { TEAM_ONLY } from "../test/registry/helpers.js";
import { line, load, startFromYaml } from "./registry-common.js";

const CONNECTIONS = 10;
const SECONDS = 5;

if (findPostgresBin() === undefined) {
  console.log("bench: registry-publish skipped (no PostgreSQL binaries)");
} else {
  const dir = mkdtempSync(join(tmpdir(), "bench-publish-"));
  const db = await startPostgres();
  try {
    await db.createDatabase("bench");
    writeFileSync(join(dir, "app-pw"), db.appPassword);
    writeFileSync(join(dir, "mig-pw"), db.migrationPassword);
    const server = await startFromYaml(
      `${TEAM_ONLY}auth: { mode: anonymous }
database:
  host: 127.0.0.1
  port: ${db.port}
  database: bench
  user: ${db.appUser}
  migrationUser: ${db.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable
  maxOpenConns: ${CONNECTIONS}
`,
      dir,
    );
    try {
      // Floor: single-row INSERTs of comparable rows, CONNECTIONS at a time.
      const pool = new pg.Pool({
        host: "127.0.0.1",
        port: db.port,
        database: "bench",
        user: db.appUser,
        password: db.appPassword,
        max: CONNECTIONS,
      });
      let inserted = 0;
      const until = Date.now() + SECONDS * 1000;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async (_, w) => {
          while (Date.now() < until) {
            const n = inserted++;
            const server = {
              name: `io.floor/s${n % 50}`,
              version: `0.${w}.${n}`,
              description: "x",
            };
            await pool.query(
              `INSERT INTO entries (source, name, version, server, search, status, digest)
               VALUES ('team', $1, $2, $3::json, $4, 'active', 'd')`,
              [server.name, server.version, JSON.stringify(server), server.name],
            );
          }
        }),
      );
      const floorRps = inserted / SECONDS;
      await pool.query(`DELETE FROM entries`);
      await pool.end();

      let n = 0;
      const r = await load({
        url: `${server.url}/default/v0.1/publish`,
        connections: CONNECTIONS,
        duration: SECONDS,
        method: "POST",
        headers: { "content-type": "application/json" },
        requests: [
          {
            setupRequest: (req) => {
              const i = n++;
              return {
                ...req,
                body: JSON.stringify({
                  $schema:
                    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
                  name: `io.bench.publish/server-${i % 50}`,
                  version: `1.${Math.floor(i / 50)}.0`,
                  url: `https://s${i % 50}.example/mcp`,
                  description: "benchmark server",
                }),
              };
            },
          },
        ],
      });
      if (r.errors + r.non2xx > 0) throw new Error(`publish answered errors: ${JSON.stringify(r)}`);
      line(
        "registry-publish-postgres",
        Math.round(r.rps),
        "req/s",
        r.rps / floorRps,
        `POST publish, ${CONNECTIONS} connections, semver latest recomputed per publish; vs ${Math.round(floorRps)} plain INSERTs/s on the same database`,
      );
      line("registry-publish-postgres-p99", r.p99, "ms", 1, "p99 publish latency (informational)");
    } finally {
      await server.close();
    }
  } finally {
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

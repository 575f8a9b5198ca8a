// Two server instances on one PostgreSQL database: concurrent writers stay consistent.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../support/postgres.js";
import { startServer } from "./helpers.js";

const FIXTURES = join(import.meta.dirname, "fixtures");

describe.runIf(postgresAvailable())("two replicas on one PostgreSQL", () => {
  let pg: PostgresServer;
  let dir: string;
  let a: RegistryServer;
  let b: RegistryServer;
  beforeAll(async () => {
    pg = await startPostgres();
    await pg.createDatabase("registry");
    dir = mkdtempSync(join(tmpdir(), "replicas-"));
    writeFileSync(join(dir, "app-pw"), `${pg.appPassword}\n`);
    writeFileSync(join(dir, "mig-pw"), `${pg.migrationPassword}\n`);
    const yaml = `
sources:
  - name: catalog
    file: { path: ${join(FIXTURES, "catalog-upstream.json")} }
    syncPolicy: { interval: 1h }
  - name: team
    managed: {}
registries:
  - name: default
    sources: [catalog, team]
auth: { mode: anonymous }
database:
  host: 127.0.0.1
  port: ${pg.port}
  database: registry
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable
`;
    [a, b] = await Promise.all([startServer(yaml, dir), startServer(yaml, dir)]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("publishes concurrently through both and serves the same data from both", async () => {
    const publish = (s: RegistryServer, version: string) =>
      fetch(`${s.url}/default/v0.1/publish`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
          name: "io.team/svc",
          description: "A service published through both replicas",
          version,
          remotes: [{ type: "streamable-http", url: "https://svc.example/mcp" }],
        }),
      });
    const versions = Array.from({ length: 15 }, (_, i) => `2.${i}.0`);
    const results = await Promise.all(versions.flatMap((v) => [publish(a, v), publish(b, v)]));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(15);
    expect(statuses.filter((s) => s === 409)).toHaveLength(15);
    await new Promise((r) => setTimeout(r, 300));
    const read = async (s: RegistryServer) => {
      const r = await fetch(`${s.url}/default/v0.1/servers/io.team%2Fsvc/versions`);
      return {
        etag: r.headers.get("etag"),
        body: (await r.json()) as {
          servers: { server: { version: string }; _meta: Record<string, { isLatest: boolean }> }[];
        },
      };
    };
    const [ra, rb] = await Promise.all([read(a), read(b)]);
    expect(ra.body.servers).toHaveLength(15);
    expect(ra.etag).toBe(rb.etag);
    const latest = ra.body.servers.filter(
      (s) => s._meta["io.modelcontextprotocol.registry/official"]?.isLatest,
    );
    expect(latest.map((s) => s.server.version)).toEqual(["2.14.0"]);
    const list = (await (await fetch(`${b.url}/default/v0.1/servers?limit=100`)).json()) as {
      metadata: { count: number };
    };
    expect(list.metadata.count).toBe(12 + 15);
    // Both replicas synced the same file source into one set of rows.
    const st = (await (await fetch(`${a.url}/v1/sources/catalog`)).json()) as {
      status: { entryCount: number };
    };
    expect(st.status.entryCount).toBe(12);
  });
});

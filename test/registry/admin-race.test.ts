// The rules between sources hold under concurrent admin writes: they are checked inside the
// store's transaction, so of two PUTs racing to make a managed source exactly one wins, on the
// embedded store and across two replicas on one PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../support/postgres.js";
import { startServer } from "./helpers.js";

const DATA = join(import.meta.dirname, "fixtures", "catalog-upstream.json");
const BASE = `
sources:
  - name: catalog
    format: upstream
    file: { path: ${DATA} }
registries:
  - name: open
    sources: [catalog]
auth: { mode: anonymous }
`;

interface Setup {
  name: string;
  /** Two servers (the same one twice on the embedded store) over one store. */
  start(dir: string): Promise<[RegistryServer, RegistryServer]>;
  stop(): Promise<void>;
}

let pg: PostgresServer | undefined;
const setups: Setup[] = [
  {
    name: "embedded store",
    async start(dir) {
      const s = await startServer(BASE, dir);
      return [s, s];
    },
    stop: () => Promise.resolve(),
  },
  ...(postgresAvailable()
    ? [
        {
          name: "two replicas on PostgreSQL",
          async start(dir: string): Promise<[RegistryServer, RegistryServer]> {
            pg = await startPostgres();
            await pg.createDatabase("race");
            writeFileSync(join(dir, "app-pw"), `${pg.appPassword}\n`);
            writeFileSync(join(dir, "mig-pw"), `${pg.migrationPassword}\n`);
            const yaml = `${BASE}
database:
  host: 127.0.0.1
  port: ${pg.port}
  database: race
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable
`;
            const a = await startServer(yaml, dir);
            return [a, await startServer(yaml, dir)];
          },
          stop: async () => {
            await pg?.stop();
          },
        },
      ]
    : []),
];

for (const setup of setups) {
  describe(`admin rules under concurrent writes (${setup.name})`, () => {
    let dir: string;
    let a: RegistryServer;
    let b: RegistryServer;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "admin-race-"));
      [a, b] = await setup.start(dir);
    });
    afterAll(async () => {
      await a.close();
      if (b !== a) await b.close();
      await setup.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    const put = (s: RegistryServer, name: string, body: unknown) =>
      fetch(`${s.url}/v1/sources/${name}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    it("lets one of two concurrent PUTs make a managed source, never both", async () => {
      for (let round = 0; round < 5; round++) {
        const [ra, rb] = await Promise.all([
          put(a, `race-a${round}`, { managed: {} }),
          put(b, `race-b${round}`, { managed: {} }),
        ]);
        expect([ra.status, rb.status].sort()).toEqual([201, 409]);
        const list = (await (await fetch(`${a.url}/v1/sources`)).json()) as {
          sources: { name: string; kind: string }[];
        };
        const managed = list.sources.filter((s) => s.kind === "managed");
        expect(managed).toHaveLength(1);
        const del = await fetch(`${a.url}/v1/sources/${managed[0]?.name}`, { method: "DELETE" });
        expect(del.status).toBe(204);
      }
    });

    it("refuses a PUT over a source the configuration file defines", async () => {
      const r = await put(b, "catalog", { managed: {} });
      expect(r.status).toBe(403);
      expect(((await r.json()) as { code: string }).code).toBe("ERR_CONFIG_RESOURCE_READONLY");
    });
  });
}

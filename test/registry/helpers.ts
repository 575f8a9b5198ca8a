// Shared test helpers for the registry server: store factories for both drivers, entries and
// a server started from config text.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { parseConfig } from "../../src/registry/config/load.js";
import { RegistryServer, type ServeSettings } from "../../src/registry/server.js";
import { PostgresDb } from "../../src/registry/store/postgres.js";
import { SqliteDb } from "../../src/registry/store/sqlite.js";
import { Store } from "../../src/registry/store/store.js";
import type { ServerEntry } from "../../src/registry/formats/model.js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../support/postgres.js";

export function entry(
  name: string,
  version: string,
  extra: Partial<ServerEntry> = {},
): ServerEntry {
  return {
    name,
    version,
    server: { name, version, description: `${name} server`, title: name.split("/")[1] },
    tags: [],
    status: "active",
    ...extra,
  };
}

export interface StoreFactory {
  driver: "sqlite" | "postgres";
  /** A fresh, migrated store on its own database. */
  open(): Promise<Store>;
  /** A second store on the same database as the last open() (another replica). */
  openReplica(): Promise<Store>;
  /** PostgreSQL connection options of the last database (postgres only). */
  lastOptions?: () => ConstructorParameters<typeof PostgresDb>[0];
  teardown(): Promise<void>;
}

let dbCounter = 0;

export function sqliteFactory(): StoreFactory {
  const opened: Store[] = [];
  return {
    driver: "sqlite",
    async open() {
      const s = new Store(SqliteDb.open());
      await s.init();
      opened.push(s);
      return s;
    },
    openReplica() {
      throw new Error("the embedded store is single-process: no replicas");
    },
    async teardown() {
      await Promise.all(opened.map((s) => s.close()));
    },
  };
}

export function postgresFactory(): StoreFactory {
  let server: PostgresServer | undefined;
  let last: ConstructorParameters<typeof PostgresDb>[0] | undefined;
  const opened: Store[] = [];
  const replica = async (): Promise<Store> => {
    if (last === undefined) throw new Error("open() first");
    const s = new Store(new PostgresDb(last));
    await s.init();
    opened.push(s);
    return s;
  };
  return {
    driver: "postgres",
    async open() {
      server ??= await startPostgres();
      const database = `t${process.pid}_${++dbCounter}`;
      await server.createDatabase(database);
      last = {
        host: server.host,
        port: server.port,
        database,
        user: server.appUser,
        password: server.appPassword,
        migrationUser: server.migrationUser,
        migrationPassword: server.migrationPassword,
        sslMode: "disable",
        maxOpenConns: 5,
      };
      return replica();
    },
    openReplica: replica,
    lastOptions: () => {
      if (last === undefined) throw new Error("open() first");
      return last;
    },
    async teardown() {
      await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
      await server?.stop();
    },
  };
}

/** Factories for every driver available here (PostgreSQL only when its binaries exist). */
export function storeFactories(): StoreFactory[] {
  return postgresAvailable() ? [sqliteFactory(), postgresFactory()] : [sqliteFactory()];
}

/** The sources and registries of a server with one managed source, `team`, in `default`. */
export const TEAM_ONLY = `
sources:
  - name: team
    managed: {}
registries:
  - name: default
    sources: [team]
`;

/** Starts a server from config text written into `dir` (port 0, silent logs). */
export async function startServer(
  yaml: string,
  dir: string,
  settings: ServeSettings = {},
): Promise<RegistryServer> {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, yaml);
  const parsed = parseConfig(yaml, path);
  return RegistryServer.start(
    { ...parsed, path, baseDir: dir },
    {
      port: 0,
      log: pino({ level: "silent" }),
      bodyLimit: 64 * 1024,
      cacheDir: join(dir, "git"),
      generationPollMs: 100,
      ...settings,
    },
  );
}

/**
 * Polls `${url}/readiness` until it answers 200 (its first syncs done), for up to `timeoutMs`;
 * what the test asserts next says what a server that never got ready did.
 */
export async function untilReady(url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && (await fetch(`${url}/readiness`)).status !== 200) {
    await new Promise((r) => setTimeout(r, 50));
  }
}

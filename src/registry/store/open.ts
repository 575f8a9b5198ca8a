// Opens the store the `database` section describes: absent or `embedded` gives PGlite (in
// memory, or in embedded.dataDir); connection fields give PostgreSQL with two users.
import { isAbsolute, resolve } from "node:path";
import { McpfleetError } from "../../errors.js";
import { parseDuration } from "../config/duration.js";
import { resolvePassword } from "../config/secrets.js";
import type { DatabaseConfig } from "../config/types.js";
import type { Db } from "./db.js";
import { PgliteDb } from "./pglite.js";
import { PostgresDb } from "./postgres.js";
import { Store } from "./store.js";

export const DEFAULT_MAX_META_SIZE = 262_144;

export async function openDb(
  cfg: DatabaseConfig | undefined,
  baseDir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Db> {
  if (cfg === undefined || cfg.embedded !== undefined) {
    const dir = cfg?.embedded?.dataDir;
    return PgliteDb.open(
      dir === undefined ? undefined : isAbsolute(dir) ? dir : resolve(baseDir, dir),
    );
  }
  if (cfg.dynamicAuth !== undefined) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      "database.dynamicAuth (AWS RDS IAM) is not supported by this server yet; use password files or pgpass",
    );
  }
  const host = cfg.host ?? "postgres";
  const port = cfg.port ?? 5432;
  const database = cfg.database ?? "registry";
  const user = cfg.user ?? "db_app";
  const migrationUser = cfg.migrationUser ?? "db_migrator";
  const rel = (p: string | undefined): string | undefined =>
    p === undefined ? undefined : isAbsolute(p) ? p : resolve(baseDir, p);
  const password = resolvePassword(
    {
      file: rel(cfg.passwordFile),
      env: ["MCPFLEET_DB_PASSWORD", "PGPASSWORD"],
      clearText: cfg.password,
      host,
      port,
      database,
      user,
    },
    env,
  );
  const migrationPassword = resolvePassword(
    {
      file: rel(cfg.migrationPasswordFile),
      env: ["MCPFLEET_DB_MIGRATION_PASSWORD"],
      clearText: cfg.migrationPassword,
      host,
      port,
      database,
      user: migrationUser,
    },
    env,
  );
  return new PostgresDb({
    host,
    port,
    database,
    user,
    password,
    migrationUser,
    migrationPassword,
    sslMode: cfg.sslMode ?? "prefer",
    maxOpenConns: cfg.maxOpenConns ?? 10,
    maxIdleConns: cfg.maxIdleConns ?? 2,
    connMaxLifetimeMs: parseDuration(cfg.connMaxLifetime ?? "30m"),
  });
}

export async function openStore(
  cfg: DatabaseConfig | undefined,
  baseDir: string,
  env?: NodeJS.ProcessEnv,
): Promise<Store> {
  const store = new Store(await openDb(cfg, baseDir, env));
  try {
    await store.init();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw new McpfleetError(
      "ERR_STORE_UNAVAILABLE",
      `cannot open the ${store.driver} store: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return store;
}

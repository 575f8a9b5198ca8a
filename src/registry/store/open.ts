// Opens the store the `database` section describes: absent or `embedded` gives SQLite (in
// memory, or in a file in embedded.dataDir); connection fields give PostgreSQL with two users, who log in
// with passwords or, with dynamicAuth.awsRdsIam, with RDS IAM tokens made per connection.
import { isAbsolute, resolve } from "node:path";
import { McpfleetError } from "../../errors.js";
import { parseDuration } from "../../duration.js";
import { resolvePassword } from "../config/secrets.js";
import type { DatabaseConfig } from "../config/types.js";
import type { Db } from "./db.js";
import type { PasswordSource } from "./postgres.js";
import { SqliteDb } from "./sqlite.js";
import { Store } from "./store.js";

export const DEFAULT_MAX_META_SIZE = 262_144;

export async function openDb(
  cfg: DatabaseConfig | undefined,
  baseDir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Db> {
  if (cfg === undefined || cfg.embedded !== undefined) {
    const dir = cfg?.embedded?.dataDir;
    return SqliteDb.open(
      dir === undefined ? undefined : isAbsolute(dir) ? dir : resolve(baseDir, dir),
    );
  }
  return openPostgres(cfg, baseDir, env);
}

/**
 * The PostgreSQL store. Its client (pg) and the AWS SDK that signs RDS IAM tokens are loaded
 * here, when a configuration asks for them: an embedded store's server never holds them.
 */
async function openPostgres(
  cfg: DatabaseConfig,
  baseDir: string,
  env: NodeJS.ProcessEnv,
): Promise<Db> {
  const { PostgresDb } = await import("./postgres.js");
  const host = cfg.host ?? "postgres";
  const port = cfg.port ?? 5432;
  const database = cfg.database ?? "registry";
  const user = cfg.user ?? "db_app";
  const migrationUser = cfg.migrationUser ?? "db_migrator";
  const sslMode = cfg.sslMode ?? "prefer";
  let password: PasswordSource | undefined;
  let migrationPassword: PasswordSource | undefined;
  const iam = cfg.dynamicAuth?.awsRdsIam;
  if (cfg.dynamicAuth !== undefined && iam === undefined) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      "database.dynamicAuth names no method: set database.dynamicAuth.awsRdsIam.region, or " +
        "remove database.dynamicAuth to use passwords",
    );
  }
  if (iam !== undefined) {
    checkRdsIamConfig(cfg);
    const { rdsIamPassword, resolveRdsIamRegion } = await import("./rds-iam.js");
    const region = await resolveRdsIamRegion(iam.region, env);
    password = rdsIamPassword({ host, port, user, region });
    migrationPassword = rdsIamPassword({ host, port, user: migrationUser, region });
  } else {
    const rel = (p: string | undefined): string | undefined =>
      p === undefined ? undefined : isAbsolute(p) ? p : resolve(baseDir, p);
    password = resolvePassword(
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
    migrationPassword = resolvePassword(
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
  }
  return new PostgresDb({
    host,
    port,
    database,
    user,
    password,
    migrationUser,
    migrationPassword,
    sslMode,
    rdsIam: iam !== undefined,
    maxOpenConns: cfg.maxOpenConns ?? 10,
    maxIdleConns: cfg.maxIdleConns ?? 2,
    connMaxLifetimeMs: parseDuration(cfg.connMaxLifetime ?? "30m"),
  });
}

/**
 * What dynamicAuth cannot be combined with: plain-text connections (RDS accepts IAM logins only
 * over TLS, and a token is a bearer credential for 15 minutes) and stored passwords.
 */
function checkRdsIamConfig(cfg: DatabaseConfig): void {
  if (cfg.sslMode === "disable") {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      "database.sslMode is disable, but database.dynamicAuth.awsRdsIam sends RDS IAM tokens, " +
        "which RDS accepts only over TLS: use require, verify-ca or verify-full (or leave " +
        "sslMode out)",
    );
  }
  for (const key of ["passwordFile", "migrationPasswordFile", "password", "migrationPassword"]) {
    if (cfg[key as keyof DatabaseConfig] !== undefined) {
      throw new McpfleetError(
        "ERR_REGISTRY_CONFIG",
        `database.${key} cannot be combined with database.dynamicAuth.awsRdsIam: the users log ` +
          "in with RDS IAM tokens",
      );
    }
  }
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

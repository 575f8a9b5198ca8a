// The production store: PostgreSQL through `pg`, with two users. Migrations run as the
// migration user (under an advisory lock, so replicas starting together do not race); the
// application user then gets only what it needs: use of the schema and read/write of rows.
import pg from "pg";
import type { Db, Queryable, QueryResult } from "./db.js";
import { applyMigrations, MIGRATION_LOCK_ID } from "./migrate.js";

export interface PostgresOptions {
  host: string;
  port: number;
  database: string;
  user: string;
  password?: string;
  migrationUser: string;
  migrationPassword?: string;
  sslMode?: string;
  maxOpenConns?: number;
  maxIdleConns?: number;
  /** Milliseconds a connection is reused at most. */
  connMaxLifetimeMs?: number;
}

function ssl(mode: string | undefined): pg.ClientConfig["ssl"] {
  switch (mode) {
    case undefined:
    case "disable":
    case "allow":
    case "prefer":
      return false;
    case "require":
      return { rejectUnauthorized: false };
    default:
      return { rejectUnauthorized: true };
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export class PostgresDb implements Db {
  readonly driver = "postgres" as const;
  private readonly pool: pg.Pool;

  constructor(private readonly opts: PostgresOptions) {
    this.pool = new pg.Pool({
      host: opts.host,
      port: opts.port,
      database: opts.database,
      user: opts.user,
      password: opts.password,
      ssl: ssl(opts.sslMode),
      max: opts.maxOpenConns ?? 10,
      min: 0,
      idleTimeoutMillis: 30_000,
      maxLifetimeSeconds: Math.ceil((opts.connMaxLifetimeMs ?? 30 * 60_000) / 1000),
    });
    // An idle client that errors (server restart) must not crash the process.
    this.pool.on("error", () => undefined);
  }

  async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
    const r = await this.pool.query(sql, params);
    return { rows: r.rows as T[] };
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const result = await fn({
        query: async <R>(sql: string, params?: unknown[]) => {
          const r = await client.query(sql, params);
          return { rows: r.rows as R[] };
        },
      });
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async migrate(): Promise<void> {
    const client = new pg.Client({
      host: this.opts.host,
      port: this.opts.port,
      database: this.opts.database,
      user: this.opts.migrationUser,
      password: this.opts.migrationPassword,
      ssl: ssl(this.opts.sslMode),
    });
    await client.connect();
    try {
      const conn: Queryable = {
        query: async <R>(sql: string, params?: unknown[]) => {
          const r = await client.query(sql, params);
          return { rows: r.rows as R[] };
        },
      };
      await conn.query(`SELECT pg_advisory_lock($1)`, [MIGRATION_LOCK_ID]);
      try {
        await applyMigrations(conn);
        if (this.opts.user !== this.opts.migrationUser) {
          const app = quoteIdent(this.opts.user);
          await conn.query(`GRANT USAGE ON SCHEMA public TO ${app}`);
          await conn.query(
            `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${app}`,
          );
          await conn.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${app}`);
          await conn.query(`REVOKE ALL ON mcpfleet_migrations FROM ${app}`);
          await conn.query(`GRANT SELECT ON mcpfleet_migrations TO ${app}`);
        }
      } finally {
        await conn.query(`SELECT pg_advisory_unlock($1)`, [MIGRATION_LOCK_ID]);
      }
    } finally {
      await client.end();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

// The production store: PostgreSQL through `pg`, with two users. Migrations run as the
// migration user (under an advisory lock, so replicas starting together do not race); the
// application user then gets only what it needs: use of the schema and read/write of rows.
// With RDS IAM authentication the passwords are functions returning a fresh token per connection.
import pg from "pg";
import { McpfleetError } from "../../errors.js";
import type { Db, Queryable, QueryResult } from "./db.js";
import { applyMigrations, MIGRATION_LOCK_ID } from "./migrate.js";
import { postgresDialect } from "./postgres-dialect.js";

/** A password, or a function `pg` calls for each new connection (short-lived tokens). */
export type PasswordSource = string | (() => Promise<string>);

export interface PostgresOptions {
  host: string;
  port: number;
  database: string;
  user: string;
  password?: PasswordSource;
  migrationUser: string;
  migrationPassword?: PasswordSource;
  sslMode?: string;
  /**
   * The passwords are RDS IAM tokens: bearer credentials RDS accepts only over TLS, so `allow`
   * and `prefer` connect with TLS too (`disable` is refused), and logins the server refuses are
   * explained as refused tokens.
   */
  rdsIam?: boolean;
  maxOpenConns?: number;
  maxIdleConns?: number;
  /** Milliseconds a connection is reused at most. */
  connMaxLifetimeMs?: number;
}

function ssl(mode: string | undefined, tlsOnly: boolean): pg.ClientConfig["ssl"] {
  switch (mode) {
    case "disable":
      if (tlsOnly) {
        throw new McpfleetError(
          "ERR_REGISTRY_CONFIG",
          "database.sslMode disable cannot carry RDS IAM tokens",
        );
      }
      return false;
    case undefined:
    case "allow":
    case "prefer":
      // `pg` cannot fall back between TLS and plain text as libpq does: it uses one of them.
      return tlsOnly ? { rejectUnauthorized: false } : false;
    case "require":
      return { rejectUnauthorized: false };
    default:
      return { rejectUnauthorized: true };
  }
}

/** SQLSTATEs of a refused login: invalid_password, invalid_authorization_specification. */
const LOGIN_REFUSED = new Set(["28P01", "28000"]);

type ConnectCallback = Parameters<pg.Client["connect"]>[0] & object;

/**
 * A client that closes its socket when it fails to log in: when the password function fails,
 * `pg` leaves the socket open and the server keeps a backend waiting for the password until its
 * authentication_timeout, one per attempt.
 */
class ClosingClient extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
    if (callback === undefined) {
      return super.connect().catch((err: unknown) => {
        this.end().catch(() => undefined);
        throw err;
      });
    }
    super.connect((err: Error | null) => {
      if (err !== null && err !== undefined) this.end().catch(() => undefined);
      (callback as (err: Error | null) => void)(err);
    });
  }
}

/**
 * Distinct statements given a name (prepared once per connection, then only bound and run):
 * the store's statements are a fixed set of texts, so this bound is never reached in practice;
 * past it a statement runs unnamed, parsed and planned each time.
 */
const MAX_NAMED_STATEMENTS = 500;

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export class PostgresDb implements Db {
  readonly driver = "postgres" as const;
  readonly dialect = postgresDialect;
  private readonly pool: pg.Pool;
  /** Statement names by SQL text (see statementName). */
  private readonly names = new Map<string, string>();

  constructor(private readonly opts: PostgresOptions) {
    this.pool = new pg.Pool({
      host: opts.host,
      port: opts.port,
      database: opts.database,
      user: opts.user,
      password: opts.password,
      ssl: ssl(opts.sslMode, opts.rdsIam === true),
      Client: ClosingClient,
      max: opts.maxOpenConns ?? 10,
      min: 0,
      idleTimeoutMillis: 30_000,
      maxLifetimeSeconds: Math.ceil((opts.connMaxLifetimeMs ?? 30 * 60_000) / 1000),
    });
    // An idle client that errors (server restart) must not crash the process.
    this.pool.on("error", () => undefined);
  }

  /** A refused login with an RDS IAM token says so; every other error is returned as it is. */
  private explain(err: unknown, user: string): unknown {
    const code = (err as { code?: unknown } | null)?.code;
    if (this.opts.rdsIam !== true || typeof code !== "string" || !LOGIN_REFUSED.has(code)) {
      return err;
    }
    return new McpfleetError(
      "ERR_STORE_UNAVAILABLE",
      `PostgreSQL at ${this.opts.host}:${this.opts.port} refused the RDS IAM token of user ` +
        `"${user}": ${(err as Error).message} (this needs IAM database authentication enabled ` +
        `on the instance, the rds_iam role granted to the user and rds-db:connect allowed to ` +
        `the AWS identity for it)`,
      { cause: err },
    );
  }

  /**
   * The name a statement with parameters is prepared under on each connection: PostgreSQL
   * then parses it once per connection and reuses its plan where that costs no more, where an
   * unnamed statement is parsed and planned again on every call (planning a search took longer
   * than running it). Statements without parameters (DDL, housekeeping) stay unnamed.
   */
  private statementName(sql: string, params: unknown[] | undefined): string | undefined {
    if (params === undefined || params.length === 0) return undefined;
    let name = this.names.get(sql);
    if (name === undefined && this.names.size < MAX_NAMED_STATEMENTS) {
      name = `mcpfleet_${this.names.size}`;
      this.names.set(sql, name);
    }
    return name;
  }

  async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
    let r: pg.QueryResult;
    try {
      const name = this.statementName(sql, params);
      r = await this.pool.query(
        name === undefined ? { text: sql, values: params } : { name, text: sql, values: params },
      );
    } catch (err) {
      throw this.explain(err, this.opts.user);
    }
    return { rows: r.rows as T[] };
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.explain(err, this.opts.user);
    }
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
    const client = new ClosingClient({
      host: this.opts.host,
      port: this.opts.port,
      database: this.opts.database,
      user: this.opts.migrationUser,
      password: this.opts.migrationPassword,
      ssl: ssl(this.opts.sslMode, this.opts.rdsIam === true),
    });
    try {
      await client.connect();
    } catch (err) {
      throw this.explain(err, this.opts.migrationUser);
    }
    try {
      const conn: Queryable = {
        query: async <R>(sql: string, params?: unknown[]) => {
          const r = await client.query(sql, params);
          return { rows: r.rows as R[] };
        },
      };
      await conn.query(`SELECT pg_advisory_lock($1)`, [MIGRATION_LOCK_ID]);
      try {
        await applyMigrations(conn, postgresDialect);
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

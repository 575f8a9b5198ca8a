// The embedded store: SQLite through Node's built-in node:sqlite, in a private temporary file or
// in a file in a data directory. node:sqlite runs each statement synchronously on the calling thread; the
// store's transactions are asynchronous functions, so they are taken one at a time, and a query
// arriving while one is open waits for its end rather than reading its uncommitted rows.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import type { Db, Queryable, QueryResult } from "./db.js";
import { applyMigrations } from "./migrate.js";
import { sqliteDialect } from "./sqlite-dialect.js";

/** The database file in a data directory. */
export const SQLITE_FILE = "registry.sqlite";

/** Prepared statements kept; the store's SQL has a few dozen shapes. */
const STATEMENT_CACHE = 256;

/** A parameter as SQLite binds it: lists and objects as JSON text, booleans as 0 or 1. */
function bindable(v: unknown): SQLInputValue {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string" || typeof v === "number" || typeof v === "bigint") return v;
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return v;
  return JSON.stringify(v);
}

export class SqliteDb implements Db {
  readonly driver = "sqlite" as const;
  readonly dialect = sqliteDialect;
  private readonly statements = new Map<string, StatementSync>();
  /** Settles when the open transaction ends. */
  private open: Promise<void> | undefined;
  private closed = false;

  private constructor(private readonly db: DatabaseSync) {}

  static open(dataDir?: string): SqliteDb {
    // Without a data directory, SQLite's private temporary database (the empty name): a file in
    // the temporary directory (TMPDIR; the pod's /tmp), removed when the store closes or the
    // process ends, with only SQLite's 2 MB page cache in the process. Its other pages are the
    // kernel's page cache, given back under memory pressure; in ":memory:" the whole catalog
    // (24 MB at 10,000 entries) would be resident for the life of the process.
    let path = "";
    if (dataDir !== undefined) {
      mkdirSync(dataDir, { recursive: true });
      path = join(dataDir, SQLITE_FILE);
    }
    const db = new DatabaseSync(path);
    // Another process holding the file's write lock is waited for, up to 5 s.
    db.exec(`PRAGMA busy_timeout = 5000`);
    if (dataDir !== undefined) {
      // Readers never wait for the writer, and a commit does not wait for the disk (a crash
      // may lose the last commits, never corrupt the file; a lost sync is redone at start).
      db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL`);
    }
    // The statements' now(): the time as stored, ISO 8601 in UTC.
    db.function("now", () => new Date().toISOString());
    return new SqliteDb(db);
  }

  private run<T>(sql: string, params: readonly unknown[] = []): QueryResult<T> {
    let stmt = this.statements.get(sql);
    if (stmt === undefined) {
      // `$1` in the store's SQL is SQLite's numbered parameter `?1`.
      stmt = this.db.prepare(sql.replace(/\$(\d+)/g, "?$1"));
      if (this.statements.size >= STATEMENT_CACHE) this.statements.clear();
      this.statements.set(sql, stmt);
    }
    return { rows: stmt.all(...params.map(bindable)) as T[] };
  }

  async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
    while (this.open !== undefined) await this.open;
    return this.run<T>(sql, params);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    while (this.open !== undefined) await this.open;
    let end = (): void => undefined;
    this.open = new Promise((resolve) => (end = resolve));
    try {
      this.run("BEGIN IMMEDIATE");
      try {
        const result = await fn({
          query: <R>(sql: string, params?: unknown[]) => Promise.resolve(this.run<R>(sql, params)),
        });
        this.run("COMMIT");
        return result;
      } catch (err) {
        // A failed COMMIT may have ended the transaction already.
        try {
          this.run("ROLLBACK");
        } catch {
          // nothing left to roll back
        }
        throw err;
      }
    } finally {
      this.open = undefined;
      end();
    }
  }

  async migrate(): Promise<void> {
    await applyMigrations(this, sqliteDialect);
  }

  async close(): Promise<void> {
    while (this.open !== undefined) await this.open;
    this.statements.clear();
    if (!this.closed) {
      this.closed = true;
      this.db.close();
    }
  }
}

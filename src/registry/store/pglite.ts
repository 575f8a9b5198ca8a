// The embedded store: PGlite (PostgreSQL compiled to WASM), in memory or in a data directory.
import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import type { Db, Queryable, QueryResult } from "./db.js";
import { applyMigrations } from "./migrate.js";

/**
 * Server settings for the embedded store. PGlite's default shared_buffers (160 MB) is
 * allocated and zeroed in the WebAssembly heap when it opens, so it is resident whatever the
 * catalog size; the registry's reads are answered from its own cache and a data directory sits
 * in the OS page cache, so 16 MB is enough. The WAL is bounded (it lives in memory when there
 * is no data directory, and a single-user server checkpoints only when it reaches
 * max_wal_size).
 */
const START_SETTINGS = [
  "-c",
  "shared_buffers=16MB",
  "-c",
  "max_wal_size=64MB",
  "-c",
  "min_wal_size=32MB",
];

export class PgliteDb implements Db {
  readonly driver = "pglite" as const;
  private constructor(private readonly pg: PGlite) {}

  static async open(dataDir?: string): Promise<PgliteDb> {
    if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
    const pg = await PGlite.create({
      ...(dataDir !== undefined ? { dataDir } : {}),
      startParams: [...PGlite.defaultStartParams, ...START_SETTINGS],
      // The search index of migration 2.
      extensions: { pg_trgm },
    });
    return new PgliteDb(pg);
  }

  async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
    const r = await this.pg.query<T>(sql, params);
    return { rows: r.rows };
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.pg.transaction(async (tx) =>
      fn({
        query: async <R>(sql: string, params?: unknown[]) => {
          const r = await tx.query<R>(sql, params);
          return { rows: r.rows };
        },
      }),
    );
  }

  async migrate(): Promise<void> {
    await applyMigrations(this);
  }

  async close(): Promise<void> {
    if (!this.pg.closed) await this.pg.close();
  }
}

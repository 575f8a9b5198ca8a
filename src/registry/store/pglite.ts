// The embedded store: PGlite (PostgreSQL compiled to WASM), in memory or in a data directory.
import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import type { Db, Queryable, QueryResult } from "./db.js";
import { applyMigrations } from "./migrate.js";

export class PgliteDb implements Db {
  readonly driver = "pglite" as const;
  private constructor(private readonly pg: PGlite) {}

  static async open(dataDir?: string): Promise<PgliteDb> {
    if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
    const pg = await PGlite.create(dataDir !== undefined ? { dataDir } : {});
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

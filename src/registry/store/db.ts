// One small interface over the two drivers: PGlite (embedded, in memory or a data directory)
// and PostgreSQL through `pg`. The store's SQL is the same for both.

export interface QueryResult<T> {
  rows: T[];
}

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
}

export interface Db extends Queryable {
  readonly driver: "pglite" | "postgres";
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs the migrations (as the migration user for PostgreSQL). */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

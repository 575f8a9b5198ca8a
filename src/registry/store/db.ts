// One small interface over the two drivers: SQLite (node:sqlite, embedded, in memory or a data
// directory) and PostgreSQL through `pg`. Placeholders are `$1`, `$2`... on both; where the SQL
// must differ the store asks the driver's dialect.
import type { Dialect } from "./dialect.js";
import type { Queryable } from "./queryable.js";

export type { Queryable, QueryResult } from "./queryable.js";

export interface Db extends Queryable {
  readonly driver: "sqlite" | "postgres";
  readonly dialect: Dialect;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs the migrations (as the migration user for PostgreSQL). */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

// What differs between the store's two SQL engines, and nothing else: the store writes one
// statement for each operation and asks its engine's dialect only for the fragments SQLite and
// PostgreSQL spell differently (lists as parameters, casts, locks, the generation counter and
// search). Lists are passed as JavaScript arrays on both: `pg` sends them as arrays, the SQLite
// driver as JSON text that json_each reads.
import type { Queryable } from "./queryable.js";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export type CastType = "json" | "jsonb" | "timestamptz" | "text[]";

export interface Dialect {
  /** The schema, in order; a released migration is never edited. */
  readonly migrations: readonly Migration[];
  /** DDL of the table recording the migrations that ran. */
  readonly migrationsTable: string;
  /** `param` (a placeholder) read as `type` where the engine needs to be told. */
  cast(param: string, type: CastType): string;
  /** `expr` is one of the list parameter `param`. */
  inList(expr: string, param: string): string;
  /** The list column `column` holds the value `param`. */
  listHas(column: string, param: string): string;
  /**
   * The registry view over the ordered source list $1 for `entries e`: an entry is hidden when
   * an earlier source of the view has its name.
   */
  view(sourceCount: number): string;
  /** An aggregate collecting `expr` of a group into a list (decoded by `decodeJson`). */
  listAgg(expr: string): string;
  /**
   * Marks staged rows latest: those of sync $1 whose name and version are at the same place in
   * the lists $2 (names) and $3 (versions). The lists are a batch; the statement's cost must
   * follow the batch, not the staging table (see each dialect).
   */
  markStagedLatest: string;
  /**
   * Serializes the transaction `tx` with every other one taking the same key, across replicas
   * sharing the database, until it ends.
   */
  lock(tx: Queryable, key: string): Promise<void>;
  /** Reads the generation counter; `nextGeneration` moves it on and returns the new value. */
  readonly readGeneration: string;
  readonly nextGeneration: string;
  /**
   * A condition matching entries `e` whose `search` text holds `term` (lower-case, not empty);
   * pushes its parameters.
   */
  search(term: string, params: unknown[]): string;
  /** Housekeeping after a sync wrote or dropped many staged rows. */
  afterBulkWrite(db: Queryable, replaced: boolean): Promise<void>;
}

/** A JSON column's value: parsed by `pg`, JSON text from SQLite. */
export function decodeJson<T>(v: unknown): T {
  return (typeof v === "string" ? JSON.parse(v) : v) as T;
}

/** A boolean column's value: a boolean from `pg`, 0 or 1 from SQLite. */
export function decodeBool(v: unknown): boolean {
  return v === true || v === 1;
}

// What each part of the store works with: the driver, its dialect, and the write transaction
// that moves the generation on after it commits (see Store.write).
import type { Db } from "./db.js";
import type { Dialect } from "./dialect.js";
import type { Queryable } from "./queryable.js";

export interface StoreAccess {
  readonly db: Db;
  /** The SQL fragments of the store's engine. */
  readonly sql: Dialect;
  write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** Serializes changes to which sources exist and which registries use them. */
export const TOPOLOGY_LOCK = "mcpfleet-topology";

/** Serializes changes to one name's versions in one source (across replicas). */
export function entryLock(source: string, name: string): string {
  return `mcpfleet-entry:${source}:${name}`;
}

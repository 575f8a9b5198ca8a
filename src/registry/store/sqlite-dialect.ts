// The store's SQL fragments on SQLite: lists as JSON text read by json_each, no casts, no locks
// (one process writes, one transaction at a time: see sqlite.ts), a one-row table as the
// generation counter, and FTS5's trigram index answering substring search.
import type { Dialect } from "./dialect.js";
import { SQLITE_MIGRATIONS } from "./sqlite-schema.js";

/** FTS5 finds nothing for terms shorter than a trigram: those are matched by reading entries. */
const TRIGRAM = 3;

/** Every distinct trigram of each text. */
function trigramsOf(texts: readonly string[]): Set<string> {
  const grams = new Set<string>();
  for (const text of texts) {
    const chars = [...text];
    for (let i = 0; i + TRIGRAM <= chars.length; i++) {
      grams.add(chars.slice(i, i + TRIGRAM).join(""));
    }
  }
  return grams;
}

/**
 * A MATCH query for the candidates of `term` (the caller checks the substring itself), each
 * trigram a quoted string: the trigrams of its letter-and-digit runs when it has any, else
 * every trigram of it. Trigrams holding punctuation (`-00`, `io.`, `/se`) are among the most
 * common in a catalog of namespaced names, and the index reads each one's whole list of
 * entries: leaving them out halved the cost of a search at 200,000 versions.
 */
export function trigramQuery(term: string): string {
  const runs = trigramsOf(term.match(/[\p{L}\p{N}]+/gu) ?? []);
  const grams = runs.size > 0 ? runs : trigramsOf([term]);
  return [...grams].map((g) => `"${g.replace(/"/g, '""')}"`).join(" AND ");
}

export const sqliteDialect: Dialect = {
  migrations: SQLITE_MIGRATIONS,
  migrationsTable: `CREATE TABLE IF NOT EXISTS mcpfleet_migrations (
    version integer PRIMARY KEY, name text NOT NULL,
    applied_at text NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))`,
  cast: (param) => param,
  inList: (expr, param) => `${expr} IN (SELECT value FROM json_each(${param}))`,
  listHas: (column, param) => `${param} IN (SELECT value FROM json_each(${column}))`,
  view(sourceCount) {
    const mine = `e.source IN (SELECT value FROM json_each($1))`;
    if (sourceCount <= 1) return mine;
    return `${mine} AND NOT EXISTS (
      SELECT 1 FROM json_each($1) AS earlier JOIN entries p ON p.source = earlier.value
      WHERE p.name = e.name
        AND earlier.key < (SELECT key FROM json_each($1) WHERE value = e.source))`;
  },
  listAgg: (expr) => `json_group_array(${expr})`,
  // Driven from the batch: each pair found through the staging table's primary key. Written
  // as an UPDATE ... FROM, SQLite scanned the lists once per staged row of the sync (12 s for a
  // batch of 2,000 names among 200,000 staged versions; 7 ms this way).
  markStagedLatest: `UPDATE entries_staging SET is_latest = 1 WHERE rowid IN (
    SELECT st.rowid FROM json_each($2) AS n CROSS JOIN entries_staging AS st
    WHERE st.sync_id = $1 AND st.name = n.value
      AND st.version = json_extract($3, '$[' || n.key || ']'))`,
  lock: () => Promise.resolve(),
  readGeneration: `SELECT value AS generation FROM store_generation`,
  nextGeneration: `UPDATE store_generation SET value = value + 1 RETURNING value AS generation`,
  search(term, params) {
    params.push(term);
    const contains = `instr(e.search, $${params.length}) > 0`;
    if ([...term].length < TRIGRAM) return contains;
    params.push(trigramQuery(term));
    return `e.id IN (SELECT rowid FROM entries_search WHERE entries_search MATCH $${params.length})
      AND ${contains}`;
  },
  async afterBulkWrite(db, replaced) {
    // Fresh planner statistics where they are due (SQLite has no background analyze).
    if (replaced) await db.query(`PRAGMA optimize`);
  },
};

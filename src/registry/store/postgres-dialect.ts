// The store's SQL fragments on PostgreSQL: arrays, casts, advisory locks across replicas, a
// sequence as the generation counter and a trigram index answering substring search.
import type { Dialect } from "./dialect.js";
import { POSTGRES_MIGRATIONS } from "./postgres-schema.js";

/** Characters of a trigram: shorter runs give pg_trgm nothing to look up. */
const TRIGRAM = 3;

/** The LIKE pattern the trigram index looks candidates up by (see `search`). */
export function likePattern(term: string): string {
  const runs = term.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (runs.some((r) => [...r].length >= TRIGRAM)) return `%${runs.join("%")}%`;
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export const postgresDialect: Dialect = {
  migrations: POSTGRES_MIGRATIONS,
  migrationsTable: `CREATE TABLE IF NOT EXISTS mcpfleet_migrations (
    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  cast: (param, type) => `${param}::${type}`,
  inList: (expr, param) => `${expr} = ANY(${param}::text[])`,
  listHas: (column, param) => `${param} = ANY(${column})`,
  view(sourceCount) {
    if (sourceCount <= 1) return `e.source = ANY($1::text[])`;
    // An anti-join, so that an ordered, limited read walks the (name, version) index and stops
    // early.
    return `e.source = ANY($1::text[]) AND NOT EXISTS (
      SELECT 1 FROM entries p WHERE p.name = e.name AND p.source = ANY($1::text[])
        AND array_position($1::text[], p.source::text) < array_position($1::text[], e.source::text))`;
  },
  listAgg: (expr) => `array_agg(${expr})`,
  markStagedLatest: `UPDATE entries_staging AS st SET is_latest = true
    FROM unnest($2::text[], $3::text[]) AS l(n, v)
    WHERE st.sync_id = $1 AND st.name = l.n AND st.version = l.v`,
  async lock(tx, key) {
    // Its own statement: a statement's snapshot predates a lock it waits for.
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [key]);
  },
  readGeneration: `SELECT last_value AS generation FROM store_generation`,
  nextGeneration: `SELECT nextval('store_generation') AS generation`,
  search(term, params) {
    // The trigram GIN index of migration 2 finds candidates by `search LIKE pattern`, which it
    // answers; `strpos` then keeps the entries that hold the term itself. The pattern is the
    // term's letter-and-digit runs in order (`-001234` looks up `%001234%`): a term's
    // punctuation makes pg_trgm add word-boundary trigrams, which nearly every entry shares
    // (`  0`, ` 00`), and reading their posting lists cost seven times the rest. Without a
    // run of a trigram's length, the pattern is the term itself, `\` escaping LIKE's wildcards.
    // The matches are found first, by row address, then filtered and ordered: otherwise,
    // without fresh statistics (a sync just wrote the rows, and only the owner may ANALYZE),
    // the planner reads every entry of the view and tests each one.
    params.push(term, likePattern(term));
    const [exact, like] = [params.length - 1, params.length];
    return `e.ctid = ANY (ARRAY(SELECT s.ctid FROM entries s
      WHERE s.search LIKE $${like} AND strpos(s.search, $${exact}) > 0))`;
  },
  // Autovacuum does it (the application user does not own the tables).
  afterBulkWrite: () => Promise.resolve(),
};

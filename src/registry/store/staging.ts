// A sync's entries: written to a staging table as they arrive, then swapped in for the
// source's entries in one transaction, so readers see the old set or the new one, never a mix.
import { McpfleetError } from "../../errors.js";
import { printable } from "../formats/bounds.js";
import type { StoreAccess } from "./access.js";
import { decodeJson, type Dialect } from "./dialect.js";
import { STAGE_COLUMNS, STAGE_ROWS, type StageRows } from "./entry-rows.js";
import type { Queryable } from "./queryable.js";
import { latestVersion } from "./versions.js";

const stageSqlCache = new WeakMap<Dialect, Map<number, string>>();

/** `INSERT INTO entries_staging ... VALUES (...), ...` for `n` rows; $1 is the sync id. */
function stageSql(d: Dialect, n: number): string {
  let cache = stageSqlCache.get(d);
  if (cache === undefined) stageSqlCache.set(d, (cache = new Map<number, string>()));
  let sql = cache.get(n);
  if (sql === undefined) {
    const rows: string[] = [];
    for (let i = 0; i < n; i++) {
      const p = 2 + i * STAGE_COLUMNS;
      rows.push(
        `($1, $${p}, $${p + 1}, ${d.cast(`$${p + 2}`, "json")}, $${p + 3}, ` +
          `${d.cast(`$${p + 4}`, "jsonb")}, $${p + 5}, $${p + 6})`,
      );
    }
    sql = `INSERT INTO entries_staging (sync_id, name, version, server, search, claims, status, digest)
       VALUES ${rows.join(", ")}
       ON CONFLICT (sync_id, name, version) DO NOTHING`;
    cache.set(n, sql);
  }
  return sql;
}

/** See Store.stageRows. */
export async function stageRows(s: StoreAccess, syncId: string, rows: StageRows): Promise<void> {
  const cols = rows.columns;
  const step = STAGE_ROWS * STAGE_COLUMNS;
  for (let i = 0; i < cols.length; i += step) {
    const chunk = cols.length <= step ? cols : cols.slice(i, i + step);
    await s.db.query(stageSql(s.sql, chunk.length / STAGE_COLUMNS), [syncId, ...chunk]);
  }
}

export async function discardStaging(s: StoreAccess, syncId: string): Promise<void> {
  await s.db.query(`DELETE FROM entries_staging WHERE sync_id = $1`, [syncId]);
  await s.sql.afterBulkWrite(s.db, false);
}

/**
 * Marks the latest staged version of each name staged with several versions, semver-aware. A
 * name staged with one version (the common case) is its own latest, which the swap decides in
 * SQL; only names with several versions are read here, 2,000 names at a time in name order, so
 * memory stays bounded however many entries the source has, and only their latest rows change.
 */
async function markStagedLatest(s: StoreAccess, syncId: string): Promise<void> {
  let lastName = "";
  for (;;) {
    const pairs = await s.db.query<{ name: string; versions: string[] }>(
      `SELECT name, ${s.sql.listAgg("version")} AS versions FROM entries_staging
         WHERE sync_id = $1 AND name > $2 AND status <> 'deleted' GROUP BY name
         HAVING count(*) > 1
         ORDER BY name LIMIT 2000`,
      [syncId, lastName],
    );
    if (pairs.rows.length === 0) break;
    const names: string[] = [];
    const versions: string[] = [];
    for (const p of pairs.rows) {
      const l = latestVersion(decodeJson<string[]>(p.versions));
      if (l !== undefined) {
        names.push(p.name);
        versions.push(l);
      }
    }
    await s.db.query(s.sql.markStagedLatest, [syncId, names, versions]);
    lastName = pairs.rows[pairs.rows.length - 1]?.name ?? lastName;
  }
}

/** Replaces the source's entries with the staged ones inside `tx`; returns their count. */
async function swapStaged(tx: Queryable, syncId: string, source: string): Promise<number> {
  await tx.query(
    `DELETE FROM entries AS e WHERE e.source = $2 AND NOT EXISTS (
           SELECT 1 FROM entries_staging st
           WHERE st.sync_id = $1 AND st.name = e.name AND st.version = e.version)`,
    [syncId, source],
  );
  await tx.query(
    `INSERT INTO entries (source, name, version, server, search, claims, status, digest,
           is_latest)
         SELECT $2, st.name, st.version, st.server, st.search, st.claims, st.status, st.digest,
           st.is_latest OR (st.status <> 'deleted' AND NOT EXISTS (SELECT 1 FROM entries_staging o
             WHERE o.sync_id = $1 AND o.name = st.name AND o.version <> st.version
               AND o.status <> 'deleted'))
         FROM entries_staging st WHERE st.sync_id = $1
         ON CONFLICT (source, name, version) DO UPDATE SET server = EXCLUDED.server,
           search = EXCLUDED.search, claims = EXCLUDED.claims, status = EXCLUDED.status,
           digest = EXCLUDED.digest, is_latest = EXCLUDED.is_latest, updated_at = now()
         WHERE entries.digest <> EXCLUDED.digest OR entries.is_latest <> EXCLUDED.is_latest`,
    [syncId, source],
  );
  const ins = await tx.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM entries WHERE source = $1`,
    [source],
  );
  await tx.query(`DELETE FROM entries_staging WHERE sync_id = $1`, [syncId]);
  return Number(ins.rows[0]?.n ?? 0);
}

/** See Store.commitStaging. */
export async function commitStaging(
  s: StoreAccess,
  syncId: string,
  source: string,
  contentHash: string,
  message?: string,
): Promise<number> {
  await markStagedLatest(s, syncId);
  const n = await s.write(async (tx) => {
    await s.sql.lock(tx, `mcpfleet-source:${source}`);
    const exists = await tx.query(`SELECT 1 FROM sources WHERE name = $1`, [source]);
    if (exists.rows.length === 0) {
      throw new McpfleetError("ERR_SOURCE_NOT_FOUND", `source "${source}" was deleted`);
    }
    const n = await swapStaged(tx, syncId, source);
    await tx.query(
      `INSERT INTO source_status (source, phase, last_attempt, last_success, message,
           entry_count, content_hash)
         VALUES ($1, 'Ready', now(), now(), $4, $2, $3)
         ON CONFLICT (source) DO UPDATE SET phase = 'Ready', last_success = now(),
           message = $4, entry_count = $2, content_hash = $3, attempt_count = 0`,
      [source, n, contentHash, message === undefined ? null : printable(message).slice(0, 2000)],
    );
    return n;
  });
  await s.sql.afterBulkWrite(s.db, true);
  return n;
}

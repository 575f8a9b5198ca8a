// Reading entries: pages of a registry view, a name's versions, a source's count.
import type { StoreAccess } from "./access.js";
import type { ListQuery, StoredEntry, VersionsQuery } from "./records.js";
import { ENTRY_COLUMNS, toEntry } from "./rows.js";
import { compareVersions } from "./versions.js";

/** The conditions of a page query, pushing their parameters after the source list ($1). */
function listConditions(s: StoreAccess, sources: string[], q: ListQuery, params: unknown[]) {
  const where: string[] = [s.sql.view(sources.length)];
  if (q.after !== undefined) {
    params.push(q.after.name, q.after.version);
    where.push(`(e.name, e.version) > ($${params.length - 1}, $${params.length})`);
  }
  if (q.search !== undefined && q.search !== "") {
    where.push(s.sql.search(q.search.toLowerCase(), params));
  }
  if (q.updatedSince !== undefined) {
    params.push(q.updatedSince.toISOString());
    where.push(`e.updated_at > ${s.sql.cast(`$${params.length}`, "timestamptz")}`);
  }
  if (q.latestOnly === true) where.push(`e.is_latest`);
  if (q.version !== undefined) {
    params.push(q.version);
    where.push(`e.version = $${params.length}`);
  }
  if (q.includeDeleted !== true) where.push(`e.status <> 'deleted'`);
  return where;
}

/** One page of a registry view, ordered by (name, version). */
export async function listEntries(
  s: StoreAccess,
  sources: string[],
  q: ListQuery,
): Promise<StoredEntry[]> {
  const params: unknown[] = [sources];
  const where = listConditions(s, sources, q, params);
  params.push(q.limit);
  const r = await s.db.query(
    `SELECT ${ENTRY_COLUMNS} FROM entries e WHERE ${where.join(" AND ")}
       ORDER BY e.name, e.version LIMIT $${params.length}`,
    params,
  );
  return r.rows.map(toEntry);
}

/** See Store.listVersions. */
export async function listVersions(
  s: StoreAccess,
  sources: string[],
  name: string,
  q: VersionsQuery,
): Promise<StoredEntry[]> {
  const live = q.includeDeleted === true ? "" : ` AND e.status <> 'deleted'`;
  const r = await s.db.query(
    `SELECT ${ENTRY_COLUMNS} FROM entries e
       WHERE e.name = $2 AND ${s.sql.view(sources.length)}${live}`,
    [sources, name],
  );
  return r.rows.map(toEntry).sort((a, b) => compareVersions(b.version, a.version));
}

/**
 * One version of a name in a registry view, or `latest` (the version marked latest, never a
 * deleted one): a single row through the (name, version) index. Undefined when there is no such
 * row (the caller tells an unknown name from an unknown version).
 */
export async function getVersion(
  s: StoreAccess,
  sources: string[],
  name: string,
  version: string,
): Promise<StoredEntry | undefined> {
  const which = version === "latest" ? `e.is_latest AND e.status <> 'deleted'` : `e.version = $3`;
  const r = await s.db.query(
    `SELECT ${ENTRY_COLUMNS} FROM entries e
       WHERE e.name = $2 AND ${which} AND ${s.sql.view(sources.length)}`,
    version === "latest" ? [sources, name] : [sources, name, version],
  );
  const row = r.rows[0];
  return row === undefined ? undefined : toEntry(row);
}

export async function countEntries(s: StoreAccess, source: string): Promise<number> {
  const r = await s.db.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM entries WHERE source = $1`,
    [source],
  );
  return Number(r.rows[0]?.n ?? 0);
}

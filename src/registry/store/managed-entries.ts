// Changes to single entries: publishing and deleting versions of a managed source, and a
// version's lifecycle status or a name's claims. Each holds its name's lock across replicas.
import type { Claims } from "../config/types.js";
import { McpfleetError } from "../../errors.js";
import { printable } from "../formats/bounds.js";
import type { ServerEntry } from "../formats/model.js";
import { entryLock, type StoreAccess } from "./access.js";
import { decodeJson } from "./dialect.js";
import { digestOfJson, rowValues } from "./entry-rows.js";
import type { Queryable } from "./queryable.js";
import type { EntryStatus, StoredEntry } from "./records.js";
import { ENTRY_COLUMNS, toEntry } from "./rows.js";
import { compareVersions, latestVersion, liveVersions } from "./versions.js";

function sameClaims(a: Claims | undefined, b: Claims | undefined): boolean {
  const norm = (c: Claims | undefined): string =>
    JSON.stringify(
      Object.entries(c ?? {})
        .map(([k, v]) => [k, Array.isArray(v) ? [...v].sort() : v])
        .sort(([x], [y]) => String(x).localeCompare(String(y))),
    );
  return norm(a) === norm(b);
}

/** Marks the latest live version of a name (none when every version is deleted). */
async function recomputeLatest(tx: Queryable, source: string, name: string): Promise<void> {
  const rest = await tx.query<{ version: string; status: string }>(
    `SELECT version, status FROM entries WHERE source = $1 AND name = $2`,
    [source, name],
  );
  const latest = latestVersion(liveVersions(rest.rows)) ?? null;
  await tx.query(
    `UPDATE entries SET is_latest = coalesce(version = $3, false), updated_at =
       CASE WHEN is_latest <> coalesce(version = $3, false) THEN now() ELSE updated_at END
     WHERE source = $1 AND name = $2`,
    [source, name, latest],
  );
}

/** Refuses a version already published, or one whose claims differ from its first version's. */
function checkPublishable(
  entry: ServerEntry,
  rows: readonly { version: string; claims: unknown }[],
): void {
  if (rows.some((p) => p.version === entry.version)) {
    throw new McpfleetError(
      "ERR_VERSION_EXISTS",
      `${entry.name} version ${entry.version} is already published; versions are immutable`,
    );
  }
  const first = rows[0];
  const firstClaims =
    first?.claims === null || first === undefined ? undefined : decodeJson<Claims>(first.claims);
  if (first !== undefined && !sameClaims(firstClaims, entry.claims)) {
    throw new McpfleetError(
      "ERR_CLAIMS_MISMATCH",
      `every version of ${entry.name} must carry the claims of its first version`,
    );
  }
}

/** Publishes one version into a managed source. 409 when the version exists. */
export async function publish(
  s: StoreAccess,
  source: string,
  entry: ServerEntry,
): Promise<StoredEntry> {
  return s.write(async (tx) => {
    // One name at a time (across replicas); the hot rows (status count, generation) are
    // touched last so their row locks are held only until the commit.
    // The lock is its own statement: a statement's snapshot predates a lock it waits for.
    await s.sql.lock(tx, entryLock(source, entry.name));
    const prev = await tx.query<{ version: string; claims: unknown; status: string }>(
      `SELECT version, claims, status FROM entries WHERE source = $1 AND name = $2
         ORDER BY published_at, version`,
      [source, entry.name],
    );
    const rows = prev.rows;
    checkPublishable(entry, rows);
    const latest = latestVersion(
      liveVersions([...rows, { version: entry.version, status: entry.status }]),
    );
    const isLatest = latest === entry.version;
    const r = await tx.query(
      `INSERT INTO entries (source, name, version, server, search, claims, status, digest,
           is_latest)
         VALUES ($1, $2, $3, ${s.sql.cast("$4", "json")}, $5, ${s.sql.cast("$6", "jsonb")},
           $7, $8, $9)
         RETURNING ${ENTRY_COLUMNS.replace(/e\./g, "")}`,
      [source, ...rowValues(entry), isLatest],
    );
    if (isLatest && rows.length > 0) {
      await tx.query(
        `UPDATE entries SET is_latest = false, updated_at = now()
           WHERE source = $1 AND name = $2 AND is_latest AND version <> $3`,
        [source, entry.name, entry.version],
      );
    }
    return toEntry(r.rows[0] as Record<string, unknown>);
  });
}

/** Deletes one version of a managed entry; false when it does not exist. */
export async function deleteVersion(
  s: StoreAccess,
  source: string,
  name: string,
  version: string,
): Promise<boolean> {
  return s.write(async (tx) => {
    await s.sql.lock(tx, entryLock(source, name));
    const r = await tx.query(
      `DELETE FROM entries WHERE source = $1 AND name = $2 AND version = $3 RETURNING 1`,
      [source, name, version],
    );
    if (r.rows.length === 0) return false;
    await recomputeLatest(tx, source, name);
    return true;
  });
}

/** The versions a status change names: one, or every one (`version` "all"). */
function versionFilter(source: string, name: string, version: string, prefix = "") {
  const all = version === "all";
  return {
    clause: all ? "" : ` AND ${prefix}version = $3`,
    params: all ? [source, name] : [source, name, version],
  };
}

/** See Store.setVersionStatus. */
export async function setVersionStatus(
  s: StoreAccess,
  source: string,
  name: string,
  version: string,
  status: EntryStatus,
  message?: string,
): Promise<StoredEntry[]> {
  const msg = message === undefined ? null : printable(message).slice(0, 2000);
  return s.write(async (tx) => {
    await s.sql.lock(tx, entryLock(source, name));
    const sel = versionFilter(source, name, version);
    const rows = await tx.query<{
      version: string;
      server: unknown;
      claims: unknown;
      status: string;
      status_message: string | null;
    }>(
      `SELECT version, server, claims, status, status_message FROM entries
         WHERE source = $1 AND name = $2${sel.clause}`,
      sel.params,
    );
    for (const r of rows.rows) {
      if (r.status === status && r.status_message === msg) continue;
      // The digest hashes the server's JSON text as a sync writes it (key order preserved).
      const json = JSON.stringify(decodeJson(r.server));
      const claims = r.claims === null ? undefined : decodeJson<Claims>(r.claims);
      await tx.query(
        `UPDATE entries SET status = $4, status_message = $5, digest = $6,
             status_changed_at = now(), updated_at = now()
           WHERE source = $1 AND name = $2 AND version = $3`,
        [source, name, r.version, status, msg, digestOfJson(json, claims, status)],
      );
    }
    if (rows.rows.length === 0) return [];
    await recomputeLatest(tx, source, name);
    const out = versionFilter(source, name, version, "e.");
    const after = await tx.query(
      `SELECT ${ENTRY_COLUMNS} FROM entries e
         WHERE e.source = $1 AND e.name = $2${out.clause}`,
      out.params,
    );
    return after.rows.map(toEntry).sort((a, b) => compareVersions(b.version, a.version));
  });
}

/** Gives every version of a name in a source these claims; false when it has none. */
export async function setEntryClaims(
  s: StoreAccess,
  source: string,
  name: string,
  claims: Claims | undefined,
): Promise<boolean> {
  return s.write(async (tx) => {
    await s.sql.lock(tx, entryLock(source, name));
    const rows = await tx.query<{ version: string; server: unknown; status: string }>(
      `SELECT version, server, status FROM entries WHERE source = $1 AND name = $2`,
      [source, name],
    );
    const json = s.sql.cast("$4", "jsonb");
    for (const r of rows.rows) {
      const text = JSON.stringify(decodeJson(r.server));
      await tx.query(
        `UPDATE entries SET claims = ${json}, digest = $5, updated_at = now()
           WHERE source = $1 AND name = $2 AND version = $3`,
        [
          source,
          name,
          r.version,
          claims === undefined ? null : JSON.stringify(claims),
          digestOfJson(text, claims, r.status),
        ],
      );
    }
    return rows.rows.length > 0;
  });
}

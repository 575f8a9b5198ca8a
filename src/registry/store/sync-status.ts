// Each source's sync status: its phase, when it last tried and succeeded, why it failed, and
// how many attempts it made since its last success (each attempt counts as it starts).
import { printable } from "../formats/bounds.js";
import type { StoreAccess } from "./access.js";
import type { SyncStatus } from "./records.js";
import { toStatus } from "./rows.js";

/** Status rows with a live entry count (publishes do not touch the status row). */
const STATUS_SELECT = `SELECT st.source, st.phase, st.last_attempt, st.last_success, st.message,
  st.content_hash, st.api_path, st.attempt_count, (SELECT count(*) FROM entries e WHERE e.source = st.source) AS entry_count
  FROM source_status st`;

export async function getStatus(s: StoreAccess, source: string): Promise<SyncStatus | undefined> {
  const r = await s.db.query(`${STATUS_SELECT} WHERE st.source = $1`, [source]);
  return r.rows[0] === undefined ? undefined : toStatus(r.rows[0]);
}

export async function listStatus(s: StoreAccess): Promise<Map<string, SyncStatus>> {
  const r = await s.db.query(STATUS_SELECT);
  return new Map(r.rows.map((row) => [String(row.source), toStatus(row)]));
}

export async function markSyncing(s: StoreAccess, source: string): Promise<void> {
  await s.db.query(
    `INSERT INTO source_status (source, phase, last_attempt, attempt_count)
       VALUES ($1, 'Syncing', now(), 1)
       ON CONFLICT (source) DO UPDATE SET phase = 'Syncing', last_attempt = now(),
         attempt_count = source_status.attempt_count + 1`,
    [source],
  );
}

export async function recordApiPath(s: StoreAccess, source: string, path: string): Promise<void> {
  await s.db.query(`UPDATE source_status SET api_path = $2 WHERE source = $1`, [source, path]);
}

export async function markUnchanged(s: StoreAccess, source: string): Promise<void> {
  await s.db.query(
    `UPDATE source_status SET phase = 'Ready', last_success = now(),
         message = 'unchanged', attempt_count = 0 WHERE source = $1`,
    [source],
  );
}

export async function markFailed(s: StoreAccess, source: string, message: string): Promise<void> {
  // A message may quote upstream data; the store cannot hold a NUL, and a refused status
  // write would leave the source Syncing for ever.
  message = printable(message).slice(0, 2000);
  await s.db.query(
    `INSERT INTO source_status (source, phase, last_attempt, message, attempt_count)
       VALUES ($1, 'Failed', now(), $2, 1)
       ON CONFLICT (source) DO UPDATE SET phase = 'Failed', message = $2`,
    [source, message],
  );
}

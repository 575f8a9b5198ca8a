// Rows as the drivers return them, decoded into the store's records: times as ISO text (SQLite
// keeps text, `pg` returns Dates), JSON columns parsed, booleans from 0/1 or true/false.
import type { Claims } from "../config/types.js";
import type { ServerJson } from "../formats/model.js";
import { decodeBool, decodeJson } from "./dialect.js";
import type {
  Origin,
  RegistryRecord,
  SourceRecord,
  StoredEntry,
  SyncPhase,
  SyncStatus,
} from "./records.js";

/** A time as Date.toISOString() writes it, which is how SQLite stores every time. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function iso(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  const text = String(v);
  return ISO_UTC.test(text) ? text : new Date(text).toISOString();
}

export function isoOpt(v: unknown): string | undefined {
  return v === null || v === undefined ? undefined : iso(v);
}

/** The columns toEntry reads, of `entries e`. */
export const ENTRY_COLUMNS = `e.source, e.name, e.version, e.server, e.claims, e.status,
  e.status_message, e.status_changed_at, e.is_latest, e.published_at, e.updated_at`;

export function toEntry(r: Record<string, unknown>): StoredEntry {
  const e: StoredEntry = {
    source: String(r.source),
    name: String(r.name),
    version: String(r.version),
    server: decodeJson<ServerJson>(r.server),
    status: String(r.status),
    isLatest: decodeBool(r.is_latest),
    publishedAt: iso(r.published_at),
    updatedAt: iso(r.updated_at),
  };
  if (r.claims !== null && r.claims !== undefined) e.claims = decodeJson<Claims>(r.claims);
  if (typeof r.status_message === "string") e.statusMessage = r.status_message;
  const changed = isoOpt(r.status_changed_at);
  if (changed !== undefined) e.statusChangedAt = changed;
  return e;
}

export function toSource(r: Record<string, unknown>): SourceRecord {
  return {
    name: String(r.name),
    kind: String(r.kind),
    config: decodeJson<Record<string, unknown>>(r.config),
    origin: r.origin as Origin,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export function toRegistry(r: Record<string, unknown>): RegistryRecord {
  const reg: RegistryRecord = {
    name: String(r.name),
    sources: decodeJson<string[]>(r.sources),
    origin: r.origin as Origin,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
  if (r.claims !== null && r.claims !== undefined) reg.claims = decodeJson<Claims>(r.claims);
  return reg;
}

export function toStatus(r: Record<string, unknown>): SyncStatus {
  const s: SyncStatus = {
    phase: String(r.phase) as SyncPhase,
    entryCount: Number(r.entry_count ?? 0),
  };
  const la = isoOpt(r.last_attempt);
  const ls = isoOpt(r.last_success);
  if (la !== undefined) s.lastAttempt = la;
  if (ls !== undefined) s.lastSuccess = ls;
  if (typeof r.message === "string") s.message = r.message;
  if (typeof r.content_hash === "string") s.contentHash = r.content_hash;
  if (typeof r.api_path === "string") s.apiPath = r.api_path;
  return s;
}

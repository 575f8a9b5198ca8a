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

/**
 * The columns toEntry reads, of `entries e`: the server document as its stored text on both
 * engines (`pg` would parse PostgreSQL's json type), so an answer can carry it as it is.
 */
export const ENTRY_COLUMNS = `e.source, e.name, e.version, CAST(e.server AS text) AS server,
  e.claims, e.status, e.status_message, e.status_changed_at, e.is_latest, e.published_at,
  e.updated_at`;

/** The stored JSON text of an entry's server document while it has not been parsed. */
const SERVER_TEXT = Symbol("serverText");

interface Unparsed {
  [SERVER_TEXT]?: string;
}

/**
 * `e.server` parsed from `text` when first read: most answers copy the stored text (see
 * serverJsonOf) and never need the document. Reading or assigning it drops the text.
 */
function lazyServer(e: StoredEntry, text: string): void {
  Object.defineProperty(e, SERVER_TEXT, { value: text, writable: true });
  const settle = (server: ServerJson): ServerJson => {
    (e as Unparsed)[SERVER_TEXT] = undefined;
    Object.defineProperty(e, "server", { value: server, writable: true });
    return server;
  };
  Object.defineProperty(e, "server", {
    get: () => settle(JSON.parse(text) as ServerJson),
    set: settle,
  });
}

/**
 * An entry's server document as JSON text, the same as `JSON.stringify(e.server)`: the stored
 * text while the document is unparsed (the store writes it with JSON.stringify, and PostgreSQL's
 * json type keeps it as written).
 */
export function serverJsonOf(e: StoredEntry): string {
  return (e as Unparsed)[SERVER_TEXT] ?? JSON.stringify(e.server);
}

export function toEntry(r: Record<string, unknown>): StoredEntry {
  const e: StoredEntry = {
    source: String(r.source),
    name: String(r.name),
    version: String(r.version),
    server: undefined as unknown as ServerJson,
    status: String(r.status),
    isLatest: decodeBool(r.is_latest),
    publishedAt: iso(r.published_at),
    updatedAt: iso(r.updated_at),
  };
  if (r.claims !== null && r.claims !== undefined) e.claims = decodeJson<Claims>(r.claims);
  if (typeof r.status_message === "string") e.statusMessage = r.status_message;
  const changed = isoOpt(r.status_changed_at);
  if (changed !== undefined) e.statusChangedAt = changed;
  if (typeof r.server === "string") lazyServer(e, r.server);
  else e.server = r.server as ServerJson;
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
    attemptCount: Number(r.attempt_count ?? 0),
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

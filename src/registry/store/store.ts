// The registry store: sources, registries, per-source sync status and entries keyed by
// (source, name, version). All writes go through transactions that also bump a generation
// counter, which the HTTP layer uses to know when cached responses are stale.
import { createHash, randomUUID } from "node:crypto";
import semver from "semver";
import type { Claims } from "../config/types.js";
import { printable } from "../formats/bounds.js";
import { McpfleetError } from "../../errors.js";
import { searchText, type ServerEntry, type ServerJson } from "../formats/model.js";
import type { Db, Queryable } from "./db.js";
import { decodeBool, decodeJson, type Dialect } from "./dialect.js";

export type Origin = "config" | "api";

export interface SourceRecord {
  name: string;
  kind: string;
  /** The source's configuration (the config file's shape). */
  config: Record<string, unknown>;
  origin: Origin;
  createdAt: string;
  updatedAt: string;
}

export interface RegistryRecord {
  name: string;
  sources: string[];
  claims?: Claims;
  origin: Origin;
  createdAt: string;
  updatedAt: string;
}

export type SyncPhase = "Pending" | "Syncing" | "Ready" | "Failed";

export interface SyncStatus {
  phase: SyncPhase;
  lastAttempt?: string;
  lastSuccess?: string;
  message?: string;
  entryCount: number;
  contentHash?: string;
  /** An api source: the path of the server list its endpoint last answered on (`/v0/servers`). */
  apiPath?: string;
}

/** A version's lifecycle status (the official registry's): deleted versions are hidden by default. */
export type EntryStatus = "active" | "deprecated" | "deleted";

export const ENTRY_STATUSES: readonly EntryStatus[] = ["active", "deprecated", "deleted"];

export interface StoredEntry {
  source: string;
  name: string;
  version: string;
  server: ServerJson;
  claims?: Claims;
  status: string;
  /** Why the status was set, as given to setVersionStatus. */
  statusMessage?: string;
  /** When setVersionStatus last changed the status or its message. */
  statusChangedAt?: string;
  /** The latest non-deleted version of its name (the highest semver, stable before pre-release). */
  isLatest: boolean;
  publishedAt: string;
  updatedAt: string;
}

export interface ListQuery {
  /** Last (name, version) of the previous page. */
  after?: { name: string; version: string };
  limit: number;
  search?: string;
  updatedSince?: Date;
  latestOnly?: boolean;
  /** Only this exact version. */
  version?: string;
  /** Deleted versions too (hidden by default). */
  includeDeleted?: boolean;
}

export interface VersionsQuery {
  /** Deleted versions too (hidden by default). */
  includeDeleted?: boolean;
}

/** A time as Date.toISOString() writes it, which is how SQLite stores every time. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function iso(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  const text = String(v);
  return ISO_UTC.test(text) ? text : new Date(text).toISOString();
}

function isoOpt(v: unknown): string | undefined {
  return v === null || v === undefined ? undefined : iso(v);
}

/**
 * An entry's content digest: sha256 of `JSON.stringify([server, claims ?? null, status])`,
 * hashed from the server's JSON text the caller already has (the same bytes, no second copy).
 */
function digestOfJson(serverJson: string, claims: Claims | undefined, status: string): string {
  return createHash("sha256")
    .update("[")
    .update(serverJson)
    .update(`,${JSON.stringify(claims ?? null)},${JSON.stringify(status)}]`)
    .digest("base64url");
}

/** An entry's stored columns: name, version, server JSON, search text, claims, status, digest. */
function rowValues(
  e: ServerEntry,
): [string, string, string, string, string | null, string, string] {
  const json = JSON.stringify(e.server);
  const claims = e.claims === undefined ? null : JSON.stringify(e.claims);
  return [
    e.name,
    e.version,
    json,
    searchText(e.server),
    claims,
    e.status,
    digestOfJson(json, e.claims, e.status),
  ];
}

const STAGE_COLUMNS = 7;

/**
 * Entries turned into staging rows as they come: each entry's columns as the text the INSERT
 * binds (name, version, server JSON, search text, claims JSON, status, digest). A sync keeps
 * these compact strings rather than the parsed documents while a batch waits to be written.
 */
export class StageRows {
  /** STAGE_COLUMNS values per row. */
  readonly columns: (string | null)[] = [];

  get count(): number {
    return this.columns.length / STAGE_COLUMNS;
  }

  add(e: ServerEntry): void {
    this.columns.push(...rowValues(e));
  }
}

/**
 * Rows per staging INSERT. Each row is 7 bind parameters passed as they are (no array literal
 * to build and escape on either side), so one statement's message stays around a megabyte.
 */
export const STAGE_ROWS = 500;

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

/** Compares versions: semver when both are valid, else plain text order. */
export function compareVersions(a: string, b: string): number {
  const va = semver.valid(a);
  const vb = semver.valid(b);
  if (va !== null && vb !== null) return semver.compare(va, vb);
  if (va !== null) return 1;
  if (vb !== null) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The latest of some versions: the highest semver, pre-releases only when nothing else. */
export function latestVersion(versions: string[]): string | undefined {
  const stable = versions.filter((v) => semver.valid(v) !== null && semver.prerelease(v) === null);
  const pool = stable.length > 0 ? stable : versions;
  let best: string | undefined;
  for (const v of pool) if (best === undefined || compareVersions(v, best) > 0) best = v;
  return best;
}

const ENTRY_COLUMNS = `e.source, e.name, e.version, e.server, e.claims, e.status,
  e.status_message, e.status_changed_at, e.is_latest, e.published_at, e.updated_at`;

function toEntry(r: Record<string, unknown>): StoredEntry {
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

/** Serializes changes to which sources exist and which registries use them. */
const TOPOLOGY_LOCK = "mcpfleet-topology";

/** Status rows with a live entry count (publishes do not touch the status row). */
const STATUS_SELECT = `SELECT st.source, st.phase, st.last_attempt, st.last_success, st.message,
  st.content_hash, st.api_path, (SELECT count(*) FROM entries e WHERE e.source = st.source) AS entry_count
  FROM source_status st`;

export class Store {
  private generationValue = 0;

  /** The SQL fragments of the store's engine. */
  private readonly sql: Dialect;

  constructor(readonly db: Db) {
    this.sql = db.dialect;
  }

  get driver(): string {
    return this.db.driver;
  }

  /** Last generation seen by this process (refreshed by writes and refreshGeneration). */
  get generation(): number {
    return this.generationValue;
  }

  async init(): Promise<void> {
    await this.db.migrate();
    await this.refreshGeneration();
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  async refreshGeneration(): Promise<number> {
    const r = await this.db.query<{ generation: string | number }>(this.sql.readGeneration);
    const g = Number(r.rows[0]?.generation ?? 0);
    this.generationValue = Math.max(this.generationValue, g);
    return g;
  }

  /**
   * A write transaction. After it commits, the generation (a sequence: no row lock that would
   * serialize writers) moves on, so readers here and on other replicas drop cached answers;
   * it moves only after the commit, so a reader never caches pre-commit data under it.
   */
  async write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const result = await this.db.transaction(fn);
    const r = await this.db
      .query<{ generation: string | number }>(this.sql.nextGeneration)
      .catch(() => undefined);
    this.generationValue = Math.max(this.generationValue, Number(r?.rows[0]?.generation ?? 0));
    return result;
  }

  async ping(): Promise<void> {
    await this.db.query(`SELECT 1`);
  }

  // ---- sources -------------------------------------------------------------------------

  async listSources(): Promise<SourceRecord[]> {
    const r = await this.db.query(`SELECT * FROM sources ORDER BY name`);
    return r.rows.map(toSource);
  }

  async getSource(name: string): Promise<SourceRecord | undefined> {
    const r = await this.db.query(`SELECT * FROM sources WHERE name = $1`, [name]);
    return r.rows[0] === undefined ? undefined : toSource(r.rows[0]);
  }

  /**
   * Creates or replaces a source. `guard` sees the sources as they are inside the transaction,
   * under the topology lock, and throws to refuse (rules that a concurrent write must not slip
   * past: at most one managed source, config-defined sources read-only).
   */
  async putSource(
    name: string,
    kind: string,
    config: Record<string, unknown>,
    origin: Origin,
    guard?: (existing: SourceRecord | undefined, all: SourceRecord[]) => void,
  ): Promise<{ created: boolean }> {
    return this.write(async (tx) => {
      await this.sql.lock(tx, TOPOLOGY_LOCK);
      if (guard !== undefined) {
        const all = (await tx.query(`SELECT * FROM sources ORDER BY name`)).rows.map(toSource);
        guard(
          all.find((s) => s.name === name),
          all,
        );
      }
      const existed = await tx.query(`SELECT 1 FROM sources WHERE name = $1`, [name]);
      const json = this.sql.cast("$3", "jsonb");
      await tx.query(
        `INSERT INTO sources (name, kind, config, origin) VALUES ($1, $2, ${json}, $4)
         ON CONFLICT (name) DO UPDATE SET kind = $2, config = ${json}, origin = $4,
           updated_at = now()`,
        [name, kind, JSON.stringify(config), origin],
      );
      await tx.query(
        `INSERT INTO source_status (source, phase) VALUES ($1, $2)
         ON CONFLICT (source) DO NOTHING`,
        [name, kind === "managed" ? "Ready" : "Pending"],
      );
      return { created: existed.rows.length === 0 };
    });
  }

  /** Deletes a source with its entries and status; refuses while a registry uses it. */
  async deleteSource(name: string): Promise<boolean> {
    return this.write(async (tx) => {
      await this.sql.lock(tx, TOPOLOGY_LOCK);
      const users = await tx.query<{ name: string }>(
        `SELECT name FROM registries WHERE ${this.sql.listHas("sources", "$1")} ORDER BY name`,
        [name],
      );
      if (users.rows.length > 0) {
        throw new McpfleetError(
          "ERR_SOURCE_IN_USE",
          `source "${name}" is used by registr${users.rows.length > 1 ? "ies" : "y"} ` +
            users.rows.map((u) => `"${u.name}"`).join(", "),
        );
      }
      const r = await tx.query(`DELETE FROM sources WHERE name = $1 RETURNING name`, [name]);
      await tx.query(`DELETE FROM entries WHERE source = $1`, [name]);
      await tx.query(`DELETE FROM source_status WHERE source = $1`, [name]);
      return r.rows.length > 0;
    });
  }

  // ---- registries ----------------------------------------------------------------------

  async listRegistries(): Promise<RegistryRecord[]> {
    const r = await this.db.query(`SELECT * FROM registries ORDER BY name`);
    return r.rows.map(toRegistry);
  }

  async getRegistry(name: string): Promise<RegistryRecord | undefined> {
    const r = await this.db.query(`SELECT * FROM registries WHERE name = $1`, [name]);
    return r.rows[0] === undefined ? undefined : toRegistry(r.rows[0]);
  }

  /** Creates or replaces a registry; `guard` as putSource's, inside the transaction. */
  async putRegistry(
    name: string,
    sources: string[],
    claims: Claims | undefined,
    origin: Origin,
    guard?: (existing: RegistryRecord | undefined) => void,
  ): Promise<{ created: boolean }> {
    return this.write(async (tx) => {
      await this.sql.lock(tx, TOPOLOGY_LOCK);
      if (guard !== undefined) {
        const r = await tx.query(`SELECT * FROM registries WHERE name = $1`, [name]);
        guard(r.rows[0] === undefined ? undefined : toRegistry(r.rows[0]));
      }
      const known = await tx.query<{ name: string }>(
        `SELECT name FROM sources WHERE ${this.sql.inList("name", "$1")}`,
        [sources],
      );
      const missing = sources.filter((s) => !known.rows.some((k) => k.name === s));
      if (missing.length > 0) {
        throw new McpfleetError(
          "ERR_INVALID_RESOURCE",
          `registry "${name}" names unknown source(s): ${missing.join(", ")}`,
        );
      }
      const existed = await tx.query(`SELECT 1 FROM registries WHERE name = $1`, [name]);
      await this.upsertRegistry(tx, name, sources, claims, origin);
      return { created: existed.rows.length === 0 };
    });
  }

  private async upsertRegistry(
    tx: Queryable,
    name: string,
    sources: string[],
    claims: Claims | undefined,
    origin: Origin,
  ): Promise<void> {
    const list = this.sql.cast("$2", "text[]");
    const json = this.sql.cast("$3", "jsonb");
    await tx.query(
      `INSERT INTO registries (name, sources, claims, origin) VALUES ($1, ${list}, ${json}, $4)
       ON CONFLICT (name) DO UPDATE SET sources = ${list}, claims = ${json}, origin = $4,
         updated_at = now()`,
      [name, sources, claims === undefined ? null : JSON.stringify(claims), origin],
    );
  }

  async deleteRegistry(name: string): Promise<boolean> {
    return this.write(async (tx) => {
      const r = await tx.query(`DELETE FROM registries WHERE name = $1 RETURNING name`, [name]);
      return r.rows.length > 0;
    });
  }

  /**
   * Makes the config file's sources and registries the `config`-origin resources: upserts
   * them and removes config-origin resources the file no longer has. API-created resources
   * are kept.
   */
  async applyConfigResources(
    sources: { name: string; kind: string; config: Record<string, unknown> }[],
    registries: { name: string; sources: string[]; claims?: Claims }[],
  ): Promise<void> {
    await this.write(async (tx) => {
      await this.sql.lock(tx, TOPOLOGY_LOCK);
      const regNames = registries.map((r) => r.name);
      const json = this.sql.cast("$3", "jsonb");
      await tx.query(
        `DELETE FROM registries WHERE origin = 'config' AND NOT (${this.sql.inList("name", "$1")})`,
        [regNames],
      );
      for (const s of sources) {
        await tx.query(
          `INSERT INTO sources (name, kind, config, origin) VALUES ($1, $2, ${json}, 'config')
           ON CONFLICT (name) DO UPDATE SET kind = $2, config = ${json}, origin = 'config',
             updated_at = CASE WHEN sources.config = ${json} THEN sources.updated_at ELSE now() END`,
          [s.name, s.kind, JSON.stringify(s.config)],
        );
        await tx.query(
          `INSERT INTO source_status (source, phase) VALUES ($1, $2)
           ON CONFLICT (source) DO NOTHING`,
          [s.name, s.kind === "managed" ? "Ready" : "Pending"],
        );
      }
      const srcNames = sources.map((s) => s.name);
      const gone = await tx.query<{ name: string }>(
        `SELECT name FROM sources WHERE origin = 'config' AND NOT (${this.sql.inList("name", "$1")})`,
        [srcNames],
      );
      for (const g of gone.rows) {
        await tx.query(`DELETE FROM entries WHERE source = $1`, [g.name]);
        await tx.query(`DELETE FROM source_status WHERE source = $1`, [g.name]);
        await tx.query(`DELETE FROM sources WHERE name = $1`, [g.name]);
      }
      for (const r of registries) {
        await this.upsertRegistry(tx, r.name, r.sources, r.claims, "config");
      }
    });
  }

  // ---- sync status ---------------------------------------------------------------------

  async getStatus(source: string): Promise<SyncStatus | undefined> {
    const r = await this.db.query(`${STATUS_SELECT} WHERE st.source = $1`, [source]);
    return r.rows[0] === undefined ? undefined : toStatus(r.rows[0]);
  }

  async listStatus(): Promise<Map<string, SyncStatus>> {
    const r = await this.db.query(STATUS_SELECT);
    return new Map(r.rows.map((row) => [String(row.source), toStatus(row)]));
  }

  async markSyncing(source: string): Promise<void> {
    await this.db.query(
      `INSERT INTO source_status (source, phase, last_attempt) VALUES ($1, 'Syncing', now())
       ON CONFLICT (source) DO UPDATE SET phase = 'Syncing', last_attempt = now()`,
      [source],
    );
  }

  /** Records the path an api source's endpoint answered on; its next sync asks that one first. */
  async recordApiPath(source: string, path: string): Promise<void> {
    await this.db.query(`UPDATE source_status SET api_path = $2 WHERE source = $1`, [source, path]);
  }

  /** Records a sync that found the data unchanged: nothing else is written. */
  async markUnchanged(source: string): Promise<void> {
    await this.db.query(
      `UPDATE source_status SET phase = 'Ready', last_success = now(),
         message = 'unchanged' WHERE source = $1`,
      [source],
    );
  }

  /** Records a failed sync; the source's entries (the last good data) stay as they were. */
  async markFailed(source: string, message: string): Promise<void> {
    // A message may quote upstream data; the store cannot hold a NUL, and a refused status
    // write would leave the source Syncing for ever.
    message = printable(message).slice(0, 2000);
    await this.db.query(
      `INSERT INTO source_status (source, phase, last_attempt, message)
       VALUES ($1, 'Failed', now(), $2)
       ON CONFLICT (source) DO UPDATE SET phase = 'Failed', message = $2`,
      [source, message],
    );
  }

  // ---- synced entries: staged, then swapped in one transaction ---------------------------

  beginStaging(): string {
    return randomUUID();
  }

  /** Stages entries of a sync (see stageRows). */
  async stageBatch(syncId: string, entries: readonly ServerEntry[]): Promise<void> {
    const rows = new StageRows();
    for (const e of entries) rows.add(e);
    await this.stageRows(syncId, rows);
  }

  /**
   * Writes staged rows of a sync, STAGE_ROWS rows per statement. A name and version staged
   * twice keeps its first row.
   */
  async stageRows(syncId: string, rows: StageRows): Promise<void> {
    const cols = rows.columns;
    const step = STAGE_ROWS * STAGE_COLUMNS;
    for (let i = 0; i < cols.length; i += step) {
      const chunk = cols.length <= step ? cols : cols.slice(i, i + step);
      await this.db.query(stageSql(this.sql, chunk.length / STAGE_COLUMNS), [syncId, ...chunk]);
    }
  }

  async discardStaging(syncId: string): Promise<void> {
    await this.db.query(`DELETE FROM entries_staging WHERE sync_id = $1`, [syncId]);
    await this.sql.afterBulkWrite(this.db, false);
  }

  /**
   * Replaces the source's entries with the staged ones in one transaction. Entries whose
   * content is unchanged keep their updatedAt; every entry keeps its first publishedAt.
   */
  async commitStaging(
    syncId: string,
    source: string,
    contentHash: string,
    message?: string,
  ): Promise<number> {
    // Latest per name, semver-aware. A name staged with one version (the common case) is its
    // own latest, which the swap below decides in SQL; only names with several versions are
    // read here, 2,000 names at a time in name order, so memory stays bounded however many
    // entries the source has, and only their latest rows are updated.
    let lastName = "";
    for (;;) {
      const pairs = await this.db.query<{ name: string; versions: string[] }>(
        `SELECT name, ${this.sql.listAgg("version")} AS versions FROM entries_staging
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
      await this.db.query(
        `UPDATE entries_staging AS st SET is_latest = true
         FROM ${this.sql.zip("$2", "$3")}
         WHERE st.sync_id = $1 AND st.name = l.n AND st.version = l.v`,
        [syncId, names, versions],
      );
      lastName = pairs.rows[pairs.rows.length - 1]?.name ?? lastName;
    }
    const n = await this.write(async (tx) => {
      await this.sql.lock(tx, `mcpfleet-source:${source}`);
      const exists = await tx.query(`SELECT 1 FROM sources WHERE name = $1`, [source]);
      if (exists.rows.length === 0) {
        throw new McpfleetError("ERR_SOURCE_NOT_FOUND", `source "${source}" was deleted`);
      }
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
      const n = Number(ins.rows[0]?.n ?? 0);
      await tx.query(
        `INSERT INTO source_status (source, phase, last_attempt, last_success, message,
           entry_count, content_hash)
         VALUES ($1, 'Ready', now(), now(), $4, $2, $3)
         ON CONFLICT (source) DO UPDATE SET phase = 'Ready', last_success = now(),
           message = $4, entry_count = $2, content_hash = $3`,
        [source, n, contentHash, message === undefined ? null : printable(message).slice(0, 2000)],
      );
      return n;
    });
    await this.sql.afterBulkWrite(this.db, true);
    return n;
  }

  // ---- managed entries -------------------------------------------------------------------

  /** Publishes one version into a managed source. 409 when the version exists. */
  async publish(source: string, entry: ServerEntry): Promise<StoredEntry> {
    return this.write(async (tx) => {
      // One name at a time (across replicas); the hot rows (status count, generation) are
      // touched last so their row locks are held only until the commit.
      // The lock is its own statement: a statement's snapshot predates a lock it waits for.
      await this.sql.lock(tx, `mcpfleet-entry:${source}:${entry.name}`);
      const prev = await tx.query<{ version: string; claims: unknown; status: string }>(
        `SELECT version, claims, status FROM entries WHERE source = $1 AND name = $2
         ORDER BY published_at, version`,
        [source, entry.name],
      );
      const rows = prev.rows;
      if (rows.some((p) => p.version === entry.version)) {
        throw new McpfleetError(
          "ERR_VERSION_EXISTS",
          `${entry.name} version ${entry.version} is already published; versions are immutable`,
        );
      }
      const first = rows[0];
      const firstClaims =
        first?.claims === null || first === undefined
          ? undefined
          : decodeJson<Claims>(first.claims);
      if (first !== undefined && !sameClaims(firstClaims, entry.claims)) {
        throw new McpfleetError(
          "ERR_CLAIMS_MISMATCH",
          `every version of ${entry.name} must carry the claims of its first version`,
        );
      }
      const latest = latestVersion(
        liveVersions([...rows, { version: entry.version, status: entry.status }]),
      );
      const isLatest = latest === entry.version;
      const r = await tx.query(
        `INSERT INTO entries (source, name, version, server, search, claims, status, digest,
           is_latest)
         VALUES ($1, $2, $3, ${this.sql.cast("$4", "json")}, $5, ${this.sql.cast("$6", "jsonb")},
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
  async deleteVersion(source: string, name: string, version: string): Promise<boolean> {
    return this.write(async (tx) => {
      await this.sql.lock(tx, `mcpfleet-entry:${source}:${name}`);
      const r = await tx.query(
        `DELETE FROM entries WHERE source = $1 AND name = $2 AND version = $3 RETURNING 1`,
        [source, name, version],
      );
      if (r.rows.length === 0) return false;
      await recomputeLatest(tx, source, name);
      return true;
    });
  }

  /**
   * Sets the lifecycle status of one version of a name in a source, or of all its versions
   * (`version` "all"), with an optional message (cleared when absent). A version whose status
   * and message change gets statusChangedAt and updatedAt now; the latest version is
   * recomputed, a deleted one never being latest. Returns the versions named, after the change,
   * highest first: empty when there are none.
   */
  async setVersionStatus(
    source: string,
    name: string,
    version: string,
    status: EntryStatus,
    message?: string,
  ): Promise<StoredEntry[]> {
    const msg = message === undefined ? null : printable(message).slice(0, 2000);
    return this.write(async (tx) => {
      await this.sql.lock(tx, `mcpfleet-entry:${source}:${name}`);
      const all = version === "all";
      const rows = await tx.query<{
        version: string;
        server: unknown;
        claims: unknown;
        status: string;
        status_message: string | null;
      }>(
        `SELECT version, server, claims, status, status_message FROM entries
         WHERE source = $1 AND name = $2${all ? "" : " AND version = $3"}`,
        all ? [source, name] : [source, name, version],
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
      const out = await tx.query(
        `SELECT ${ENTRY_COLUMNS} FROM entries e
         WHERE e.source = $1 AND e.name = $2${all ? "" : " AND e.version = $3"}`,
        all ? [source, name] : [source, name, version],
      );
      return out.rows.map(toEntry).sort((a, b) => compareVersions(b.version, a.version));
    });
  }

  /** Gives every version of a name in a source these claims; false when it has none. */
  async setEntryClaims(source: string, name: string, claims: Claims | undefined): Promise<boolean> {
    return this.write(async (tx) => {
      await this.sql.lock(tx, `mcpfleet-entry:${source}:${name}`);
      const rows = await tx.query<{ version: string; server: unknown; status: string }>(
        `SELECT version, server, status FROM entries WHERE source = $1 AND name = $2`,
        [source, name],
      );
      const json = this.sql.cast("$4", "jsonb");
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

  // ---- reads ---------------------------------------------------------------------------

  /** One page of a registry view, ordered by (name, version). */
  async listEntries(sources: string[], q: ListQuery): Promise<StoredEntry[]> {
    const params: unknown[] = [sources];
    const where: string[] = [this.sql.view(sources.length)];
    if (q.after !== undefined) {
      params.push(q.after.name, q.after.version);
      where.push(`(e.name, e.version) > ($${params.length - 1}, $${params.length})`);
    }
    if (q.search !== undefined && q.search !== "") {
      where.push(this.sql.search(q.search.toLowerCase(), params));
    }
    if (q.updatedSince !== undefined) {
      params.push(q.updatedSince.toISOString());
      where.push(`e.updated_at > ${this.sql.cast(`$${params.length}`, "timestamptz")}`);
    }
    if (q.latestOnly === true) where.push(`e.is_latest`);
    if (q.version !== undefined) {
      params.push(q.version);
      where.push(`e.version = $${params.length}`);
    }
    if (q.includeDeleted !== true) where.push(`e.status <> 'deleted'`);
    params.push(q.limit);
    const r = await this.db.query(
      `SELECT ${ENTRY_COLUMNS} FROM entries e WHERE ${where.join(" AND ")}
       ORDER BY e.name, e.version LIMIT $${params.length}`,
      params,
    );
    return r.rows.map(toEntry);
  }

  /**
   * Every version of a name in a registry view (from the first source that has it), highest
   * semver first.
   */
  async listVersions(
    sources: string[],
    name: string,
    q: VersionsQuery = {},
  ): Promise<StoredEntry[]> {
    const live = q.includeDeleted === true ? "" : ` AND e.status <> 'deleted'`;
    const r = await this.db.query(
      `SELECT ${ENTRY_COLUMNS} FROM entries e
       WHERE e.name = $2 AND ${this.sql.view(sources.length)}${live}`,
      [sources, name],
    );
    return r.rows.map(toEntry).sort((a, b) => compareVersions(b.version, a.version));
  }

  async countEntries(source: string): Promise<number> {
    const r = await this.db.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM entries WHERE source = $1`,
      [source],
    );
    return Number(r.rows[0]?.n ?? 0);
  }
}

function sameClaims(a: Claims | undefined, b: Claims | undefined): boolean {
  const norm = (c: Claims | undefined): string =>
    JSON.stringify(
      Object.entries(c ?? {})
        .map(([k, v]) => [k, Array.isArray(v) ? [...v].sort() : v])
        .sort(([x], [y]) => String(x).localeCompare(String(y))),
    );
  return norm(a) === norm(b);
}

/** The versions that may be latest: every one not deleted. */
function liveVersions(rows: readonly { version: string; status: string }[]): string[] {
  return rows.filter((r) => r.status !== "deleted").map((r) => r.version);
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

function toSource(r: Record<string, unknown>): SourceRecord {
  return {
    name: String(r.name),
    kind: String(r.kind),
    config: decodeJson<Record<string, unknown>>(r.config),
    origin: r.origin as Origin,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

function toRegistry(r: Record<string, unknown>): RegistryRecord {
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

function toStatus(r: Record<string, unknown>): SyncStatus {
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

// The registry store: sources, registries, per-source sync status and entries keyed by
// (source, name, version). All writes go through transactions that also bump a generation
// counter, which the HTTP layer uses to know when cached responses are stale. Each kind of
// record has its own module; this class is the one API over them.
import { randomUUID } from "node:crypto";
import type { Claims } from "../config/types.js";
import type { ServerEntry } from "../formats/model.js";
import type { StoreAccess } from "./access.js";
import { applyConfigResources } from "./config-resources.js";
import type { Db, Queryable } from "./db.js";
import type { Dialect } from "./dialect.js";
import * as entries from "./entries.js";
import { StageRows } from "./entry-rows.js";
import * as managed from "./managed-entries.js";
import type {
  ListQuery,
  RegistryRecord,
  SourceRecord,
  StoredEntry,
  SyncStatus,
  VersionsQuery,
} from "./records.js";
import * as registries from "./registries.js";
import * as sources from "./sources.js";
import * as staging from "./staging.js";
import * as status from "./sync-status.js";
import { VersionBatch } from "./version-batch.js";

export { StageRows, STAGE_ROWS } from "./entry-rows.js";
export * from "./records.js";
export { serverJsonOf } from "./rows.js";
export { compareVersions, latestVersion } from "./versions.js";

/**
 * The parameters of a store module's function after the store itself: the facade's methods take
 * them as the modules declare them, so a signature is written once.
 */
type StoreArgs<F> = F extends (s: StoreAccess, ...rest: infer R) => unknown ? R : never;

export class Store implements StoreAccess {
  private generationValue = 0;

  /** The SQL fragments of the store's engine. */
  readonly sql: Dialect;

  /** Concurrent version lookups in one statement (PostgreSQL: see version-batch.ts). */
  private readonly versionBatch: VersionBatch | undefined;

  constructor(readonly db: Db) {
    this.sql = db.dialect;
    this.versionBatch = db.driver === "postgres" ? new VersionBatch(this) : undefined;
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

  listSources(): Promise<SourceRecord[]> {
    return sources.listSources(this);
  }

  getSource(name: string): Promise<SourceRecord | undefined> {
    return sources.getSource(this, name);
  }

  /**
   * Creates or replaces a source. `guard` sees the sources as they are inside the transaction,
   * under the topology lock, and throws to refuse (rules that a concurrent write must not slip
   * past: at most one managed source, config-defined sources read-only).
   */
  putSource(...args: StoreArgs<typeof sources.putSource>): Promise<{ created: boolean }> {
    return sources.putSource(this, ...args);
  }

  /** Deletes a source with its entries and status; refuses while a registry uses it. */
  deleteSource(name: string): Promise<boolean> {
    return sources.deleteSource(this, name);
  }

  // ---- registries ----------------------------------------------------------------------

  listRegistries(): Promise<RegistryRecord[]> {
    return registries.listRegistries(this);
  }

  getRegistry(name: string): Promise<RegistryRecord | undefined> {
    return registries.getRegistry(this, name);
  }

  /** Creates or replaces a registry; `guard` as putSource's, inside the transaction. */
  putRegistry(...args: StoreArgs<typeof registries.putRegistry>): Promise<{ created: boolean }> {
    return registries.putRegistry(this, ...args);
  }

  deleteRegistry(name: string): Promise<boolean> {
    return registries.deleteRegistry(this, name);
  }

  /**
   * Makes the config file's sources and registries the `config`-origin resources: upserts
   * them and removes config-origin resources the file no longer has. API-created resources
   * are kept.
   */
  applyConfigResources(...args: StoreArgs<typeof applyConfigResources>): Promise<void> {
    return applyConfigResources(this, ...args);
  }

  // ---- sync status ---------------------------------------------------------------------

  getStatus(source: string): Promise<SyncStatus | undefined> {
    return status.getStatus(this, source);
  }

  listStatus(): Promise<Map<string, SyncStatus>> {
    return status.listStatus(this);
  }

  markSyncing(source: string): Promise<void> {
    return status.markSyncing(this, source);
  }

  /** Records the path an api source's endpoint answered on; its next sync asks that one first. */
  recordApiPath(source: string, path: string): Promise<void> {
    return status.recordApiPath(this, source, path);
  }

  /** Records a sync that found the data unchanged: nothing else is written. */
  markUnchanged(source: string): Promise<void> {
    return status.markUnchanged(this, source);
  }

  /** Records a failed sync; the source's entries (the last good data) stay as they were. */
  markFailed(source: string, message: string): Promise<void> {
    return status.markFailed(this, source, message);
  }

  // ---- synced entries: staged, then swapped in one transaction ---------------------------

  beginStaging(): string {
    return randomUUID();
  }

  /** Stages entries of a sync (see stageRows). */
  async stageBatch(syncId: string, batch: readonly ServerEntry[]): Promise<void> {
    const rows = new StageRows();
    for (const e of batch) rows.add(e);
    await this.stageRows(syncId, rows);
  }

  /**
   * Writes staged rows of a sync, STAGE_ROWS rows per statement. A name and version staged
   * twice keeps its first row.
   */
  stageRows(syncId: string, rows: StageRows): Promise<void> {
    return staging.stageRows(this, syncId, rows);
  }

  discardStaging(syncId: string): Promise<void> {
    return staging.discardStaging(this, syncId);
  }

  /**
   * Replaces the source's entries with the staged ones in one transaction. Entries whose
   * content is unchanged keep their updatedAt; every entry keeps its first publishedAt.
   */
  commitStaging(...args: StoreArgs<typeof staging.commitStaging>): Promise<number> {
    return staging.commitStaging(this, ...args);
  }

  // ---- managed entries -------------------------------------------------------------------

  /** Publishes one version into a managed source. 409 when the version exists. */
  publish(source: string, entry: ServerEntry): Promise<StoredEntry> {
    return managed.publish(this, source, entry);
  }

  /** Deletes one version of a managed entry; false when it does not exist. */
  deleteVersion(source: string, name: string, version: string): Promise<boolean> {
    return managed.deleteVersion(this, source, name, version);
  }

  /**
   * Sets the lifecycle status of one version of a name in a source, or of all its versions
   * (`version` "all"), with an optional message (cleared when absent). A version whose status
   * and message change gets statusChangedAt and updatedAt now; the latest version is
   * recomputed, a deleted one never being latest. Returns the versions named, after the change,
   * highest first: empty when there are none.
   */
  setVersionStatus(...args: StoreArgs<typeof managed.setVersionStatus>): Promise<StoredEntry[]> {
    return managed.setVersionStatus(this, ...args);
  }

  /** Gives every version of a name in a source these claims; false when it has none. */
  setEntryClaims(source: string, name: string, claims: Claims | undefined): Promise<boolean> {
    return managed.setEntryClaims(this, source, name, claims);
  }

  // ---- reads ---------------------------------------------------------------------------

  /** One page of a registry view, ordered by (name, version). */
  listEntries(sourceNames: string[], q: ListQuery): Promise<StoredEntry[]> {
    return entries.listEntries(this, sourceNames, q);
  }

  /**
   * Every version of a name in a registry view (from the first source that has it), highest
   * semver first.
   */
  listVersions(sourceNames: string[], name: string, q: VersionsQuery = {}): Promise<StoredEntry[]> {
    return entries.listVersions(this, sourceNames, name, q);
  }

  /** One version of a name in a registry view, or its latest; see entries.getVersion. */
  getVersion(
    sourceNames: string[],
    name: string,
    version: string,
  ): Promise<StoredEntry | undefined> {
    if (this.versionBatch !== undefined && version !== "latest") {
      return this.versionBatch.get(sourceNames, name, version);
    }
    return entries.getVersion(this, sourceNames, name, version);
  }

  countEntries(source: string): Promise<number> {
    return entries.countEntries(this, source);
  }
}

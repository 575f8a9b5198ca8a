// What the store holds, as its callers see it: sources, registries, sync status and entries.
import type { Claims } from "../config/types.js";
import type { ServerJson } from "../formats/model.js";

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
  /** Sync attempts since the last success (0 once one succeeds), the one running included. */
  attemptCount?: number;
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

// One sync of one source: fetch, hash, write nothing when unchanged, else parse, validate,
// filter and replace the source's entries in one transaction. A failure keeps the last good
// data and records why.
import { createHash } from "node:crypto";
import { McpfleetError } from "../../errors.js";
import type { SourceConfig } from "../config/types.js";
import type { ServerEntry } from "../formats/model.js";
import { jsonLimitProblem } from "../formats/bounds.js";
import { makeFilter, noValidEntry, streamRegistryData } from "../formats/parse.js";
import { convertUpstream } from "../formats/upstream.js";
import { StageRows, type Store } from "../store/store.js";
import { checkLocation, type LocationPolicy } from "./location.js";
import type { KubeClient } from "../../infra/kube/client.js";
import {
  DEFAULT_SYNC_LIMITS,
  apiFormOf,
  fetchApiPages,
  fetchFile,
  fetchUrl,
  resolvePath,
  type SyncLimits,
} from "./fetch.js";

/** Entries a file, url or git sync stages at once (what is alive beside the text). */
const BATCH_SIZE = 100;

export interface SyncContext {
  baseDir: string;
  /** Cluster access for kubernetes sources (default: in-cluster or $KUBECONFIG). */
  kubeClient?: () => KubeClient;
  /** Where Git sources keep their clones. */
  cacheDir: string;
  signal?: AbortSignal;
  /** Page size used when paging another registry's API. */
  apiPageSize?: number;
  /** Bounds of one sync (DEFAULT_SYNC_LIMITS where not given). */
  limits?: Partial<SyncLimits>;
  /**
   * Set for a source created through the admin API: its location is checked again at every
   * sync (a symbolic link may have moved, a name may resolve elsewhere), and every URL it
   * fetches, redirects included, must be allowed, down to the addresses connected to.
   */
  guard?: LocationPolicy;
}

export type SyncOutcome =
  | { outcome: "updated"; entries: number; skipped: number }
  | { outcome: "unchanged" }
  | { outcome: "failed"; message: string };

/** What makes a sync's result differ besides the data: a filter or claims change re-applies. */
function settingsDigest(cfg: SourceConfig): string {
  return JSON.stringify([cfg.format ?? null, cfg.filter ?? null, cfg.claims ?? null]);
}

function skippedMessage(problems: string[], filtered: number): string | undefined {
  const parts: string[] = [];
  if (problems.length > 0) {
    parts.push(
      `skipped ${problems.length} invalid entr${problems.length === 1 ? "y" : "ies"}: ${problems
        .slice(0, 3)
        .join("; ")}${problems.length > 3 ? "; ..." : ""}`,
    );
  }
  if (filtered > 0) parts.push(`${filtered} filtered out`);
  return parts.length > 0 ? parts.join("; ") : undefined;
}

/** Makes the staged entries the source's, with a status message naming what was skipped. */
async function commitSync(
  store: Store,
  syncId: string,
  cfg: SourceConfig,
  contentHash: string,
  problems: string[],
  filtered: number,
): Promise<SyncOutcome> {
  const message = skippedMessage(problems, filtered);
  const entries = await store.commitStaging(syncId, cfg.name, contentHash, message);
  return { outcome: "updated", entries, skipped: problems.length };
}

async function fetchBytes(cfg: SourceConfig, ctx: SyncContext): Promise<Buffer> {
  const maxBytes = ctx.limits?.maxFileBytes ?? DEFAULT_SYNC_LIMITS.maxFileBytes;
  if (cfg.file !== undefined) return fetchFile(resolvePath(ctx.baseDir, cfg.file.path), maxBytes);
  if (cfg.url !== undefined) {
    return fetchUrl(cfg.url.url, {
      maxBytes,
      ...(cfg.url.timeout !== undefined ? { timeout: cfg.url.timeout } : {}),
      ...(cfg.url.headers !== undefined ? { headers: cfg.url.headers } : {}),
      ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}),
      ...(ctx.guard !== undefined ? { guard: ctx.guard } : {}),
    });
  }
  if (cfg.git !== undefined) {
    const guard =
      ctx.guard !== undefined
        ? {
            guard: ctx.guard,
            maxTransferBytes: ctx.limits?.maxTotalBytes ?? DEFAULT_SYNC_LIMITS.maxTotalBytes,
          }
        : {};
    // Loaded by the first git source: a server without one never holds the git client.
    const { fetchGitFile } = await import("./git.js");
    // The sync's deadline and cancellation reach the git process: a hung server ends the sync.
    const fetched = await fetchGitFile(cfg.git, {
      source: cfg.name,
      cacheDir: ctx.cacheDir,
      baseDir: ctx.baseDir,
      maxBytes,
      timeoutMs: ctx.limits?.timeoutMs ?? DEFAULT_SYNC_LIMITS.timeoutMs,
      ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}),
      ...guard,
    });
    return fetched.data;
  }
  throw new McpfleetError("ERR_SOURCE_NOT_SYNCED", `source ${cfg.name} is not a file source`);
}

/**
 * The source's text and digest, or undefined (marked unchanged) when its digest is the last
 * sync's. A function of its own so that the fetched bytes are garbage once it returns.
 */
async function changedText(
  store: Store,
  cfg: SourceConfig,
  ctx: SyncContext,
): Promise<{ text: string; hash: string } | undefined> {
  const bytes = await fetchBytes(cfg, ctx);
  const hash = createHash("sha256").update(bytes).update(settingsDigest(cfg)).digest("hex");
  const prev = await store.getStatus(cfg.name);
  if (prev?.contentHash === hash) {
    await store.markUnchanged(cfg.name);
    return undefined;
  }
  return { text: bytes.toString("utf8"), hash };
}

async function syncFileLike(
  store: Store,
  cfg: SourceConfig,
  ctx: SyncContext,
): Promise<SyncOutcome> {
  const changed = await changedText(store, cfg, ctx);
  if (changed === undefined) return { outcome: "unchanged" };
  const { text, hash } = changed;
  // The catalog is read one server at a time and staged in batches: only its text and one batch
  // are alive, however many servers it lists.
  const stream = streamRegistryData(text, cfg.format);
  const keep = makeFilter(cfg.filter);
  const problems: string[] = [];
  let read = 0;
  let filtered = 0;
  let batch: ServerEntry[] = [];
  const syncId = store.beginStaging();
  try {
    for (const item of stream.items) {
      if (typeof item === "string") {
        problems.push(item);
        continue;
      }
      read++;
      if (!keep(item)) {
        filtered++;
        continue;
      }
      if (cfg.claims !== undefined) item.claims = cfg.claims;
      batch.push(item);
      if (batch.length === BATCH_SIZE) {
        await store.stageBatch(syncId, batch);
        batch = [];
      }
    }
    if (read === 0 && problems.length > 0) throw noValidEntry(problems[0]!);
    if (batch.length > 0) await store.stageBatch(syncId, batch);
    return await commitSync(store, syncId, cfg, hash, problems, filtered);
  } catch (err) {
    await store.discardStaging(syncId).catch(() => undefined);
    throw err;
  }
}

/**
 * Entries an `api` sync gathers before writing them to the staging table. Each entry is turned
 * into its row text as soon as its page is read, so the parsed page is garbage at once; the next
 * pages are fetched while a batch is written, so at most two batches are alive.
 */
export const API_BATCH_SIZE = 100;

async function syncApi(store: Store, cfg: SourceConfig, ctx: SyncContext): Promise<SyncOutcome> {
  const endpoint = cfg.api?.endpoint ?? "";
  const keep = makeFilter(cfg.filter);
  const hash = createHash("sha256").update(settingsDigest(cfg));
  const syncId = store.beginStaging();
  const problems: string[] = [];
  let filtered = 0;
  let rows = new StageRows();
  // The batch being written while the next pages are fetched.
  let writing: Promise<void> | undefined;
  const write = async (): Promise<void> => {
    if (writing !== undefined) await writing;
    writing = store.stageRows(syncId, rows);
    // Observed by the next write() or the end of the sync; never left unhandled meanwhile.
    writing.catch(() => undefined);
    rows = new StageRows();
  };
  let recorded = (await store.getStatus(cfg.name))?.apiPath;
  const preferred = apiFormOf(recorded);
  try {
    for await (const page of fetchApiPages(endpoint, {
      ...(preferred !== undefined ? { preferred } : {}),
      ...(ctx.limits !== undefined ? { limits: ctx.limits } : {}),
      ...(ctx.guard !== undefined ? { guard: ctx.guard } : {}),
      ...(ctx.apiPageSize !== undefined ? { pageSize: ctx.apiPageSize } : {}),
      ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}),
    })) {
      const answered = `${page.form}/servers`;
      if (answered !== recorded) {
        await store.recordApiPath(cfg.name, answered);
        recorded = answered;
      }
      hash.update(page.bytes);
      const items = page.items;
      for (let i = 0; i < items.length; i++) {
        const e = convertUpstream(items[i]);
        // The item's parsed tree is garbage from here on (a collection mid-page keeps less).
        items[i] = undefined;
        if (typeof e === "string") {
          problems.push(e);
        } else if (keep(e)) {
          if (cfg.claims !== undefined) e.claims = cfg.claims;
          rows.add(e);
        } else {
          filtered++;
        }
      }
      if (rows.count >= API_BATCH_SIZE) await write();
    }
    if (rows.count > 0) await write();
    if (writing !== undefined) await writing;
    const digest = hash.digest("hex");
    const prev = await store.getStatus(cfg.name);
    if (prev?.contentHash === digest) {
      await store.discardStaging(syncId);
      await store.markUnchanged(cfg.name);
      return { outcome: "unchanged" };
    }
    return await commitSync(store, syncId, cfg, digest, problems, filtered);
  } catch (err) {
    // A write still in flight would otherwise land after the discard.
    await writing?.catch(() => undefined);
    await store.discardStaging(syncId).catch(() => undefined);
    throw err;
  }
}

async function syncKube(store: Store, cfg: SourceConfig, ctx: SyncContext): Promise<SyncOutcome> {
  // The Kubernetes client (some 45 MB once loaded) only for servers with a kubernetes source.
  const { defaultKubeClient, kubeNamespaces, listKubeEntries } = await import("./kubernetes.js");
  const kube = ctx.kubeClient?.() ?? defaultKubeClient();
  const listed = await listKubeEntries(kube, kubeNamespaces(kube, cfg.kubernetes?.namespaces));
  // Annotations are free text: an entry the store cannot keep is skipped like any invalid one.
  const problems = listed.problems;
  const entries = listed.entries.filter((e) => {
    const problem = jsonLimitProblem(e.server);
    if (problem !== undefined) problems.push(`${e.name}: ${problem}`);
    return problem === undefined;
  });
  const hash = createHash("sha256").update(JSON.stringify(entries)).digest("hex");
  const prev = await store.getStatus(cfg.name);
  if (prev?.contentHash === hash) {
    await store.markUnchanged(cfg.name);
    return { outcome: "unchanged" };
  }
  const syncId = store.beginStaging();
  try {
    await store.stageBatch(syncId, entries);
    return await commitSync(store, syncId, cfg, hash, problems, 0);
  } catch (err) {
    await store.discardStaging(syncId).catch(() => undefined);
    throw err;
  }
}

/** Runs one sync of a synced source and records the outcome in its status. */
export async function runSync(
  store: Store,
  cfg: SourceConfig,
  ctx: SyncContext,
): Promise<SyncOutcome> {
  // One deadline for the whole run, however many pages or retries it takes.
  const timeoutMs = ctx.limits?.timeoutMs ?? DEFAULT_SYNC_LIMITS.timeoutMs;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new Error(`the sync took longer than ${timeoutMs} ms`)),
    timeoutMs,
  );
  const signal =
    ctx.signal === undefined ? deadline.signal : AbortSignal.any([ctx.signal, deadline.signal]);
  const run = { ...ctx, signal };
  try {
    await store.markSyncing(cfg.name);
    if (ctx.guard !== undefined) await checkLocation(cfg, ctx.guard, ctx.baseDir);
    if (cfg.api !== undefined) return await syncApi(store, cfg, run);
    if (cfg.kubernetes !== undefined) return await syncKube(store, cfg, run);
    return await syncFileLike(store, cfg, run);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await store.markFailed(cfg.name, message).catch(() => undefined);
    return { outcome: "failed", message };
  } finally {
    clearTimeout(timer);
  }
}

// The running controller's side of the day-2 operations (operations.ts): it reads the suspend
// annotation at the start of every sync, watches the inventory's metadata for a new reconcile
// request and answers it with a sync at once, and records its status on the inventory after each
// sync, only when the status changed, one write at a time. The watch only wakes the reader: the
// annotations are read afresh each time, and every WATCHED_POLL_MS anyway, so a watch that
// misses an event costs a delay, never a request. Without a watch (refused, broken) the reader
// polls every pollMs.
import {
  type ControllerObject,
  METADATA_ONLY,
  inventoryRef,
  readRequests,
  recordStatus,
  recordedStatusOf,
} from "./operations.js";
import { InventoryStore, inventoryName } from "./inventory.js";
import type { Logger } from "./logger.js";
import type { ControllerStatus } from "./status.js";

export interface OperationRequestsOptions extends ControllerObject {
  status: ControllerStatus;
  log: Logger;
  /** How often the annotations are read while no watch is established (default 2s). */
  pollMs?: number;
}

/** How often the annotations are read while a watch is established: the watch wakes it sooner. */
export const WATCHED_POLL_MS = 5 * 60_000;
/** How long the server keeps one watch open before the controller opens the next. */
const WATCH_SECONDS = 50;
/** After a failed watch, the next is opened after this, doubled per failure up to 30 s. */
const WATCH_RETRY_MS = 500;

/** One sync on request; resolves false when this replica did not run it (not the leader). */
export type SyncNow = () => Promise<boolean>;

export class OperationRequests {
  private readonly opts: OperationRequestsOptions;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private wake: (() => void) | undefined;
  private polling: Promise<void> | undefined;
  private watching: Promise<void> | undefined;
  /** True while a watch of the inventory is open. */
  private watched = false;
  /** A change seen while the reader was busy: it reads again before waiting. */
  private changed = false;
  private readonly stopWatch = new AbortController();
  private stopped = false;
  /** Writes of the status, chained so that an older one never lands after a newer one. */
  private writing: Promise<void> = Promise.resolve();
  private lastRecorded: string | undefined;
  /** Message of the last failed read, so that a lasting failure is logged once. */
  private lastReadError: string | undefined;

  constructor(opts: OperationRequestsOptions) {
    this.opts = opts;
  }

  private noteSuspended(suspended: boolean): void {
    const { status, log } = this.opts;
    if (suspended === status.suspended) return;
    status.suspended = suspended;
    if (suspended) log.info({}, "suspended: syncs are skipped until mcpfleet resume");
    else log.info({}, "resumed: syncs run again");
  }

  private readFailed(err: unknown): void {
    const message = (err as Error).message;
    if (message === this.lastReadError) return;
    this.lastReadError = message;
    this.opts.log.warn({}, `cannot read the suspend and reconcile annotations: ${message}`);
  }

  /**
   * Asked at the start of every sync: read afresh, so a suspension set just before a push holds.
   * When the API cannot say, the last answer stands (the sync's own requests would fail anyway).
   */
  async suspended(): Promise<boolean> {
    try {
      const requests = await readRequests(this.opts);
      this.lastReadError = undefined;
      this.noteSuspended(requests?.suspended ?? false);
    } catch (err) {
      this.readFailed(err);
    }
    return this.opts.status.suspended;
  }

  /**
   * Records the status on the inventory when it differs from the one recorded last. When the
   * API server refuses it, the status is recorded again with its error message cut short: an
   * older status (a ready controller, the revision before) must not stay in place of a failure.
   */
  record(): Promise<void> {
    this.writing = this.writing.then(async () => {
      const { status, log } = this.opts;
      const json = JSON.stringify(status.toJSON());
      if (json === this.lastRecorded) return;
      try {
        await recordStatus(this.opts, json);
        this.lastRecorded = json;
        return;
      } catch (err) {
        log.error(
          {},
          `cannot record the status on the inventory (${Buffer.byteLength(json)} bytes): ${(err as Error).message}; recording it with the error message cut short`,
        );
      }
      try {
        await recordStatus(this.opts, JSON.stringify(status.shortJSON()));
        this.lastRecorded = json;
      } catch (err) {
        log.error(
          {},
          `cannot record the status on the inventory, even cut short: ${(err as Error).message}; the status it shows is out of date`,
        );
      }
    });
    return this.writing;
  }

  /**
   * The revision the inventory says is applied (by this process or an earlier one); undefined
   * when nothing has been applied. Throws when the inventory cannot be read.
   */
  async appliedRevision(): Promise<string | undefined> {
    const { client, namespace, fieldManager } = this.opts;
    const inventory = await new InventoryStore(client, {
      name: inventoryName(fieldManager),
      namespace,
      fieldManager,
    }).read();
    const revision = inventory?.revision;
    return revision !== undefined && revision !== "" ? revision : undefined;
  }

  /** Starts reading reconcile requests, each answered with `syncNow`. */
  start(syncNow: SyncNow): void {
    this.watching = this.watchInventory();
    this.polling = (async () => {
      await this.restore();
      while (!this.stopped) {
        this.changed = false;
        await this.poll(syncNow);
        if (this.stopped) break;
        if (this.changed) continue;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          const wait = this.watched ? WATCHED_POLL_MS : (this.opts.pollMs ?? 2000);
          this.timer = setTimeout(resolve, wait);
          this.timer.unref?.();
        });
        clearTimeout(this.timer);
      }
    })();
  }

  /**
   * Keeps a watch of the inventory open (one request per WATCH_SECONDS when nothing changes) and
   * wakes the reader on every change; after a failure it opens a new one with a growing delay.
   */
  private async watchInventory(): Promise<void> {
    const { client } = this.opts;
    const { metadata } = inventoryRef(this.opts);
    let version: string | undefined;
    let retryMs = WATCH_RETRY_MS;
    while (!this.stopped) {
      try {
        const path = await client.path("v1", "ConfigMap", metadata.namespace);
        version = await client.watch(
          path,
          {
            query: {
              fieldSelector: `metadata.name=${metadata.name}`,
              resourceVersion: version,
              timeoutSeconds: String(WATCH_SECONDS),
              allowWatchBookmarks: "true",
            },
            accept: METADATA_ONLY,
            signal: this.stopWatch.signal,
          },
          (event) => {
            const first = !this.watched;
            this.watched = true;
            if (first || event.type !== "BOOKMARK") this.changed = true;
            if (this.changed) this.wake?.();
          },
        );
        // The server ended the watch: the next one starts where it stopped.
        this.watched = version !== undefined;
        retryMs = WATCH_RETRY_MS;
      } catch {
        // Refused, too old a version (410) or cut: the reader polls meanwhile; watch anew soon.
        this.watched = false;
        version = undefined;
        this.wake?.();
        if (this.stopped) break;
        await new Promise((resolve) => setTimeout(resolve, retryMs).unref?.());
        retryMs = Math.min(retryMs * 2, 30_000);
      }
    }
  }

  /** A restarted controller knows which request it answered last, from what it recorded. */
  private async restore(): Promise<void> {
    try {
      const live = await this.opts.client.get(inventoryRef(this.opts));
      const recorded = live !== undefined ? recordedStatusOf(live) : undefined;
      const handled = recorded?.lastHandledReconcileAt;
      if (handled !== undefined && handled !== null) {
        this.opts.status.lastHandledReconcileAt ??= handled;
      }
    } catch (err) {
      this.readFailed(err);
    }
  }

  private async poll(syncNow: SyncNow): Promise<void> {
    let requests;
    try {
      requests = await readRequests(this.opts);
      this.lastReadError = undefined;
    } catch (err) {
      this.readFailed(err);
      return;
    }
    const { status, log } = this.opts;
    this.noteSuspended(requests?.suspended ?? false);
    const at = requests?.requestedAt;
    // A suspended controller leaves the request pending: resuming answers it.
    if (at === undefined || at === status.lastHandledReconcileAt || status.suspended) return;
    log.info({ requestedAt: at }, "reconcile requested: syncing now");
    if (!(await syncNow())) return;
    status.lastHandledReconcileAt = at;
    await this.record();
  }

  /** Stops polling; resolves once a request being answered has been. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopWatch.abort();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.wake?.();
    await this.polling;
    await this.watching;
    await this.writing;
  }
}

// The running controller's side of the day-2 operations (operations.ts): it reads the suspend
// annotation at the start of every sync, polls the inventory's metadata for a new reconcile
// request and answers it with a sync at once, and records its status on the inventory after each
// sync, only when the status changed, one write at a time.
import {
  type ControllerObject,
  inventoryRef,
  readRequests,
  recordStatus,
  recordedStatusOf,
} from "./operations.js";
import type { Logger } from "./reconciler.js";
import type { ControllerStatus } from "./status.js";

export interface OperationRequestsOptions extends ControllerObject {
  status: ControllerStatus;
  log: Logger;
  /** How often the annotations are read (default 2s). */
  pollMs?: number;
}

/** One sync on request; resolves false when this replica did not run it (not the leader). */
export type SyncNow = () => Promise<boolean>;

export class OperationRequests {
  private readonly opts: OperationRequestsOptions;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private wake: (() => void) | undefined;
  private polling: Promise<void> | undefined;
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

  /** Records the status on the inventory when it differs from the one recorded last. */
  record(): Promise<void> {
    this.writing = this.writing.then(async () => {
      const json = JSON.stringify(this.opts.status.toJSON());
      if (json === this.lastRecorded) return;
      try {
        await recordStatus(this.opts, json);
        this.lastRecorded = json;
      } catch (err) {
        this.opts.log.warn(
          {},
          `cannot record the status on the inventory: ${(err as Error).message}`,
        );
      }
    });
    return this.writing;
  }

  /** Starts polling for reconcile requests, each answered with `syncNow`. */
  start(syncNow: SyncNow): void {
    this.polling = (async () => {
      await this.restore();
      while (!this.stopped) {
        await this.poll(syncNow);
        if (this.stopped) break;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.timer = setTimeout(resolve, this.opts.pollMs ?? 2000);
          this.timer.unref?.();
        });
      }
    })();
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
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.wake?.();
    await this.polling;
    await this.writing;
  }
}

// Runs each synced source on its own timer (syncPolicy.interval with jitter). Sources never
// wait for each other: a slow or failing source delays only its own next run. A source
// without syncPolicy syncs once at start and when triggered.
import type { Logger } from "pino";
import { McpfleetError } from "../../errors.js";
import { parseDuration } from "../../duration.js";
import { isSynced, type SourceConfig } from "../config/types.js";
import type { Store } from "../store/store.js";
import type { LocationPolicy } from "./location.js";
import { runSync, type SyncContext, type SyncOutcome } from "./sync.js";

export interface SyncObserver {
  (source: string, outcome: SyncOutcome, durationMs: number): void;
}

interface Slot {
  cfg: SourceConfig;
  /** Created through the admin API: synced under the adminSources policy. */
  guarded: boolean;
  key: string;
  timer?: NodeJS.Timeout;
  running?: Promise<SyncOutcome>;
  abort?: AbortController;
  attempted: boolean;
  unwatch?: () => void;
  /** A change was seen while a sync ran: sync again when it ends. */
  again?: boolean;
}

export interface SchedulerOptions {
  store: Store;
  ctx: Omit<SyncContext, "signal">;
  log: Logger;
  observe?: SyncObserver;
  /** Fraction of the interval added or removed at random (default 0.1). */
  jitter?: number;
  /**
   * Delay before a source's first sync, in milliseconds (default none: the server is ready only
   * once every source has been tried, and intervals carry the jitter that spreads later syncs).
   */
  initialDelayMs?: number;
  /** What sources created through the admin API may read (config `adminSources`). */
  adminPolicy?: LocationPolicy;
}

export class SyncScheduler {
  private readonly slots = new Map<string, Slot>();
  private stopped = false;
  /** Called once every synced source has had its first attempt (see whenAllAttempted). */
  private readonly attemptWaiters: (() => void)[] = [];

  constructor(private readonly opts: SchedulerOptions) {}

  /** Aligns timers with the store's sources (new, changed and deleted ones). */
  async reconcile(): Promise<void> {
    if (this.stopped) return;
    const sources = await this.opts.store.listSources();
    const wanted = new Map<string, { cfg: SourceConfig; guarded: boolean }>();
    for (const s of sources) {
      const cfg = { ...(s.config as unknown as SourceConfig), name: s.name };
      if (isSynced(cfg) || cfg.kubernetes !== undefined) {
        wanted.set(s.name, { cfg, guarded: s.origin === "api" });
      }
    }
    const keyOf = (w: { cfg: SourceConfig; guarded: boolean }) =>
      JSON.stringify([w.cfg, w.guarded]);
    for (const [name, slot] of this.slots) {
      const w = wanted.get(name);
      if (w === undefined || keyOf(w) !== slot.key) {
        this.drop(name);
      }
    }
    for (const [name, w] of wanted) {
      if (this.slots.has(name)) continue;
      const cfg = w.cfg;
      const slot: Slot = { cfg, guarded: w.guarded, key: keyOf(w), attempted: false };
      this.slots.set(name, slot);
      this.schedule(slot, this.opts.initialDelayMs ?? 0);
      if (cfg.kubernetes !== undefined) {
        this.watch(name, slot, cfg.kubernetes.namespaces).catch((err: unknown) => {
          this.opts.log.warn({ source: name, err: (err as Error).message }, "cannot watch");
        });
      }
    }
  }

  /**
   * Changes in the cluster sync at once; the interval (default 5m) is a safety re-list. The
   * Kubernetes client (some 45 MB once loaded) is loaded only for a kubernetes source.
   */
  private async watch(name: string, slot: Slot, namespaces: string[] | undefined): Promise<void> {
    const { defaultKubeClient, kubeNamespaces, watchKube } = await import("./kubernetes.js");
    if (this.slots.get(name) !== slot) return; // dropped while the client loaded
    const kube = this.opts.ctx.kubeClient?.() ?? defaultKubeClient();
    slot.unwatch = watchKube(kube, kubeNamespaces(kube, namespaces), () => {
      if (this.slots.get(name) !== slot) return;
      if (slot.running !== undefined) slot.again = true;
      else void this.run(slot);
    });
  }

  private drop(name: string): void {
    const slot = this.slots.get(name);
    if (slot === undefined) return;
    slot.unwatch?.();
    if (slot.timer !== undefined) clearTimeout(slot.timer);
    slot.abort?.abort();
    this.slots.delete(name);
  }

  private intervalMs(cfg: SourceConfig): number | undefined {
    const iv = cfg.syncPolicy?.interval ?? (cfg.kubernetes !== undefined ? "5m" : undefined);
    if (iv === undefined) return undefined;
    const base = Math.max(parseDuration(iv), 1000);
    const j = this.opts.jitter ?? 0.1;
    return base * (1 + (Math.random() * 2 - 1) * j);
  }

  private schedule(slot: Slot, delayMs: number): void {
    if (this.stopped) return;
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      void this.run(slot).then(() => {
        const next = this.intervalMs(slot.cfg);
        if (next !== undefined && this.slots.get(slot.cfg.name) === slot) this.schedule(slot, next);
      });
    }, delayMs);
    slot.timer.unref();
  }

  private run(slot: Slot): Promise<SyncOutcome> {
    if (slot.running !== undefined) return slot.running;
    const abort = new AbortController();
    slot.abort = abort;
    const started = performance.now();
    const guard = slot.guarded ? this.opts.adminPolicy : undefined;
    const p = runSync(this.opts.store, slot.cfg, {
      ...this.opts.ctx,
      signal: abort.signal,
      ...(guard !== undefined ? { guard } : {}),
    })
      .then((outcome) => {
        const ms = performance.now() - started;
        slot.attempted = true;
        if (outcome.outcome === "failed") {
          this.opts.log.warn({ source: slot.cfg.name, err: outcome.message }, "sync failed");
        } else {
          this.opts.log.info({ source: slot.cfg.name, ...outcome, ms: Math.round(ms) }, "synced");
        }
        this.opts.observe?.(slot.cfg.name, outcome, ms);
        if (this.attemptWaiters.length > 0 && this.allAttempted()) {
          for (const wake of this.attemptWaiters.splice(0)) wake();
        }
        return outcome;
      })
      .finally(() => {
        slot.running = undefined;
        slot.abort = undefined;
        if (slot.again === true && !this.stopped && this.slots.get(slot.cfg.name) === slot) {
          slot.again = false;
          void this.run(slot);
        }
      });
    slot.running = p;
    return p;
  }

  /** Syncs a source now (joining a sync already running). */
  async trigger(name: string): Promise<SyncOutcome> {
    await this.reconcile();
    const slot = this.slots.get(name);
    if (slot === undefined) {
      throw new McpfleetError("ERR_SOURCE_NOT_SYNCED", `source "${name}" is not a synced source`);
    }
    return this.run(slot);
  }

  /** True when every synced source has completed its first sync attempt. */
  allAttempted(): boolean {
    for (const slot of this.slots.values()) if (!slot.attempted) return false;
    return true;
  }

  /** Settles once every synced source has completed its first sync attempt. */
  whenAllAttempted(): Promise<void> {
    if (this.allAttempted()) return Promise.resolve();
    return new Promise((resolve) => this.attemptWaiters.push(resolve));
  }

  pending(): string[] {
    return [...this.slots.values()].filter((s) => !s.attempted).map((s) => s.cfg.name);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const running: Promise<unknown>[] = [];
    for (const slot of this.slots.values()) {
      slot.unwatch?.();
      if (slot.timer !== undefined) clearTimeout(slot.timer);
      slot.abort?.abort();
      if (slot.running !== undefined) running.push(slot.running);
    }
    await Promise.allSettled(running);
    this.slots.clear();
  }
}

// When the controller syncs: every `--interval` (Go-style duration) or on a `--schedule` cron
// expression, each delay stretched by a random jitter so replicas and controllers spread out,
// plus `trigger()` for an immediate run (webhook). Runs never overlap: triggers during a run are
// coalesced into one run after it. `stop()` cancels what is pending and waits for the run in
// flight to finish.
import cron from "node-cron";
import { McpfleetError } from "../errors.js";
import { backoffDelay } from "./backoff.js";
import { parseDuration } from "../duration.js";

export type RunReason = "start" | "schedule" | "trigger";

export interface ScheduleOptions {
  /** Delay between runs (milliseconds); exclusive with `cron`. */
  intervalMs?: number;
  /** Cron expression (5 or 6 fields, node-cron syntax); exclusive with `intervalMs`. */
  cron?: string;
  /** Largest random delay added to each scheduled run (milliseconds). */
  jitterMs?: number;
  /** Run once as soon as started (default true). */
  runAtStart?: boolean;
  random?: () => number;
  /**
   * One run. Resolving with `{ retry: true }` (a failure that may pass, such as the Git server
   * being down) brings the next run forward: full-jitter exponential backoff from `retryBaseMs`,
   * never later than the regular schedule. A run that throws counts as such a failure too.
   */
  run: (reason: RunReason) => Promise<void | { retry: true }>;
  /** First retry bound after a failed run (default 5s; retries are at least 1s apart). */
  retryBaseMs?: number;
  /** A run that throws is reported here; the schedule carries on. */
  onError?: (err: unknown) => void;
}

/** Parses `--interval`: a Go-style duration of at least one second. */
export function parseInterval(text: string, flag = "--interval"): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    throw new McpfleetError("ERR_USAGE", `${flag}: ${(err as Error).message}`, { cause: err });
  }
  if (ms < 1000) throw new McpfleetError("ERR_USAGE", `${flag} must be at least 1s, not ${text}`);
  return ms;
}

/** Checks a `--schedule` cron expression. */
export function checkCron(expression: string): void {
  if (!cron.validate(expression)) {
    const detail = cron
      .validateDetailed(expression)
      .errors.map((e) => `${e.field}: ${e.message}`)
      .join("; ");
    throw new McpfleetError(
      "ERR_USAGE",
      `--schedule: "${expression}" is not a cron expression${detail !== "" ? ` (${detail})` : ""}`,
    );
  }
}

export class Scheduler {
  private readonly opts: ScheduleOptions;
  private readonly nextCron: (() => number) | undefined;
  private readonly destroyCron: (() => void) | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<void> | undefined;
  private pending: { reason: RunReason; waiters: (() => void)[] } | undefined;
  private stopped = false;
  /** Failed runs in a row (0 after a success). */
  private failures = 0;
  private started = false;
  /** Runs completed (successfully or not). */
  runs = 0;

  constructor(opts: ScheduleOptions) {
    if ((opts.intervalMs === undefined) === (opts.cron === undefined)) {
      throw new McpfleetError("ERR_USAGE", "give exactly one of --interval and --schedule");
    }
    this.opts = opts;
    if (opts.cron !== undefined) {
      checkCron(opts.cron);
      const task = cron.createTask(opts.cron, () => undefined);
      this.nextCron = () => {
        const next = task.getNextRuns(1)[0];
        return next === undefined ? 60_000 : Math.max(0, next.getTime() - Date.now());
      };
      this.destroyCron = () => void task.destroy();
    }
  }

  get running(): boolean {
    return this.inFlight !== undefined;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.opts.runAtStart ?? true) void this.trigger("start");
    else this.arm();
  }

  /** Milliseconds until the next scheduled run, jitter included. */
  private delay(): number {
    const base = this.nextCron !== undefined ? this.nextCron() : (this.opts.intervalMs ?? 0);
    const random = this.opts.random ?? Math.random;
    const regular = base + Math.floor(random() * (this.opts.jitterMs ?? 0));
    if (this.failures === 0) return regular;
    const retry = Math.max(
      1000,
      backoffDelay(this.failures - 1, {
        baseMs: this.opts.retryBaseMs ?? 5000,
        capMs: regular,
        random,
      }),
    );
    return Math.min(regular, retry);
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.trigger("schedule");
    }, this.delay());
    this.timer.unref?.();
  }

  /**
   * Asks for a run now. Resolves when a run that started after this call has finished. While a
   * run is in flight, every trigger is folded into a single next run.
   */
  trigger(reason: RunReason = "trigger"): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      if (this.inFlight !== undefined) {
        this.pending ??= { reason, waiters: [] };
        this.pending.waiters.push(resolve);
        return;
      }
      this.launch(reason, [resolve]);
    });
  }

  private launch(reason: RunReason, waiters: (() => void)[]): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const run = (async () => {
      try {
        const result = await this.opts.run(reason);
        this.failures = result?.retry === true ? this.failures + 1 : 0;
      } catch (err) {
        this.failures++;
        this.opts.onError?.(err);
      }
    })();
    this.inFlight = run.then(() => {
      this.runs++;
      this.inFlight = undefined;
      for (const w of waiters) w();
      const next = this.pending;
      this.pending = undefined;
      if (this.stopped) {
        for (const w of next?.waiters ?? []) w();
        return;
      }
      if (next !== undefined) this.launch(next.reason, next.waiters);
      else this.arm();
    });
  }

  /** Cancels pending runs and resolves once the run in flight (if any) has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.destroyCron?.();
    while (this.inFlight !== undefined) await this.inFlight;
  }
}

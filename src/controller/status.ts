// What the controller knows about its own progress, shared by the sync loop (which writes it) and
// the HTTP endpoints and metrics (which read it). One instance per controller.
import { Counter, Gauge, Histogram, Registry } from "../infra/metrics.js";
import { clipBytes } from "./error-summary.js";

/**
 * The most a recorded error message holds, in UTF-8 bytes: callers summarize long failures
 * (error-summary.ts); this bounds any other message, so the status always fits its ConfigMap.
 */
export const MAX_ERROR_MESSAGE_BYTES = 16_000;
/** The message kept when even the summarized status cannot be recorded. */
const SHORT_ERROR_MESSAGE_BYTES = 1000;

/** The steps of one sync, as a failure names where it happened (apply stages: revision-plan.ts). */
export type SyncStage =
  "fetch" | "checkout" | "validate" | "render" | "admission" | "apply" | "health" | "prune";

export interface SyncError {
  stage: SyncStage;
  code: string;
  message: string;
  revision?: string;
  at: string;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly lastApplied = new Gauge({
    name: "mcpfleet_controller_last_applied_revision",
    help: "Unix time the revision (label) was last applied or rendered successfully",
    labelNames: ["revision", "ref"],
    registers: [this.registry],
  });
  readonly lastAttempted = new Gauge({
    name: "mcpfleet_controller_last_attempted_revision",
    help: "Unix time the revision (label) was last attempted",
    labelNames: ["revision", "ref"],
    registers: [this.registry],
  });
  readonly applyDuration = new Histogram({
    name: "mcpfleet_controller_apply_duration_seconds",
    help: "Time to validate, synthesize and apply (or render) one revision",
    labelNames: ["target", "result"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  readonly objectsApplied = new Counter({
    name: "mcpfleet_controller_objects_applied_total",
    help: "Objects applied to the target (written manifests for a dir target)",
    labelNames: ["target"],
    registers: [this.registry],
  });
  readonly objectsPruned = new Counter({
    name: "mcpfleet_controller_objects_pruned_total",
    help: "Objects deleted because the repository no longer renders them",
    labelNames: ["target"],
    registers: [this.registry],
  });
  readonly failures = new Counter({
    name: "mcpfleet_controller_failures_total",
    help: "Failed syncs by stage and error code",
    labelNames: ["stage", "code"],
    registers: [this.registry],
  });
}

export class ControllerStatus {
  readonly metrics = new ControllerMetrics();
  ref: string;
  target: string;
  lastAppliedRevision: string | undefined;
  lastAppliedAt: string | undefined;
  lastAttemptedRevision: string | undefined;
  lastError: SyncError | undefined;
  /** Set once a revision has been applied or rendered: the controller is then ready. */
  ready = false;
  /** The inventory's suspend annotation as last read: syncs are skipped while it is set. */
  suspended = false;
  /** The last reconcile request (requestedAt annotation) answered with a sync. */
  lastHandledReconcileAt: string | undefined;

  constructor(ref: string, target: string) {
    this.ref = ref;
    this.target = target;
  }

  attempted(revision: string): void {
    this.lastAttemptedRevision = revision;
    this.metrics.lastAttempted.reset();
    this.metrics.lastAttempted.set({ revision, ref: this.ref }, Date.now() / 1000);
  }

  succeeded(revision: string, result: { seconds: number; applied: number; pruned: number }): void {
    this.lastAppliedRevision = revision;
    this.lastAppliedAt = new Date().toISOString();
    this.lastError = undefined;
    this.ready = true;
    const m = this.metrics;
    m.lastApplied.reset();
    m.lastApplied.set({ revision, ref: this.ref }, Date.now() / 1000);
    m.applyDuration.observe({ target: this.target, result: "success" }, result.seconds);
    m.objectsApplied.inc({ target: this.target }, result.applied);
    m.objectsPruned.inc({ target: this.target }, result.pruned);
  }

  /** A revision that needed no work (already applied) still counts as a success for readiness. */
  unchanged(revision: string): void {
    this.lastError = undefined;
    if (this.lastAppliedRevision === revision) this.ready = true;
  }

  failed(error: Omit<SyncError, "at">, seconds?: number): void {
    this.lastError = {
      ...error,
      message: clipBytes(error.message, MAX_ERROR_MESSAGE_BYTES),
      at: new Date().toISOString(),
    };
    this.metrics.failures.inc({ stage: error.stage, code: error.code });
    if (seconds !== undefined) {
      this.metrics.applyDuration.observe({ target: this.target, result: "failure" }, seconds);
    }
  }

  toJSON(): Record<string, unknown> {
    return {
      ref: this.ref,
      target: this.target,
      // As recorded for readers of the inventory: ready only while the last sync did not fail
      // (`ready` itself is the process's readiness, which an applied revision keeps).
      ready: this.ready && this.lastError === undefined,
      lastAppliedRevision: this.lastAppliedRevision ?? null,
      lastAppliedAt: this.lastAppliedAt ?? null,
      lastAttemptedRevision: this.lastAttemptedRevision ?? null,
      lastError: this.lastError ?? null,
      suspended: this.suspended,
      lastHandledReconcileAt: this.lastHandledReconcileAt ?? null,
    };
  }

  /** The same with the error message cut short: recorded when the full form is refused. */
  shortJSON(): Record<string, unknown> {
    const error = this.lastError;
    return {
      ...this.toJSON(),
      lastError:
        error === undefined
          ? null
          : { ...error, message: clipBytes(error.message, SHORT_ERROR_MESSAGE_BYTES) },
    };
  }
}

// One sync: resolve the watched ref, check the revision out, validate and synthesize it, and hand
// the objects to the target. A revision already applied is skipped (unless drift correction is
// due); a revision that failed validation is reported once and not retried until the ref moves.
// Every outcome lands in the controller status (endpoints, metrics) and the log; failures also
// become Warning Events when the target records them (the cluster target), each one once.
import { isMcpfleetError } from "../errors.js";
import type { SynthOptions } from "../synth/options.js";
import { type AdmissionCheck, AdmissionRefusedError, type Refusal } from "./admission.js";
import type { Applier, ApplyResult, NotReady } from "./applier.js";
import type { GitSource, Revision } from "../infra/git/source.js";
import { renderFiles } from "./pipeline.js";
import { admitPlan } from "./revision-plan.js";
import type { ControllerStatus, SyncStage } from "./status.js";
import { type Logger, silentLogger } from "./logger.js";
import {
  EVENT_MESSAGE_BYTES,
  EVENT_SUMMARY,
  STATUS_SUMMARY,
  type SummaryLimits,
  clip,
  clipBytes,
  countOf,
  summarizeLines,
} from "./error-summary.js";

export interface ReconcilerOptions {
  source: Pick<GitSource, "resolve" | "checkout">;
  applier: Applier;
  status: ControllerStatus;
  log?: Logger;
  namespace?: string;
  synth?: SynthOptions;
  /** Re-apply an unchanged revision when this long has passed since the last apply (ms). */
  driftIntervalMs?: number;
  /** Do everything but write to the target. */
  dryRun?: boolean;
  /**
   * Checks every planned object must pass (tenancy.ts), whatever the target: one refusal
   * refuses the revision before the target sees any of it.
   */
  admission?: readonly AdmissionCheck[];
  /** Asked at the start of each sync: true skips it (the controller is suspended). */
  suspended?: () => Promise<boolean>;
  /**
   * The revision the target holds from an earlier process (the inventory's), asked when a
   * revision fails before this process has applied one: what stays in place is named truly.
   */
  appliedRevision?: () => Promise<string | undefined>;
  now?: () => number;
}

export type SyncOutcome =
  | { kind: "applied"; revision: Revision; result: ApplyResult; warnings?: string[] }
  | { kind: "dry-run"; revision: Revision; result: ApplyResult; warnings?: string[] }
  | { kind: "unchanged"; revision: Revision }
  | { kind: "invalid"; revision: Revision; errors: string[] }
  | { kind: "suspended" }
  | { kind: "refused"; revision: Revision; refusals: readonly Refusal[] }
  | { kind: "not-ready"; revision: Revision; result: ApplyResult; notReady: NotReady[] }
  | { kind: "failed"; stage: SyncStage; code: string; message: string; revision?: Revision };

/** When a sync started, and the watched directory's tree it found. */
interface SyncTiming {
  started?: number;
  tree?: string;
  sameTree?: boolean;
}

/** How many of a revision's warnings its Event quotes. */
const EVENT_WARNINGS_SHOWN = 3;

export class Reconciler {
  private readonly opts: ReconcilerOptions;
  private readonly log: Logger;
  private lastAppliedAt = 0;
  private lastInvalid: string | undefined;
  private lastDryRun: string | undefined;
  /** Git tree of the watched path at the last applied revision. */
  private lastAppliedTree: string | undefined;

  constructor(opts: ReconcilerOptions) {
    this.opts = opts;
    this.log = opts.log ?? silentLogger;
  }

  /** Status of the applied objects between revisions; a failure is logged, never fatal. */
  private async refresh(revision: Revision): Promise<void> {
    if (this.opts.applier.refreshStatus === undefined) return;
    try {
      const written = await this.opts.applier.refreshStatus();
      if (written > 0) this.log.info({ revision: revision.commit, written }, "status refreshed");
    } catch (err) {
      this.log.warn(
        { revision: revision.commit },
        `status refresh failed: ${(err as Error).message}`,
      );
    }
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** A Warning Event through the target, unless this is a dry run; never fails the sync. */
  private async warn(key: string, reason: string, message: string): Promise<void> {
    const sink = this.opts.applier.warnings;
    if (sink === undefined || this.opts.dryRun === true) return;
    try {
      await sink.warning(key, reason, message);
    } catch (err) {
      this.log.warn({ reason }, `cannot record the event: ${(err as Error).message}`);
    }
  }

  /** The resources in place marked as not at `revision`, unless this is a dry run; never fails. */
  private async markNotApplied(revision: Revision, reason: string, message: string): Promise<void> {
    if (this.opts.applier.notApplied === undefined || this.opts.dryRun === true) return;
    try {
      await this.opts.applier.notApplied(reason, message);
    } catch (err) {
      this.log.warn(
        { revision: revision.commit, reason },
        `cannot mark the resources in place: ${(err as Error).message}`,
      );
    }
  }

  private succeeded(): void {
    this.opts.applier.warnings?.clearWarnings();
  }

  /** The "failed" outcome of an error at `stage`. */
  private failed(stage: SyncStage, err: unknown, revision?: Revision): SyncOutcome {
    const code = isMcpfleetError(err) ? err.code : "ERR_INTERNAL";
    const message = err instanceof Error ? err.message : String(err);
    return { kind: "failed", stage, code, message, ...(revision ? { revision } : {}) };
  }

  /**
   * What stays in place when a revision is not applied: the revision this process applied, or
   * else the one the target recorded (an earlier process's).
   */
  private async inPlace(): Promise<string> {
    const last = this.opts.status.lastAppliedRevision;
    if (last !== undefined) return `${last.slice(0, 12)} stays in place`;
    if (this.opts.appliedRevision === undefined) return "nothing has been applied yet";
    try {
      const recorded = await this.opts.appliedRevision();
      return recorded !== undefined
        ? `${recorded.slice(0, 12)} stays in place`
        : "nothing has been applied yet";
    } catch (err) {
      this.log.warn({}, `cannot read the applied revision: ${(err as Error).message}`);
      return "what was applied before stays in place";
    }
  }

  /**
   * "`revision` ... was not applied; `<last>` stays in place: N errors: ...", for the status and
   * for the Event, each summarized within its own limits.
   */
  private async notApplied(
    revision: Revision,
    verb: string,
    lines: readonly string[],
    noun: string,
  ): Promise<{ status: string; event: string }> {
    const head = `revision ${revision.commit.slice(0, 12)} ${verb} and was not applied; ${await this.inPlace()}`;
    const count = lines.length > 1 ? `${countOf(lines.length, noun)}: ` : "";
    const text = (limits: SummaryLimits) => `${head}: ${count}${summarizeLines(lines, limits)}`;
    return { status: text(STATUS_SUMMARY), event: text(EVENT_SUMMARY) };
  }

  /** Runs one sync. Never throws: failures are outcomes (and status, metrics, log lines). */
  async sync(opts: { force?: boolean } = {}): Promise<SyncOutcome> {
    // The one place a sync is skipped before it starts.
    if ((await this.opts.suspended?.()) === true) return { kind: "suspended" };
    const { status } = this.opts;
    let revision: Revision;
    try {
      revision = await this.opts.source.resolve();
    } catch (err) {
      return this.record(this.failed("fetch", err));
    }
    // Drift correction re-applies the revision in place; it never revisits an invalid one.
    const driftDue =
      this.opts.driftIntervalMs !== undefined &&
      this.lastAppliedAt > 0 &&
      this.now() - this.lastAppliedAt >= this.opts.driftIntervalMs;
    if (opts.force !== true) {
      if (status.lastAppliedRevision === revision.commit && !driftDue) {
        return this.record({ kind: "unchanged", revision });
      }
      if (this.lastInvalid === revision.commit || this.lastDryRun === revision.commit) {
        return { kind: "unchanged", revision };
      }
    }
    const started = this.now();
    status.attempted(revision.commit);
    this.log.info({ revision: revision.commit, ref: revision.ref }, "syncing revision");
    const { outcome, tree, sameTree } = await this.attempt(revision, driftDue);
    return this.record(outcome, { started, ...(tree !== undefined ? { tree } : {}), sameTree });
  }

  /** Checks out, validates, renders and applies one revision; bookkeeping is record's. */
  private async attempt(
    revision: Revision,
    driftDue: boolean,
  ): Promise<{ outcome: SyncOutcome; tree?: string; sameTree?: boolean }> {
    const { applier } = this.opts;
    let checkout;
    try {
      checkout = await this.opts.source.checkout(revision);
    } catch (err) {
      return { outcome: this.failed("checkout", err, revision) };
    }
    const tree = checkout.tree;
    // A new commit that leaves the watched directory's tree as it was renders the same objects:
    // nothing to validate, synthesize or send (drift correction still re-applies on schedule).
    if (
      applier.sameTreeIsNoop === true &&
      !driftDue &&
      this.opts.dryRun !== true &&
      tree !== undefined &&
      tree === this.lastAppliedTree
    ) {
      const result: ApplyResult = { applied: 0, unchanged: 0, pruned: 0, changes: [] };
      return { outcome: { kind: "applied", revision, result }, tree, sameTree: true };
    }
    let rendered;
    try {
      rendered = await renderFiles(checkout.files, {
        ...(this.opts.namespace !== undefined ? { namespace: this.opts.namespace } : {}),
        ...(this.opts.synth !== undefined ? { synth: this.opts.synth } : {}),
      });
    } catch (err) {
      return { outcome: this.failed("render", err, revision) };
    }
    const warnings = [...checkout.warnings, ...rendered.warnings];
    for (const w of warnings) this.log.warn({ revision: revision.commit }, w);
    if (!rendered.ok) return { outcome: { kind: "invalid", revision, errors: rendered.errors } };
    const refusals = admitPlan(rendered.plan, this.opts.admission ?? []);
    if (refusals.length > 0) return { outcome: { kind: "refused", revision, refusals } };
    const dryRun = this.opts.dryRun === true;
    let result: ApplyResult;
    try {
      result = await applier.apply(rendered.plan, revision, { dryRun, resend: driftDue });
    } catch (err) {
      return { outcome: this.failed("apply", err, revision) };
    }
    if (dryRun) return { outcome: { kind: "dry-run", revision, result, warnings } };
    if (result.notReady !== undefined && result.notReady.length > 0) {
      return { outcome: { kind: "not-ready", revision, result, notReady: result.notReady } };
    }
    return { outcome: { kind: "applied", revision, result, warnings }, tree };
  }

  /**
   * The one exit of a sync: what it leaves in the controller status and metrics, the log, the
   * target's Warning Events, and what the next sync skips.
   */
  private async record(outcome: SyncOutcome, at: SyncTiming = {}): Promise<SyncOutcome> {
    const seconds = at.started !== undefined ? (this.now() - at.started) / 1000 : undefined;
    switch (outcome.kind) {
      case "suspended":
        break;
      case "unchanged":
        this.opts.status.unchanged(outcome.revision.commit);
        this.succeeded();
        await this.refresh(outcome.revision);
        break;
      case "failed":
        await this.recordFailed(outcome, seconds);
        break;
      case "invalid":
        await this.recordInvalid(outcome, seconds);
        break;
      case "refused":
        await this.recordRefused(outcome, seconds);
        break;
      case "dry-run":
        this.recordDryRun(outcome);
        break;
      case "not-ready":
        await this.recordNotReady(outcome, seconds);
        break;
      case "applied":
        await this.recordApplied(outcome, at, seconds);
        break;
    }
    return outcome;
  }

  /** The failure in the controller status and metrics. */
  private fail(
    error: { stage: SyncStage; code: string; message: string },
    revision: Revision | undefined,
    seconds: number | undefined,
  ): void {
    this.opts.status.failed(
      { ...error, ...(revision ? { revision: revision.commit } : {}) },
      seconds,
    );
  }

  private async recordFailed(
    outcome: Extract<SyncOutcome, { kind: "failed" }>,
    seconds: number | undefined,
  ): Promise<void> {
    const { stage, code, message, revision } = outcome;
    // Apply failures are recorded by the target itself (it knows what it was writing).
    if (stage === "apply") {
      this.lastInvalid = undefined;
      // A failed apply may have changed part of the cluster: the next one is applied in full.
      this.lastAppliedTree = undefined;
    } else {
      const reason = stage === "fetch" || stage === "checkout" ? "FetchFailed" : "RenderFailed";
      // Without a revision (the ref could not be resolved), the same failure is the same code
      // while the same revision is in place.
      const key = revision?.commit ?? this.opts.status.lastAppliedRevision ?? "";
      const verb =
        stage === "fetch"
          ? "cannot fetch"
          : stage === "checkout"
            ? "cannot check out"
            : "cannot render";
      const what =
        revision !== undefined ? `revision ${revision.commit.slice(0, 12)}` : "the watched ref";
      // The code closes the message, so a long message is cut before it.
      const shown = clipBytes(message, EVENT_MESSAGE_BYTES - 200);
      await this.warn(`${reason}:${key}:${code}`, reason, `${verb} ${what}: ${shown} (${code})`);
    }
    this.fail({ stage, code, message }, revision, seconds);
    this.log.error({ stage, code, revision: revision?.commit }, message);
  }

  private async recordInvalid(
    { revision, errors }: Extract<SyncOutcome, { kind: "invalid" }>,
    seconds: number | undefined,
  ): Promise<void> {
    this.lastInvalid = revision.commit;
    const message = await this.notApplied(revision, "is invalid", errors, "error");
    this.fail(
      { stage: "validate", code: "ERR_INVALID_RESOURCES", message: message.status },
      revision,
      seconds,
    );
    for (const e of errors) this.log.error({ revision: revision.commit }, e);
    await this.warn(`ValidationFailed:${revision.commit}`, "ValidationFailed", message.event);
    await this.markNotApplied(revision, "ValidationFailed", message.status);
  }

  /** Like an invalid revision: not retried until the ref moves, nothing of it written. */
  private async recordRefused(
    { revision, refusals }: Extract<SyncOutcome, { kind: "refused" }>,
    seconds: number | undefined,
  ): Promise<void> {
    this.lastInvalid = revision.commit;
    const details = refusals.map((r) => `${r.object}: ${r.reason}`);
    const message = await this.notApplied(revision, "was refused", details, "refusal");
    this.fail(
      { stage: "admission", code: "ERR_REFUSED", message: message.status },
      revision,
      seconds,
    );
    for (const r of refusals) {
      this.log.error({ revision: revision.commit, object: r.object }, `refused: ${r.reason}`);
    }
    const refused = new AdmissionRefusedError(refusals);
    const event = `revision ${revision.commit.slice(0, 12)}: ${refused.message}`;
    await this.warn(`apply:${revision.commit}:${event}`, refused.code, event);
    await this.markNotApplied(revision, refused.code, message.status);
  }

  private recordDryRun(outcome: Extract<SyncOutcome, { kind: "dry-run" }>): void {
    this.lastInvalid = undefined;
    for (const c of outcome.result.changes) {
      if (c.action !== "unchanged") {
        this.log.info({ revision: outcome.revision.commit }, `${c.object} ${c.action} (dry run)`);
      }
    }
    // A dry run's success is a render: the controller is ready, and the revision is done.
    this.lastDryRun = outcome.revision.commit;
    this.opts.status.lastError = undefined;
    this.opts.status.ready = true;
  }

  /**
   * Applied, but workloads did not roll out in time: not the applied revision yet (as Flux's
   * health checks), so the next sync applies it again (writing nothing new) and waits again.
   */
  private async recordNotReady(
    outcome: Extract<SyncOutcome, { kind: "not-ready" }>,
    seconds: number | undefined,
  ): Promise<void> {
    const { revision, notReady } = outcome;
    this.lastInvalid = undefined;
    this.lastAppliedTree = undefined;
    this.logChanges(revision, outcome.result);
    const failed = notReady.some((n) => n.reason !== "RolloutTimeout");
    const code = failed ? "ERR_ROLLOUT_FAILED" : "ERR_NOT_READY";
    const lines = notReady.map((n) => `${n.object}: ${n.reason}: ${n.message}`);
    const head = `revision ${revision.commit.slice(0, 12)} was applied but ${notReady.length} workload(s) did not roll out`;
    const message = `${head}: ${summarizeLines(lines, STATUS_SUMMARY)}`;
    this.fail({ stage: "health", code, message }, revision, seconds);
    for (const n of notReady) {
      this.log.error({ revision: revision.commit, object: n.object, reason: n.reason }, n.message);
    }
    const reason = failed ? "RolloutFailed" : "NotReady";
    const event = `${head}: ${summarizeLines(lines, EVENT_SUMMARY)}`;
    await this.warn(`health:${revision.commit}:${code}`, reason, event);
  }

  private async recordApplied(
    { revision, result, warnings }: Extract<SyncOutcome, { kind: "applied" }>,
    at: SyncTiming,
    seconds: number | undefined,
  ): Promise<void> {
    const target = this.opts.applier.target;
    this.opts.status.succeeded(revision.commit, {
      seconds: seconds ?? 0,
      applied: result.applied,
      pruned: result.pruned,
    });
    this.succeeded();
    if (at.sameTree === true) {
      this.log.info(
        { revision: revision.commit, target, tree: at.tree },
        "revision applied: the watched directory did not change",
      );
      await this.refresh(revision);
      return;
    }
    // Drift correction re-renders the same tree on schedule: its warnings were said already.
    if (at.tree === undefined || at.tree !== this.lastAppliedTree) {
      await this.warnRendered(revision, warnings ?? []);
    }
    this.lastInvalid = undefined;
    this.lastAppliedAt = this.now();
    this.lastAppliedTree = at.tree;
    this.logChanges(revision, result);
    const { applied, unchanged, pruned, statuses, timings } = result;
    this.log.info(
      { revision: revision.commit, target, applied, unchanged, pruned, statuses, timings },
      "revision applied",
    );
  }

  /**
   * One Warning Event for an applied revision's warnings (what validation and synthesis said,
   * e.g. a backend reached without credentials): the first few in full, then how many more.
   */
  private async warnRendered(revision: Revision, warnings: string[]): Promise<void> {
    if (warnings.length === 0) return;
    const shown = warnings.slice(0, EVENT_WARNINGS_SHOWN).map((w) => clip(w, 300));
    const more = warnings.length - shown.length;
    const message =
      `revision ${revision.commit.slice(0, 12)} applied with ${warnings.length} warning` +
      `${warnings.length === 1 ? "" : "s"}: ${shown.join("; ")}` +
      (more > 0 ? ` (and ${more} more; see the controller's log)` : "");
    await this.warn(`warnings:${revision.commit}`, "RevisionWarnings", message);
  }

  private logChanges(revision: Revision, result: ApplyResult): void {
    for (const c of result.changes) {
      if (c.action !== "unchanged")
        this.log.info({ revision: revision.commit }, `${c.object} ${c.action}`);
    }
  }
}

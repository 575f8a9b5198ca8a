// One sync: resolve the watched ref, check the revision out, validate and synthesize it, and hand
// the objects to the target. A revision already applied is skipped (unless drift correction is
// due); a revision that failed validation is reported once and not retried until the ref moves.
// Every outcome lands in the controller status (endpoints, metrics) and the log; failures also
// become Warning Events when the target records them (the cluster target), each one once.
import { isMcpfleetError } from "../errors.js";
import type { SynthOptions } from "../synth/options.js";
import { AdmissionRefusedError, type Refusal } from "./admission.js";
import type { Applier, ApplyResult, NotReady } from "./applier.js";
import type { GitSource, Revision } from "./git-source.js";
import { renderFiles } from "./pipeline.js";
import type { Stage, ControllerStatus } from "./status.js";

export interface Logger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

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
  /** Asked at the start of each sync: true skips it (the controller is suspended). */
  suspended?: () => Promise<boolean>;
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
  | { kind: "failed"; stage: Stage; code: string; message: string; revision?: Revision };

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

  private succeeded(): void {
    this.opts.applier.warnings?.clearWarnings();
  }

  private async fail(
    stage: Stage,
    err: unknown,
    revision?: Revision,
    started?: number,
  ): Promise<SyncOutcome> {
    const code = isMcpfleetError(err) ? err.code : "ERR_INTERNAL";
    const message = err instanceof Error ? err.message : String(err);
    // Apply failures are recorded by the target itself (it knows what it was writing).
    if (stage !== "apply") {
      const reason = stage === "fetch" || stage === "checkout" ? "FetchFailed" : "RenderFailed";
      // Without a revision (the ref could not be resolved), the same failure is the same code
      // while the same revision is in place.
      const at = revision?.commit ?? this.opts.status.lastAppliedRevision ?? "";
      const text = `${stage === "fetch" ? "cannot fetch" : stage === "checkout" ? "cannot check out" : "cannot render"} ${
        revision !== undefined ? `revision ${revision.commit.slice(0, 12)}` : "the watched ref"
      }: ${message} (${code})`;
      await this.warn(`${reason}:${at}:${code}`, reason, text);
    }
    this.opts.status.failed(
      { stage, code, message, ...(revision ? { revision: revision.commit } : {}) },
      started !== undefined ? (this.now() - started) / 1000 : undefined,
    );
    this.log.error({ stage, code, revision: revision?.commit }, message);
    return { kind: "failed", stage, code, message, ...(revision ? { revision } : {}) };
  }

  /** A revision the admission checks refused: like an invalid one, not retried until it moves. */
  private refused(err: AdmissionRefusedError, revision: Revision, started: number): SyncOutcome {
    this.lastInvalid = revision.commit;
    const { status } = this.opts;
    const message = `revision ${revision.commit.slice(0, 12)} was refused and not applied; ${
      status.lastAppliedRevision !== undefined
        ? `${status.lastAppliedRevision.slice(0, 12)} stays in place`
        : "nothing has been applied yet"
    }: ${err.refusals.map((r) => `${r.object}: ${r.reason}`).join("; ")}`;
    status.failed(
      { stage: "admission", code: err.code, message, revision: revision.commit },
      (this.now() - started) / 1000,
    );
    for (const r of err.refusals) {
      this.log.error({ revision: revision.commit, object: r.object }, `refused: ${r.reason}`);
    }
    return { kind: "refused", revision, refusals: err.refusals };
  }

  /**
   * Applied, but workloads did not roll out in time: not the applied revision yet (as Flux's
   * health checks), so the next sync applies it again (writing nothing new) and waits again.
   */
  private async notReady(
    revision: Revision,
    result: ApplyResult,
    notReady: NotReady[],
    started: number,
  ): Promise<SyncOutcome> {
    const failed = notReady.some((n) => n.reason !== "RolloutTimeout");
    const code = failed ? "ERR_ROLLOUT_FAILED" : "ERR_NOT_READY";
    const message = `revision ${revision.commit.slice(0, 12)} was applied but ${notReady.length} workload(s) did not roll out: ${notReady
      .map((n) => `${n.object}: ${n.reason}: ${n.message}`)
      .join("; ")}`;
    this.lastAppliedTree = undefined;
    this.opts.status.failed(
      { stage: "health", code, message, revision: revision.commit },
      (this.now() - started) / 1000,
    );
    for (const n of notReady) {
      this.log.error({ revision: revision.commit, object: n.object, reason: n.reason }, n.message);
    }
    await this.warn(
      `health:${revision.commit}:${code}`,
      failed ? "RolloutFailed" : "NotReady",
      message,
    );
    return { kind: "not-ready", revision, result, notReady };
  }

  /** Runs one sync. Never throws: failures are outcomes (and status, metrics, log lines). */
  async sync(opts: { force?: boolean } = {}): Promise<SyncOutcome> {
    const { status, applier } = this.opts;
    if ((await this.opts.suspended?.()) === true) return { kind: "suspended" };
    let revision: Revision;
    try {
      revision = await this.opts.source.resolve();
    } catch (err) {
      return this.fail("fetch", err);
    }
    // Drift correction re-applies the revision in place; it never revisits an invalid one.
    const driftDue =
      this.opts.driftIntervalMs !== undefined &&
      this.lastAppliedAt > 0 &&
      this.now() - this.lastAppliedAt >= this.opts.driftIntervalMs;
    if (opts.force !== true) {
      if (status.lastAppliedRevision === revision.commit && !driftDue) {
        status.unchanged(revision.commit);
        this.succeeded();
        await this.refresh(revision);
        return { kind: "unchanged", revision };
      }
      if (this.lastInvalid === revision.commit || this.lastDryRun === revision.commit) {
        return { kind: "unchanged", revision };
      }
    }
    const started = this.now();
    status.attempted(revision.commit);
    this.log.info({ revision: revision.commit, ref: revision.ref }, "syncing revision");
    let checkout;
    try {
      checkout = await this.opts.source.checkout(revision);
    } catch (err) {
      return this.fail("checkout", err, revision, started);
    }
    // A new commit that leaves the watched directory's tree as it was renders the same objects:
    // nothing to validate, synthesize or send (drift correction still re-applies on schedule).
    if (
      applier.sameTreeIsNoop === true &&
      !driftDue &&
      this.opts.dryRun !== true &&
      checkout.tree !== undefined &&
      checkout.tree === this.lastAppliedTree
    ) {
      status.succeeded(revision.commit, {
        seconds: (this.now() - started) / 1000,
        applied: 0,
        pruned: 0,
      });
      this.succeeded();
      this.log.info(
        { revision: revision.commit, target: applier.target, tree: checkout.tree },
        "revision applied: the watched directory did not change",
      );
      await this.refresh(revision);
      const result: ApplyResult = { applied: 0, unchanged: 0, pruned: 0, changes: [] };
      return { kind: "applied", revision, result };
    }
    let rendered;
    try {
      rendered = await renderFiles(checkout.files, {
        ...(this.opts.namespace !== undefined ? { namespace: this.opts.namespace } : {}),
        ...(this.opts.synth !== undefined ? { synth: this.opts.synth } : {}),
      });
    } catch (err) {
      return this.fail("render", err, revision, started);
    }
    const warnings = [...checkout.warnings, ...rendered.warnings];
    for (const w of warnings) this.log.warn({ revision: revision.commit }, w);
    if (!rendered.ok) {
      this.lastInvalid = revision.commit;
      const message = `revision ${revision.commit.slice(0, 12)} is invalid and was not applied; ${
        status.lastAppliedRevision !== undefined
          ? `${status.lastAppliedRevision.slice(0, 12)} stays in place`
          : "nothing has been applied yet"
      }: ${rendered.errors.join("; ")}`;
      status.failed(
        { stage: "validate", code: "ERR_INVALID_RESOURCES", message, revision: revision.commit },
        (this.now() - started) / 1000,
      );
      for (const e of rendered.errors) this.log.error({ revision: revision.commit }, e);
      await this.warn(`ValidationFailed:${revision.commit}`, "ValidationFailed", message);
      return { kind: "invalid", revision, errors: rendered.errors };
    }
    this.lastInvalid = undefined;
    const dryRun = this.opts.dryRun === true;
    let result: ApplyResult;
    try {
      result = await applier.apply(rendered.objects, revision, {
        dryRun,
        resources: rendered.loaded,
        owners: rendered.owners,
        resend: driftDue,
      });
    } catch (err) {
      if (err instanceof AdmissionRefusedError) return this.refused(err, revision, started);
      // A failed apply may have changed part of the cluster: the next revision is applied in full.
      this.lastAppliedTree = undefined;
      return this.fail("apply", err, revision, started);
    }
    if (dryRun) {
      for (const c of result.changes) {
        if (c.action !== "unchanged") {
          this.log.info({ revision: revision.commit }, `${c.object} ${c.action} (dry run)`);
        }
      }
      // A dry run's success is a render: the controller is ready, and the revision is done.
      this.lastDryRun = revision.commit;
      status.lastError = undefined;
      status.ready = true;
      return { kind: "dry-run", revision, result, warnings };
    }
    for (const c of result.changes) {
      if (c.action !== "unchanged")
        this.log.info({ revision: revision.commit }, `${c.object} ${c.action}`);
    }
    if (result.notReady !== undefined && result.notReady.length > 0) {
      return this.notReady(revision, result, result.notReady, started);
    }
    this.lastAppliedAt = this.now();
    this.lastAppliedTree = checkout.tree;
    status.succeeded(revision.commit, {
      seconds: (this.now() - started) / 1000,
      applied: result.applied,
      pruned: result.pruned,
    });
    this.succeeded();
    this.log.info(
      {
        revision: revision.commit,
        target: applier.target,
        applied: result.applied,
        unchanged: result.unchanged,
        pruned: result.pruned,
      },
      "revision applied",
    );
    return { kind: "applied", revision, result, warnings };
  }
}

// The seam between the sync pipeline and where a revision's plan goes. The directory target
// (render-target.ts) writes the plan's workloads as manifests; the cluster target applies the
// plan with server-side apply.
import type { WarningSink } from "./events.js";
import type { Revision } from "../infra/git/source.js";
import type { RevisionPlan } from "./revision-plan.js";

/** One object's fate in an apply, for logs that say what changed object by object. */
export interface ObjectChange {
  /** `Kind namespace/name` (cluster-scoped: `Kind name`). */
  object: string;
  action: "created" | "configured" | "unchanged" | "pruned" | "recreated";
}

/** A workload the revision applied that had not rolled out when the wait ended. */
export interface NotReady {
  /** `Kind namespace/name`. */
  object: string;
  /** ProgressDeadlineExceeded (failed), or RolloutTimeout (still progressing). */
  reason: string;
  message: string;
}

export interface ApplyResult {
  /** Objects written (created or changed). */
  applied: number;
  unchanged: number;
  pruned: number;
  changes: ObjectChange[];
  /** Custom resource statuses written (cluster target). */
  statuses?: number;
  /**
   * Where the time went (cluster target, ms): sending the objects and recording the inventory
   * (what `kubectl apply` does), the rollout wait, and writing the resources' statuses.
   */
  timings?: { apply: number; rollout: number; status: number };
  /** With a rollout wait: the workloads not rolled out in time (the revision is not healthy). */
  notReady?: NotReady[];
}

export interface ApplyOptions {
  dryRun?: boolean;
  /**
   * Drift correction: compare every object whose content has not changed with the live one, and
   * send those deleted or changed by someone else (the cluster target does so on its first apply
   * of a process too).
   */
  resend?: boolean;
}

export interface Applier {
  /** `cluster` or `dir:PATH`, as in --target. */
  readonly target: string;
  /**
   * True when a revision whose watched directory is the same Git tree as the last applied one
   * needs no work at all (the cluster target: its objects, hashes and inventory are unchanged).
   */
  readonly sameTreeIsNoop?: boolean;
  /**
   * Brings what the target reports about the applied objects up to date without applying
   * anything (the cluster target: resource status from the workloads' ready replicas). Returns
   * how many statuses were written.
   */
  refreshStatus?(): Promise<number>;
  /**
   * Says on what the target holds that a newer revision was not applied (invalid or refused), so
   * it is seen where those objects are looked at (the cluster target: `Stalled=True` on the
   * custom resources in place, with `reason` and `message`).
   */
  notApplied?(reason: string, message: string): Promise<void>;
  /** Where the controller's failures are recorded (the cluster target: Warning Events). */
  readonly warnings?: WarningSink;
  /**
   * Makes the target hold what it takes of `plan` (revision-plan.ts) for `revision`. Must not
   * leave a partial result visible when it throws. With `dryRun`, reports what it would change
   * and changes nothing.
   */
  apply(plan: RevisionPlan, revision: Revision, options?: ApplyOptions): Promise<ApplyResult>;
}

// Kept where callers of the Applier seam have always found it.
export { objectName } from "./revision-plan.js";

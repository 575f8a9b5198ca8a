// `--target cluster`: server-side apply of a revision plan as clusterPlan selects and marks it,
// stage by stage (CRDs, waited for until Established; Namespaces; configuration kinds; custom
// resources; their workloads, owned by them). Objects whose content hash matches the inventory
// are not sent again, so a revision that changes nothing makes no write request; on a drift check
// (the first apply of a process, and each drift-correction cycle) they are compared with the live
// objects, read a kind at a time, and only those deleted or changed by someone else are sent
// again (drift-check.ts). Up to 32 requests of a stage are in flight at once. With prune, what the
// previous inventory held and the new plan does not is deleted once everything else has been
// applied, and only when the live object still carries our marker. Retryable API errors (409,
// 429, 5xx) back off with jitter.
import { randomBytes } from "node:crypto";
import { McpfleetError } from "../errors.js";
import { isKind } from "../schema/kinds.js";
import type { KubeObject, Resource } from "../synth/model.js";
import type { Applier, ApplyOptions, ApplyResult, NotReady, ObjectChange } from "./applier.js";
import { type BackoffOptions, withBackoff } from "./backoff.js";
import { appliedByUs, clusterPlan, entryRef, pruneCandidates } from "./cluster-plan.js";
import { ApplyRun } from "./apply-run.js";
import { eachLimit } from "./each-limit.js";
import { driftedObjects } from "./drift-check.js";
import { ResourceStatusWriter } from "./cluster-status.js";
import { ROLLOUT_KINDS, waitForRollout, workloadName } from "./health.js";
import { EventRecorder } from "./events.js";
import type { Revision } from "../infra/git/source.js";
import { type InventoryEntry, InventoryStore, sameEntries } from "./inventory.js";
import { KubeApiError, type KubeClient, type LiveObject } from "../infra/kube/client.js";
import {
  type PlannedObject,
  type RevisionPlan,
  type ApplyStage,
  STAGES,
  objectName,
  planOwners,
} from "./revision-plan.js";

// Kept where its callers have always found it.
export { eachLimit } from "./each-limit.js";

export interface ClusterApplierOptions {
  /** The controller's own client: inventory, Events, resource status, CRDs, rollout reads. */
  client: KubeClient;
  /**
   * Who writes the revision's objects (everything but our CRDs): a client impersonating a
   * ServiceAccount confines them to its RBAC. Default: `client`.
   */
  writer?: KubeClient;
  /** Apply the Namespaces the resources live in (default true; off when writing as a tenant). */
  namespaces?: boolean;
  /**
   * After applying, wait this long (ms) for the revision's Deployments and StatefulSets to roll
   * out (0 or absent: no wait); what is not done by then is reported in `ApplyResult.notReady`.
   */
  waitTimeoutMs?: number;
  /** Between rollout reads (ms, default 1 s). */
  rolloutPollMs?: number;
  fieldManager: string;
  prune: boolean;
  forceRecreate: boolean;
  /** Namespace of the inventory ConfigMap (the controller's own). */
  namespace: string;
  /** Also apply our CRDs (default true). */
  crds?: boolean;
  /** Parallel requests within a stage (default 32). */
  concurrency?: number;
  backoff?: Partial<BackoffOptions>;
  /** How long to wait for CRDs to become Established (ms, default 60 s). */
  establishTimeoutMs?: number;
  /** Called after each object write, for logs (the reconciler also logs the summary). */
  onChange?: (change: ObjectChange) => void;
  /** Stops between writes when it returns true (SIGTERM: finish the step in flight, then exit). */
  stopping?: () => boolean;
  /**
   * Asked before every write; false stops the apply at once (leadership ended: another replica
   * may be applying, so not even the stage in flight may finish).
   */
  mayWrite?: () => boolean;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isImmutable(err: unknown): err is KubeApiError {
  return (
    err instanceof KubeApiError &&
    err.status === 422 &&
    (/immutable/i.test(err.message) || err.causes.some((c) => /immutable/i.test(c.message ?? "")))
  );
}

function immutableFields(err: KubeApiError): string {
  const fields = err.causes
    .filter((c) => /immutable/i.test(c.message ?? ""))
    .map((c) => c.field)
    .filter((f): f is string => f !== undefined && f !== "");
  return fields.length > 0 ? fields.join(", ") : "an immutable field";
}

/** An API error about one object, said with the object's name (other errors unchanged). */
function apiFailure(o: KubeObject, err: unknown): unknown {
  if (!(err instanceof KubeApiError)) return err;
  return new McpfleetError(
    "ERR_KUBE_API",
    `${objectName(o)}: ${err.message} (HTTP ${err.status})`,
    {
      cause: err,
    },
  );
}

export class ClusterApplier implements Applier {
  readonly target = "cluster";
  readonly sameTreeIsNoop = true;
  readonly inventory: InventoryStore;
  private readonly opts: ClusterApplierOptions;
  private readonly client: KubeClient;
  private readonly writer: KubeClient;
  private readonly hmacEnsured = new Set<string>();
  /** Whether an apply of this process has compared the cluster with what it sent. */
  private driftChecked = false;
  /** What the last successful apply applied, for status refreshes between revisions. */
  private last:
    | {
        resources: readonly Resource[];
        owners: ReadonlyMap<string, string>;
        entries: ReadonlyMap<string, InventoryEntry>;
        /** Whether status says rollout health (the apply waited for it). */
        health: boolean;
      }
    | undefined;
  readonly status: ResourceStatusWriter;
  /** Warning Events on the inventory ConfigMap, each failure once. */
  readonly warnings: EventRecorder;

  constructor(opts: ClusterApplierOptions) {
    this.opts = opts;
    this.client = opts.client;
    this.writer = opts.writer ?? opts.client;
    this.status = new ResourceStatusWriter(opts.client, opts.fieldManager);
    this.inventory = new InventoryStore(opts.client, {
      name: `${opts.fieldManager}-inventory`,
      namespace: opts.namespace,
      fieldManager: opts.fieldManager,
    });
    this.warnings = new EventRecorder(opts.client, {
      name: this.inventory.name,
      namespace: opts.namespace,
      fieldManager: opts.fieldManager,
    });
  }

  /**
   * Marks the custom resources in place Stalled after a revision was not applied (invalid,
   * refused): they still run the revision in place, not the one the watched ref names. Read
   * from the inventory, so a process that applied nothing itself marks them too.
   */
  async notApplied(reason: string, message: string): Promise<void> {
    const inventory = await this.retry(() => this.inventory.read());
    const resources = [...(inventory?.entries.values() ?? [])]
      .filter((e) => e.uid !== undefined && isKind(e.kind))
      .map(entryRef);
    this.fence();
    await this.status.stalled(resources, reason, message);
  }

  async refreshStatus(): Promise<number> {
    const last = this.last;
    if (last === undefined) return 0;
    this.fence();
    return this.retry(() =>
      this.status.write(last.resources, last.owners, last.entries, { health: last.health }),
    );
  }

  /** Closes the client's connections (one-shot commands). */
  close(): void {
    this.client.close();
    if (this.writer !== this.client) this.writer.close();
  }

  /** Throws when this replica may no longer write (see ClusterApplierOptions.mayWrite). */
  private fence(): void {
    if (this.opts.mayWrite?.() === false) {
      throw new McpfleetError("ERR_NOT_LEADER", "lost the leadership; stopped applying");
    }
  }

  private retry<T>(fn: () => Promise<T>): Promise<T> {
    return withBackoff(fn, { baseMs: 100, capMs: 5_000, maxAttempts: 8, ...this.opts.backoff });
  }

  private async waitEstablished(crd: KubeObject): Promise<void> {
    const deadline = Date.now() + (this.opts.establishTimeoutMs ?? 60_000);
    for (;;) {
      const live = await this.retry(() => this.client.get(crd));
      const conditions = ((live?.status as { conditions?: { type: string; status: string }[] })
        ?.conditions ?? []) as { type: string; status: string }[];
      if (conditions.some((c) => c.type === "Established" && c.status === "True")) break;
      if (Date.now() > deadline) {
        throw new McpfleetError(
          "ERR_KUBE_API",
          `CustomResourceDefinition ${crd.metadata.name} did not become Established in time`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const spec = crd.spec as { group: string; versions: { name: string }[] };
    for (const v of spec.versions) {
      this.client.forget(`${spec.group}/${v.name}`);
      this.writer.forget(`${spec.group}/${v.name}`);
    }
  }

  /** Sends one object; an immutable-field change is recreated with --force-recreate. */
  private async send(
    o: KubeObject,
    dryRun: boolean,
  ): Promise<{ live: LiveObject; recreated?: string }> {
    const fieldManager = this.opts.fieldManager;
    // Our CRDs come with the controller, not with the revision: the controller applies them.
    const client = o.kind === "CustomResourceDefinition" ? this.client : this.writer;
    this.fence();
    try {
      return { live: await this.retry(() => client.apply(o, { fieldManager, dryRun })) };
    } catch (err) {
      if (!isImmutable(err)) throw apiFailure(o, err);
      const fields = immutableFields(err);
      if (!this.opts.forceRecreate) {
        throw new McpfleetError(
          "ERR_IMMUTABLE_FIELD",
          `${objectName(o)}: the change touches ${fields}, which cannot be changed in place; delete the object or run with --force-recreate to delete and recreate it`,
          { cause: err },
        );
      }
      if (dryRun) return { live: o, recreated: fields };
      await this.retry(() => client.delete(o, { propagationPolicy: "Foreground" }));
      const deadline = Date.now() + 60_000;
      while ((await client.get(o)) !== undefined && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      return {
        live: await this.retry(() => client.apply(o, { fieldManager })),
        recreated: fields,
      };
    }
  }

  /** Creates `<n>-hmac-secret` for each VirtualMCPServer, once, when it does not exist. */
  private async ensureHmacSecrets(resources: readonly Resource[], dryRun: boolean): Promise<void> {
    const vmcps = resources.filter((r) => r.kind === "VirtualMCPServer");
    await eachLimit(vmcps, this.opts.concurrency ?? 32, async (r) => {
      const name = `${r.metadata.name}-hmac-secret`;
      const key = `${r.metadata.namespace}/${name}`;
      if (this.hmacEnsured.has(key)) return;
      const ref = {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: r.metadata.namespace },
      };
      const live = await this.retry(() => this.writer.get(ref));
      if (live === undefined && !dryRun) {
        try {
          await this.retry(() =>
            this.writer.create(
              {
                ...ref,
                metadata: {
                  ...ref.metadata,
                  labels: { "app.kubernetes.io/managed-by": "mcpfleet" },
                },
                type: "Opaque",
                data: { "hmac-secret": randomBytes(32).toString("base64") },
              },
              { fieldManager: this.opts.fieldManager },
            ),
          );
          this.opts.onChange?.({ object: `Secret ${key}`, action: "created" });
        } catch (err) {
          // Created meanwhile by someone else: theirs stays.
          if (!(err instanceof KubeApiError && err.status === 409)) throw err;
        }
      }
      if (!dryRun) this.hmacEnsured.add(key);
    });
  }

  async apply(
    rendered: RevisionPlan,
    revision: Revision,
    options: ApplyOptions = {},
  ): Promise<ApplyResult> {
    const { resources } = rendered;
    try {
      const plan = clusterPlan(rendered, {
        fieldManager: this.opts.fieldManager,
        crds: this.opts.crds ?? true,
        namespaces: this.opts.namespaces ?? true,
      });
      const started = performance.now();
      const result = await this.applyRevision(plan, revision, options);
      if (options.dryRun !== true) {
        const applied = performance.now();
        const health = (this.opts.waitTimeoutMs ?? 0) > 0;
        if (health) result.notReady = await this.waitForRollout(plan.objects);
        const rolledOut = performance.now();
        const entries = (await this.inventory.read())?.entries ?? new Map();
        const last = { resources, owners: planOwners(plan), entries, health };
        // The rollout wait may have outlasted this replica's leadership.
        this.fence();
        result.statuses = await this.retry(() =>
          this.status.write(last.resources, last.owners, last.entries, { health }),
        );
        this.last = last;
        result.timings = {
          apply: applied - started,
          rollout: rolledOut - applied,
          status: performance.now() - rolledOut,
        };
      }
      return result;
    } catch (err) {
      if (options.dryRun !== true) {
        const message = `revision ${revision.commit.slice(0, 12)}: ${describe(err)}`;
        const reason = err instanceof McpfleetError ? err.code : "ApplyFailed";
        // Retries of the same failing revision record it once.
        await this.warnings.warning(`apply:${revision.commit}:${message}`, reason, message);
        await this.status.stalled(resources, reason, message);
      }
      throw err;
    }
  }

  /** The revision's Deployments and StatefulSets not rolled out within --wait-timeout. */
  private async waitForRollout(plan: readonly PlannedObject[]): Promise<NotReady[]> {
    const workloads = plan
      .filter((p) => p.object.apiVersion === "apps/v1" && ROLLOUT_KINDS.has(p.object.kind))
      .map((p) => ({ key: p.key, namespace: p.object.metadata.namespace ?? "" }));
    if (workloads.length === 0) return [];
    const states = await this.retry(() =>
      waitForRollout(this.client, workloads, {
        timeoutMs: this.opts.waitTimeoutMs ?? 0,
        ...(this.opts.rolloutPollMs !== undefined ? { pollMs: this.opts.rolloutPollMs } : {}),
        stopping: () => this.opts.stopping?.() === true || this.opts.mayWrite?.() === false,
      }),
    );
    return [...states]
      .filter(([, s]) => !s.done)
      .map(([key, s]) => ({
        object: workloadName(key),
        reason: s.failed ?? "RolloutTimeout",
        message: s.message,
      }));
  }

  private async applyRevision(
    plan: RevisionPlan,
    revision: Revision,
    options: ApplyOptions,
  ): Promise<ApplyResult> {
    const dryRun = options.dryRun === true;
    const previous = await this.retry(() => this.inventory.read());
    const run = new ApplyRun(previous?.entries ?? new Map<string, InventoryEntry>(), {
      ...(this.opts.onChange !== undefined ? { onChange: this.opts.onChange } : {}),
    });
    // What the inventory says was sent may have been changed or deleted since: a process that
    // starts knows nothing of what happened while it was not running.
    const checkDrift = options.resend === true || !this.driftChecked;
    if (!dryRun) {
      const provisional = run.provisional(plan.objects);
      if (!sameEntries(provisional, run.previous)) {
        await this.retry(() =>
          this.inventory.write({ revision: previous?.revision ?? "", entries: provisional }),
        );
      }
    }
    // Stage by stage: owners' uids are known once their stage is done.
    for (const stage of STAGES) {
      await this.applyStage(run, plan.objects, stage, { dryRun, checkDrift });
    }
    await this.ensureHmacSecrets(plan.resources, dryRun);

    // Prune: previous inventory entries the revision no longer renders.
    const gone = pruneCandidates(run.previous, plan.keys);
    const kept = new Map(run.next);
    let pruned = 0;
    if (this.opts.prune) pruned = await this.prune(gone, run, dryRun);
    // Without prune, leftovers stay recorded so a later --prune can still remove them.
    else for (const [k, e] of gone) kept.set(k, e);
    if (!dryRun && (!sameEntries(kept, run.previous) || previous === undefined)) {
      await this.retry(() => this.inventory.write({ revision: revision.commit, entries: kept }));
    }
    if (!dryRun) this.driftChecked = true;
    return { applied: run.applied, unchanged: run.unchanged, pruned, changes: run.changes };
  }

  /** Sends what changed of one stage (CRDs: and waits until they are Established). */
  private async applyStage(
    run: ApplyRun,
    plan: readonly PlannedObject[],
    stage: ApplyStage,
    opts: { dryRun: boolean; checkDrift: boolean },
  ): Promise<void> {
    const { dryRun } = opts;
    const pending: PlannedObject[] = [];
    const sentBefore: PlannedObject[] = [];
    for (const p of plan) {
      if (p.stage !== stage) continue;
      if (run.needsWrite(p)) pending.push(p);
      else sentBefore.push(p);
    }
    const { drifted, live } = opts.checkDrift
      ? await this.drifted(run, sentBefore, stage)
      : { drifted: new Set<string>(), live: [] };
    // A restarted controller learns what status our custom resources already carry.
    if (stage === "config" || stage === "resources") this.status.remember(live);
    for (const p of sentBefore) {
      if (drifted.has(p.key)) pending.push(p);
      else run.keepUnchanged(p);
    }
    if (this.opts.stopping?.() === true && pending.length > 0) {
      throw new McpfleetError("ERR_INTERRUPTED", `stopped before applying the ${stage} stage`);
    }
    // Bindings after everything else of the stage: the API server checks that whoever creates
    // a RoleBinding holds the permissions of its Role, and refuses it while the Role is not
    // there yet (unless the writer may do anything, as a cluster admin may).
    const isBinding = (p: PlannedObject) => p.object.kind === "RoleBinding";
    for (const batch of [pending.filter((p) => !isBinding(p)), pending.filter(isBinding)]) {
      await eachLimit(batch, this.opts.concurrency ?? 32, async (p) => {
        const sent = run.sent(p);
        const { live, recreated } = await this.send(sent, dryRun);
        run.written(p, sent, live, recreated);
      });
    }
    if (stage === "crds" && !dryRun) {
      for (const p of pending) await this.waitEstablished(p.object);
    }
  }

  /** Keys of the objects of a stage that were sent before and have drifted since; what was read. */
  private drifted(
    run: ApplyRun,
    objects: readonly PlannedObject[],
    stage: ApplyStage,
  ): Promise<{ drifted: Set<string>; live: LiveObject[] }> {
    // Our CRDs come with the controller, unmarked, and are read by its own client.
    const crds = stage === "crds";
    return driftedObjects(
      crds ? this.client : this.writer,
      objects.map((p) => run.sent(p)),
      { marked: !crds, retry: (fn) => this.retry(fn) },
    );
  }

  /** Deletes what the revision no longer renders and we still own; returns how many. */
  private async prune(
    gone: readonly [string, InventoryEntry][],
    run: ApplyRun,
    dryRun: boolean,
  ): Promise<number> {
    let pruned = 0;
    for (const [, e] of gone) {
      const ref = entryRef(e);
      let live: LiveObject | undefined;
      try {
        live = await this.retry(() => this.writer.get(ref));
      } catch (err) {
        // Recorded before a write that was then refused (hash ""): whoever may not read it
        // never wrote it, so there is nothing of ours to delete.
        if (e.hash === "" && err instanceof KubeApiError && err.status === 403) continue;
        throw apiFailure(ref, err);
      }
      if (live === undefined || !appliedByUs(live, this.opts.fieldManager)) continue;
      if (!dryRun) {
        this.fence();
        await this.retry(() => this.writer.delete(ref)).catch((err: unknown) => {
          throw apiFailure(ref, err);
        });
      }
      pruned++;
      run.note({ object: objectName(ref), action: "pruned" });
    }
    return pruned;
  }
}

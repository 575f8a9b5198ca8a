// Status of the custom resources after a revision is applied: the status synthesis computes
// (phase, url, reference conditions, config hashes), what the cluster shows (ready replicas of each
// resource's Deployment or StatefulSet, read with one list per namespace and kind),
// observedGeneration of the generation just applied, and the Reconciling and Stalled conditions.
// A status is written through the status subresource only when it differs from the one this
// controller wrote last, so a revision that changes nothing writes nothing. Failures become
// Kubernetes Events on the object concerned.
import { type Kind, KINDS } from "../schema/kinds.js";
import { contentHash } from "../synth/hash.js";
import { type Resource, ResourceSet } from "../synth/model.js";
import { computeStatus, type Observation, type Status } from "../synth/status.js";
import { objectKey, resourceKey } from "./revision-plan.js";
import { eachLimit } from "./each-limit.js";
import { observeWorkloads, rolloutState, workloadName } from "./health.js";
import { EVENT_MESSAGE_BYTES, clipBytes } from "./error-summary.js";
import type { InventoryEntry } from "./inventory.js";
import type { KubeClient, KubeObjectRef, LiveObject } from "../infra/kube/client.js";
import {
  type Condition,
  type ConditionInput,
  conditionTime,
  conditionsOf,
  patchCondition,
  setCondition,
  timed,
} from "./conditions.js";

/** Why a resource's workloads are not rolled out (undefined: they all are). */
interface Rollout {
  reason: string;
  message: string;
  failed: boolean;
}

const SUCCEEDED = "ReconciliationSucceeded";
/** Status writes in flight at once. */
const STATUS_WRITES_IN_FLIGHT = 32;
/** The most a Stalled condition's message holds, in UTF-8 bytes. */
const STALLED_MESSAGE_BYTES = 4000;

/** Resource key -> the keys of its Deployments and StatefulSets. */
function workloadsByOwner(owners: ReadonlyMap<string, string>): Map<string, string[]> {
  const workloads = new Map<string, string[]>();
  for (const [obj, owner] of owners) {
    if (!/^apps\/(Deployment|StatefulSet)\//.test(obj)) continue;
    workloads.set(owner, [...(workloads.get(owner) ?? []), obj]);
  }
  return workloads;
}

/** Synthesis's view of the cluster: the fewest ready replicas of a resource's workloads. */
function observer(
  set: ResourceSet,
  live: ReadonlyMap<string, LiveObject>,
  workloads: ReadonlyMap<string, string[]>,
): (kind: Kind, namespace: string, name: string) => Observation | undefined {
  const ready = new Map(
    [...live].map(([k, o]) => [
      k,
      (o.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0,
    ]),
  );
  return (kind, namespace, name) => {
    const r = set.get(kind, namespace, name);
    if (r === undefined) return undefined;
    const keys = workloads.get(resourceKey(r)) ?? [];
    const seen = keys.filter((k) => ready.has(k));
    if (seen.length === 0) return undefined;
    return { readyReplicas: Math.min(...seen.map((k) => ready.get(k) ?? 0)) };
  };
}

/**
 * The status written for a resource: the computed one, made Failed or Pending by a rollout that
 * is not done, with observedGeneration and the Reconciling and Stalled conditions.
 */
function fullStatus(
  status: Status,
  rollout: Rollout | undefined,
  generation: number | undefined,
): Status & { conditions: ConditionInput[] } {
  let stalled = condition("Stalled", "False", SUCCEEDED, "");
  if (rollout !== undefined) {
    const { reason, message, failed } = rollout;
    stalled = condition("Stalled", "True", reason, message);
    status = {
      ...status,
      phase: failed ? "Failed" : "Pending",
      message,
      conditions: patchCondition(conditionsOf(status), "Ready", {
        status: "False",
        reason,
        message,
      }),
    };
  }
  const observed = generation !== undefined ? { observedGeneration: generation } : {};
  const conditions = [
    ...conditionsOf(status),
    condition("Reconciling", "False", SUCCEEDED, "applied"),
    stalled,
  ].map((c) => ({ ...c, ...observed }));
  return { ...status, ...observed, conditions };
}

function condition(
  type: string,
  status: Condition["status"],
  reason: string,
  message: string,
): ConditionInput {
  return { type, status, reason, message };
}

/** What names a custom resource: a synthesized one, or an inventory entry's reference. */
interface ResourceRef {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

function statusRef(r: ResourceRef): KubeObjectRef {
  return {
    apiVersion: r.apiVersion,
    kind: r.kind,
    metadata: { name: r.metadata.name, namespace: r.metadata.namespace },
  };
}

export class ResourceStatusWriter {
  private readonly client: KubeClient;
  private readonly fieldManager: string;
  /** Hash of the status last written per resource, and its conditions' transition times. */
  /** What was written last, by resource key; `live`: the hash of a status read, not written. */
  private readonly written = new Map<
    string,
    { hash: string; conditions: Condition[]; live?: string }
  >();
  /** Policies' say in a computed status (image-policy.ts: enforceServers verdicts). */
  overlay: ((r: Resource, status: Status) => Status) | undefined;

  constructor(client: KubeClient, fieldManager: string) {
    this.client = client;
    this.fieldManager = fieldManager;
  }

  /**
   * Writes every resource's status that changed; returns how many were written. With `health`
   * (the controller waited for the rollout), a resource is Ready only when its workloads rolled
   * out; one that failed or is still rolling out makes it Stalled, with the reason.
   */
  async write(
    resources: readonly Resource[],
    owners: ReadonlyMap<string, string>,
    entries: ReadonlyMap<string, InventoryEntry>,
    opts: { health?: boolean } = {},
  ): Promise<number> {
    const set = new ResourceSet(resources);
    const live = await observeWorkloads(this.client, set.namespaces());
    const workloads = workloadsByOwner(owners);
    const observe = observer(set, live, workloads);
    const statuses: { r: Resource; full: Status & { conditions: ConditionInput[] } }[] = [];
    for (const kind of KINDS) {
      for (const r of set.list(kind)) {
        const key = resourceKey(r);
        const entry = entries.get(key);
        if (entry?.uid === undefined) continue;
        let status = computeStatus(r, set, { observe });
        if (this.overlay !== undefined) status = this.overlay(r, status);
        const rollout =
          opts.health === true ? this.rollout(workloads.get(key) ?? [], live) : undefined;
        statuses.push({ r, full: fullStatus(status, rollout, entry.generation) });
      }
    }
    // Several in flight, as the apply sends objects: one at a time, 10,000 statuses take minutes.
    let count = 0;
    await eachLimit(statuses, STATUS_WRITES_IN_FLIGHT, async ({ r, full }) => {
      if (await this.patch(r, full)) count++;
    });
    return count;
  }

  /**
   * Takes the status live custom resources carry as the one last written, so that a restarted
   * controller does not write again a status that is already up to date.
   */
  remember(live: Iterable<LiveObject>): void {
    for (const o of live) {
      const key = objectKey(o);
      const status = o.status as { conditions?: Condition[] } | undefined;
      if (this.written.has(key) || status === undefined) continue;
      this.written.set(key, {
        hash: "",
        conditions: status.conditions ?? [],
        live: contentHash(status),
      });
    }
  }

  /** Writes `full` unless it is what was written last; true when it was written. */
  private async patch(
    r: Resource,
    full: Status & { conditions: ConditionInput[] },
  ): Promise<boolean> {
    const key = resourceKey(r);
    const hash = contentHash(full);
    const last = this.written.get(key);
    if (last?.hash === hash) return false;
    const conditions = timed(full.conditions, last?.conditions, conditionTime());
    if (last?.live !== undefined && last.live === contentHash({ ...full, conditions })) {
      this.written.set(key, { hash, conditions });
      return false;
    }
    await this.client.mergePatch(
      statusRef(r),
      { status: { ...full, conditions } },
      { subresource: "status", fieldManager: this.fieldManager },
    );
    this.written.set(key, { hash, conditions });
    return true;
  }

  /** Why a resource's workloads are not rolled out, or undefined when they all are. */
  private rollout(
    keys: readonly string[],
    live: ReadonlyMap<string, LiveObject>,
  ): Rollout | undefined {
    let pending: Rollout | undefined;
    for (const k of keys) {
      const o = live.get(k);
      const state = o !== undefined ? rolloutState(o) : { done: false, message: "not found" };
      const message = `${workloadName(k)}: ${state.message}`;
      if ("failed" in state && state.failed !== undefined) {
        return { reason: state.failed, message, failed: true };
      }
      if (!state.done) pending ??= { reason: "RolloutTimeout", message, failed: false };
    }
    return pending;
  }

  /**
   * Marks resources Stalled, once per distinct message: a failed apply, or a revision that was
   * not applied (invalid, refused), which leaves them at the revision in place. Sent with
   * server-side apply on the status subresource: the conditions are a list keyed by type, so
   * Stalled and Reconciling are merged in and Ready and the others stay as they are, without
   * reading each resource first.
   */
  async stalled(resources: readonly ResourceRef[], reason: string, failure: string): Promise<void> {
    // Every resource carries it: a long failure is cut, so statuses stay small.
    const message = clipBytes(failure, STALLED_MESSAGE_BYTES);
    const hash = contentHash({ reason, message });
    await eachLimit(resources, STATUS_WRITES_IN_FLIGHT, async (r) => {
      const key = objectKey(r);
      const last = this.written.get(key);
      if (last?.hash === hash) return;
      const stalled = timed(
        [
          condition("Stalled", "True", reason, message),
          condition("Reconciling", "False", reason, message),
        ],
        last?.conditions,
        conditionTime(),
      );
      try {
        await this.client.apply(
          { ...statusRef(r), status: { conditions: stalled } },
          { subresource: "status", fieldManager: this.fieldManager },
        );
      } catch {
        return; // not there yet, or not served: the Event and the controller status say it
      }
      const conditions = stalled.reduce(setCondition, last?.conditions ?? []);
      this.written.set(key, { hash, conditions });
    });
  }
}

/** Records a Warning Event (core v1) about an object. Never throws. */
export async function warningEvent(
  client: KubeClient,
  involved: { apiVersion: string; kind: string; name: string; namespace?: string; uid?: string },
  reason: string,
  message: string,
  fallbackNamespace: string,
): Promise<void> {
  const namespace = involved.namespace ?? fallbackNamespace;
  const now = new Date().toISOString();
  try {
    await client.create({
      apiVersion: "v1",
      kind: "Event",
      metadata: {
        name: `${involved.name}.${Date.now().toString(16)}${Math.floor(Math.random() * 1e6).toString(16)}`,
        namespace,
      },
      involvedObject: involved,
      reason,
      message: clipBytes(message, EVENT_MESSAGE_BYTES),
      type: "Warning",
      source: { component: "mcpfleet-controller" },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
  } catch {
    /* events are best effort */
  }
}

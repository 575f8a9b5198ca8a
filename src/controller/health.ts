// Whether the Deployments and StatefulSets a revision applied have rolled out, read the way
// `kubectl rollout status` reads them: the controller-manager has seen the latest generation, every
// replica runs the new template and is available (ready, for a StatefulSet), and no old replica
// is left. A Deployment whose progress deadline passed has failed; anything else not done yet is
// still progressing. After an apply the controller waits a bounded time for all of them.
import { MANAGED_BY_LABEL } from "./cluster-plan.js";
import { objectKey } from "./revision-plan.js";
import type { KubeClient, LiveObject } from "../infra/kube/client.js";
import type { LiveCondition } from "./conditions.js";

export const ROLLOUT_KINDS: ReadonlySet<string> = new Set(["Deployment", "StatefulSet"]);

export interface RolloutState {
  done: boolean;
  /** Set when the rollout will not finish by itself (ProgressDeadlineExceeded). */
  failed?: string;
  message: string;
}

interface WorkloadStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  conditions?: LiveCondition[];
}

interface WorkloadSpec {
  replicas?: number;
  updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
}

const progressing = (message: string): RolloutState => ({ done: false, message });

/** The rollout state of a live Deployment or StatefulSet. */
export function rolloutState(live: LiveObject): RolloutState {
  const status = (live.status ?? {}) as WorkloadStatus;
  const spec = (live.spec ?? {}) as WorkloadSpec;
  const want = spec.replicas ?? 1;
  const generation = live.metadata.generation ?? 0;
  if ((status.observedGeneration ?? 0) < generation) {
    return progressing(`generation ${generation} not observed yet`);
  }
  const updated = status.updatedReplicas ?? 0;
  if (live.kind === "Deployment") {
    const stuck = status.conditions?.find(
      (c) => c.type === "Progressing" && c.reason === "ProgressDeadlineExceeded",
    );
    if (stuck !== undefined) {
      return {
        done: false,
        failed: "ProgressDeadlineExceeded",
        message: stuck.message ?? "progress deadline exceeded",
      };
    }
    if (updated < want) return progressing(`${updated} of ${want} replicas updated`);
    if ((status.replicas ?? 0) > updated) {
      return progressing(`${(status.replicas ?? 0) - updated} old replicas pending termination`);
    }
    const available = status.availableReplicas ?? 0;
    if (available < updated) return progressing(`${available} of ${updated} replicas available`);
    return { done: true, message: `${available} replica(s) available` };
  }
  const ready = status.readyReplicas ?? 0;
  if (ready < want) return progressing(`${ready} of ${want} replicas ready`);
  if (spec.updateStrategy?.type === "OnDelete") {
    return { done: true, message: `${ready} replica(s) ready` };
  }
  const partition = spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  if (partition > 0) {
    const expected = Math.max(0, want - partition);
    if (updated < expected) return progressing(`${updated} of ${expected} replicas updated`);
  } else if (
    status.updateRevision !== undefined &&
    status.currentRevision !== status.updateRevision
  ) {
    return progressing(`${updated} of ${want} replicas updated`);
  }
  return { done: true, message: `${ready} replica(s) ready` };
}

/** `Deployment ns/name` of an object key (`apps/Deployment/ns/name`). */
export function workloadName(key: string): string {
  const [, kind, namespace, name] = key.split("/");
  return `${kind} ${namespace}/${name}`;
}

/** Our Deployments and StatefulSets in `namespaces`, by object key: one list per namespace and kind. */
export async function observeWorkloads(
  client: KubeClient,
  namespaces: Iterable<string>,
): Promise<Map<string, LiveObject>> {
  const out = new Map<string, LiveObject>();
  for (const namespace of new Set(namespaces)) {
    for (const kind of ROLLOUT_KINDS) {
      const items = await client.list("apps/v1", kind, {
        namespace,
        labelSelector: `${MANAGED_BY_LABEL}=mcpfleet`,
      });
      for (const o of items) out.set(objectKey(o), o);
    }
  }
  return out;
}

export interface WaitOptions {
  timeoutMs: number;
  /** Between reads (default 1 s). */
  pollMs?: number;
  /** Ends the wait early (SIGTERM, lost leadership): what is not done yet is reported so. */
  stopping?: () => boolean;
}

/**
 * Waits until every workload (by object key, with its namespace) has rolled out or failed, or the
 * time is up; returns each one's last state (a workload not found is still progressing).
 */
export async function waitForRollout(
  client: KubeClient,
  workloads: readonly { key: string; namespace: string }[],
  opts: WaitOptions,
): Promise<Map<string, RolloutState>> {
  const deadline = Date.now() + opts.timeoutMs;
  const states = new Map<string, RolloutState>();
  for (;;) {
    const live = await observeWorkloads(
      client,
      workloads.map((w) => w.namespace),
    );
    for (const w of workloads) {
      const o = live.get(w.key);
      states.set(w.key, o !== undefined ? rolloutState(o) : progressing("not found"));
    }
    const settled = [...states.values()].every((s) => s.done || s.failed !== undefined);
    if (settled || Date.now() >= deadline || opts.stopping?.() === true) return states;
    await new Promise((r) =>
      setTimeout(r, Math.min(opts.pollMs ?? 1000, Math.max(0, deadline - Date.now()))),
    );
  }
}

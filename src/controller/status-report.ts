// What `mcpfleet status` shows, read from the cluster alone: the status the controller recorded
// on its inventory (applied and attempted revision, last error, last handled reconcile request),
// the suspend and reconcile annotations, and the readiness of every custom resource the inventory
// lists, from its live Ready condition (one list per kind and namespace, however many resources).
import { API_GROUP, isKind } from "../schema/kinds.js";
import { objectKey } from "./revision-plan.js";
import { type InventoryEntry, InventoryStore, inventoryName } from "./inventory.js";
import type { LiveObject } from "../infra/kube/client.js";
import {
  type ControllerObject,
  inventoryRef,
  noController,
  recordedStatusOf,
  requestsOf,
} from "./operations.js";
import type { SyncError } from "./status.js";
import type { LiveCondition } from "./conditions.js";

export type Readiness = "True" | "False" | "Unknown";

export interface ResourceReadiness {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  ready: Readiness;
  reason?: string;
  message?: string;
  phase?: string;
  /** The reason of a `Stalled=True` condition: the controller cannot bring it to the revision. */
  stalled?: string;
}

export interface StatusReport {
  inventory: string;
  namespace: string;
  /** The ref the controller follows; null when it has recorded no status (an older version). */
  ref: string | null;
  suspended: boolean;
  /** A revision is applied and the last sync did not fail (Flux's Ready condition). */
  ready: boolean;
  lastAppliedRevision: string | null;
  lastAppliedAt: string | null;
  lastAttemptedRevision: string | null;
  lastError: SyncError | null;
  reconcileRequestedAt: string | null;
  lastHandledReconcileAt: string | null;
  /** Objects in the inventory. */
  objects: number;
  resources: ResourceReadiness[];
}

/** A resource's readiness from its live object (undefined: not in the cluster). */
export function readinessOf(
  entry: InventoryEntry,
  live: LiveObject | undefined,
): ResourceReadiness {
  const id = {
    apiVersion: entry.apiVersion,
    kind: entry.kind,
    ...(entry.namespace !== undefined ? { namespace: entry.namespace } : {}),
    name: entry.name,
  };
  if (live === undefined) {
    return { ...id, ready: "False", reason: "NotFound", message: "not in the cluster" };
  }
  const status = (live as { status?: { phase?: string; conditions?: LiveCondition[] } }).status;
  const stalled = status?.conditions?.find((c) => c.type === "Stalled" && c.status === "True");
  const phase = {
    ...(status?.phase !== undefined ? { phase: status.phase } : {}),
    ...(stalled?.reason !== undefined ? { stalled: stalled.reason } : {}),
  };
  const condition = status?.conditions?.find((c) => c.type === "Ready");
  if (condition === undefined) {
    return { ...id, ...phase, ready: "Unknown", reason: "NoStatus", message: "no Ready condition" };
  }
  const generation = live.metadata.generation;
  // A condition about an older generation says nothing of the spec now in place.
  if (
    condition.observedGeneration !== undefined &&
    generation !== undefined &&
    condition.observedGeneration < generation
  ) {
    return {
      ...id,
      ...phase,
      ready: "Unknown",
      reason: "Progressing",
      message: `generation ${generation} not observed yet`,
    };
  }
  const ready: Readiness =
    condition.status === "True" ? "True" : condition.status === "False" ? "False" : "Unknown";
  return {
    ...id,
    ...phase,
    ready,
    ...(condition.reason !== undefined ? { reason: condition.reason } : {}),
    ...(condition.message !== undefined ? { message: condition.message } : {}),
  };
}

/** The readiness of the inventory's custom resources, listed per kind and namespace. */
async function resourcesOf(
  target: ControllerObject,
  entries: ReadonlyMap<string, InventoryEntry>,
): Promise<ResourceReadiness[]> {
  const ours = [...entries.values()].filter(
    (e) => isKind(e.kind) && e.apiVersion.startsWith(`${API_GROUP}/`),
  );
  const groups = new Map<string, InventoryEntry[]>();
  for (const e of ours) {
    const key = `${e.apiVersion}\n${e.kind}\n${e.namespace ?? ""}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const out: ResourceReadiness[] = [];
  for (const group of groups.values()) {
    const first = group[0]!;
    const live = new Map(
      (
        await target.client.list(first.apiVersion, first.kind, {
          ...(first.namespace !== undefined ? { namespace: first.namespace } : {}),
        })
      ).map((o) => [objectKey(o), o]),
    );
    for (const e of group) {
      out.push(readinessOf(e, live.get(objectKey({ ...e, metadata: e }))));
    }
  }
  const order = (r: ResourceReadiness) => `${r.kind}\n${r.namespace ?? ""}\n${r.name}`;
  return out.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}

export async function readStatusReport(target: ControllerObject): Promise<StatusReport> {
  const live = await target.client.get(inventoryRef(target));
  if (live === undefined) throw noController(target);
  const inventory = await new InventoryStore(target.client, {
    name: inventoryName(target.fieldManager),
    namespace: target.namespace,
    fieldManager: target.fieldManager,
  }).read();
  const entries = inventory?.entries ?? new Map<string, InventoryEntry>();
  const recorded = recordedStatusOf(live);
  const requests = requestsOf(live.metadata.annotations);
  const applied =
    inventory?.revision !== undefined && inventory.revision !== "" ? inventory.revision : null;
  return {
    inventory: inventoryName(target.fieldManager),
    namespace: target.namespace,
    ref: recorded?.ref ?? null,
    suspended: requests.suspended,
    ready: (recorded?.ready ?? applied !== null) && (recorded?.lastError ?? null) === null,
    lastAppliedRevision: recorded?.lastAppliedRevision ?? applied,
    lastAppliedAt: recorded?.lastAppliedAt ?? null,
    lastAttemptedRevision: recorded?.lastAttemptedRevision ?? null,
    lastError: recorded?.lastError ?? null,
    reconcileRequestedAt: requests.requestedAt ?? null,
    lastHandledReconcileAt: recorded?.lastHandledReconcileAt ?? null,
    objects: entries.size,
    resources: await resourcesOf(target, entries),
  };
}

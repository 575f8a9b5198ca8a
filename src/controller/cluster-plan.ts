// The revision plan as the cluster target applies it: the stages its options select, every
// object but our CRDs marked with the managed-by label and our field manager's annotation (prune
// checks the annotation before deleting anything). Admission came before, on the plan itself
// (revision-plan.ts admitPlan), the same for every target. Also the rules
// apply, its dry run and diff share for owner references and the prune set.
import { contentHash } from "../synth/hash.js";
import { MANAGED_BY } from "../synth/labels.js";
import type { KubeObject } from "../synth/model.js";
import type { InventoryEntry } from "./inventory.js";
import type { LiveObject } from "../infra/kube/client.js";
import { type PlannedObject, type RevisionPlan, planOf } from "./revision-plan.js";

/** Annotation on every object the controller applies: the field manager that applied it. */
export const APPLIED_BY = "mcpfleet.dev/applied-by";
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";

/** Kinds never pruned: deleting one deletes everything in it. */
export const NEVER_PRUNED: ReadonlySet<string> = new Set(["CustomResourceDefinition", "Namespace"]);

function marked(o: KubeObject, fieldManager: string): KubeObject {
  return {
    ...o,
    metadata: {
      ...o.metadata,
      labels: { ...o.metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY },
      annotations: { ...o.metadata.annotations, [APPLIED_BY]: fieldManager },
    },
  };
}

/**
 * What the cluster target sends of a plan: CRDs and Namespaces unless `crds`/`namespaces` is
 * false, everything but the CRDs (which come with the controller) marked.
 */
export function clusterPlan(
  plan: RevisionPlan,
  opts: {
    fieldManager: string;
    crds?: boolean;
    namespaces?: boolean;
  },
): RevisionPlan {
  const objects = plan.objects
    .filter((p) => !(p.stage === "crds" && opts.crds === false))
    .filter((p) => !(p.stage === "namespaces" && opts.namespaces === false))
    .map((p) => (p.stage === "crds" ? p : { ...p, object: marked(p.object, opts.fieldManager) }));
  return planOf(plan.resources, objects);
}

/** The object with its owner reference, as sent; the hash of what is sent decides re-sending. */
export function withOwner(
  o: KubeObject,
  owner: { apiVersion: string; kind: string; name: string; uid: string } | undefined,
): KubeObject {
  if (owner === undefined) return o;
  return {
    ...o,
    metadata: {
      ...o.metadata,
      ownerReferences: [
        {
          apiVersion: owner.apiVersion,
          kind: owner.kind,
          name: owner.name,
          uid: owner.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
  };
}

export function objectHash(o: KubeObject): string {
  return contentHash(o).slice(0, 32);
}

/** An object reference of an inventory entry (what prune reads and deletes). */
export function entryRef(e: InventoryEntry): KubeObject {
  return {
    apiVersion: e.apiVersion,
    kind: e.kind,
    metadata: { name: e.name, ...(e.namespace !== undefined ? { namespace: e.namespace } : {}) },
  };
}

/**
 * What prune may delete: entries of the previous inventory the plan no longer holds, never a CRD
 * or a Namespace, in reverse apply order (workloads, other objects, custom resources last).
 */
export function pruneCandidates(
  previous: ReadonlyMap<string, InventoryEntry>,
  planned: { has(key: string): boolean },
): [string, InventoryEntry][] {
  const order = (e: InventoryEntry) =>
    e.kind === "Deployment" || e.kind === "StatefulSet"
      ? 0
      : e.apiVersion.includes("toolhive")
        ? 2
        : 1;
  return [...previous]
    .filter(([k, e]) => !planned.has(k) && !NEVER_PRUNED.has(e.kind))
    .sort((a, b) => order(a[1]) - order(b[1]));
}

/** Prune deletes a live object only while it carries our marker with this field manager. */
export function appliedByUs(live: LiveObject, fieldManager: string): boolean {
  return live.metadata.annotations?.[APPLIED_BY] === fieldManager;
}

/** The owner reference a planned object is sent with, once its owner's uid is known. */
export function ownerOfPlanned(
  p: PlannedObject,
  known: (
    key: string,
  ) => { apiVersion: string; kind: string; name: string; uid?: string } | undefined,
): { apiVersion: string; kind: string; name: string; uid: string } | undefined {
  if (p.owner === undefined) return undefined;
  const e = known(p.owner);
  if (e?.uid === undefined) return undefined;
  return { apiVersion: e.apiVersion, kind: e.kind, name: e.name, uid: e.uid };
}

// What the cluster target applies for one revision, in which order: our CRDs and the Namespaces
// the resources live in, then configuration kinds, then the other custom resources, then the
// workloads synthesized for them (each owned by its custom resource, so Kubernetes collects it
// when the resource goes). Every object but the CRDs carries our marker annotation, which prune
// checks before deleting anything.
import { RENDERERS } from "../synth/constructs/index.js";
import { contentHash } from "../synth/hash.js";
import { crdObjects } from "../synth/install.js";
import { MANAGED_BY } from "../synth/labels.js";
import type { KubeObject, Resource } from "../synth/model.js";
import { KINDS } from "../schema/kinds.js";
import { type AdmissionCheck, AdmissionRefusedError, admit } from "./admission.js";
import type { InventoryEntry } from "./inventory.js";
import type { LiveObject } from "./kube-client.js";
import { storedSpec } from "./stored-form.js";

/** Annotation on every object the controller applies: the field manager that applied it. */
export const APPLIED_BY = "mcpfleet.dev/applied-by";
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";

export type Stage = "crds" | "namespaces" | "config" | "resources" | "workloads";
export const STAGES: readonly Stage[] = ["crds", "namespaces", "config", "resources", "workloads"];

/** Kinds never pruned: deleting one deletes everything in it. */
export const NEVER_PRUNED: ReadonlySet<string> = new Set(["CustomResourceDefinition", "Namespace"]);

export function objectKey(o: {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}): string {
  const group = o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : "";
  return `${group}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
}

export function resourceKey(r: Resource): string {
  return objectKey(r);
}

export interface PlannedObject {
  key: string;
  stage: Stage;
  object: KubeObject;
  /** Key of the custom resource owning a workload. */
  owner?: string;
}

/** Which resource (by key) each rendered object (by key) belongs to, from what synthesis says. */
export function ownerKeys(owners: ReadonlyMap<KubeObject, Resource>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [o, r] of owners) out.set(objectKey(o), resourceKey(r));
  return out;
}

const WORKLOAD_KINDS: ReadonlySet<string> = new Set(Object.keys(RENDERERS));

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

/** The resource as applied: what the repository says, without server-populated fields. */
export function resourceObject(r: Resource): KubeObject {
  const { status: _status, metadata, ...rest } = r;
  void _status;
  const m = metadata as unknown as Record<string, unknown>;
  return {
    ...(rest as Omit<KubeObject, "metadata">),
    ...("spec" in rest ? { spec: storedSpec(rest.spec) } : {}),
    apiVersion: r.apiVersion,
    kind: r.kind,
    metadata: {
      name: r.metadata.name,
      namespace: r.metadata.namespace,
      ...(m.labels !== undefined ? { labels: m.labels as Record<string, string> } : {}),
      ...(m.annotations !== undefined
        ? { annotations: m.annotations as Record<string, string> }
        : {}),
    },
  };
}

/** Every object of a revision, in apply order. CRDs are included unless `crds` is false. */
export function planObjects(
  resources: readonly Resource[],
  objects: readonly KubeObject[],
  owners: ReadonlyMap<string, string>,
  opts: { fieldManager: string; crds?: boolean; namespaces?: boolean },
): PlannedObject[] {
  const out: PlannedObject[] = [];
  if (opts.crds !== false) {
    for (const crd of crdObjects()) out.push({ key: objectKey(crd), stage: "crds", object: crd });
  }
  const namespaces =
    opts.namespaces === false
      ? []
      : [...new Set(resources.map((r) => r.metadata.namespace))].sort();
  for (const name of namespaces) {
    const ns: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name } };
    out.push({ key: objectKey(ns), stage: "namespaces", object: marked(ns, opts.fieldManager) });
  }
  const byKind = (a: Resource, b: Resource) =>
    KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) ||
    a.metadata.namespace.localeCompare(b.metadata.namespace) ||
    a.metadata.name.localeCompare(b.metadata.name);
  for (const r of [...resources].sort(byKind)) {
    out.push({
      key: resourceKey(r),
      stage: WORKLOAD_KINDS.has(r.kind) ? "resources" : "config",
      object: marked(resourceObject(r), opts.fieldManager),
    });
  }
  out.sort((a, b) => STAGES.indexOf(a.stage) - STAGES.indexOf(b.stage));
  for (const o of objects) {
    const key = objectKey(o);
    const owner = owners.get(key);
    out.push({
      key,
      stage: "workloads",
      object: marked(o, opts.fieldManager),
      ...(owner !== undefined ? { owner } : {}),
    });
  }
  return out;
}

/**
 * One revision as the cluster target applies it, built once and consumed by apply, its dry run and
 * diff: every object in apply order with its stage and owner, after the admission checks.
 */
export interface RevisionPlan {
  objects: readonly PlannedObject[];
  /** Keys of the planned objects: the previous inventory's other entries are the prune set. */
  keys: ReadonlySet<string>;
}

/** Plans a revision; throws AdmissionRefusedError when a check refuses any of its objects. */
export function planRevision(
  resources: readonly Resource[],
  objects: readonly KubeObject[],
  owners: ReadonlyMap<string, string>,
  opts: {
    fieldManager: string;
    crds?: boolean;
    namespaces?: boolean;
    admission?: readonly AdmissionCheck[];
  },
): RevisionPlan {
  const planned = planObjects(resources, objects, owners, opts);
  const refusals = admit(planned, opts.admission ?? []);
  if (refusals.length > 0) throw new AdmissionRefusedError(refusals);
  return { objects: planned, keys: new Set(planned.map((p) => p.key)) };
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

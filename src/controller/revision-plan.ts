// One revision as every target consumes it, built once after validation and synthesis: the
// validated resources, and every object in apply order (our CRDs, the Namespaces the resources
// live in, configuration kinds, the other custom resources, then the workloads synthesized for
// them) with its key, stage and owning resource. Objects are as rendered: what a target adds when
// it sends them (the cluster target's marker) is the target's business.
import { RENDERERS } from "../synth/constructs/index.js";
import { crdObjects } from "../synth/install.js";
import type { KubeObject, Resource } from "../synth/model.js";
import { KINDS } from "../schema/kinds.js";
import type { AdmissionCheck, Refusal } from "./admission.js";
import { storedSpec } from "./stored-form.js";

/** The steps a plan is applied in, in order (not a sync's steps: see status.ts's SyncStage). */
export type ApplyStage = "crds" | "namespaces" | "config" | "resources" | "workloads";
export const STAGES: readonly ApplyStage[] = [
  "crds",
  "namespaces",
  "config",
  "resources",
  "workloads",
];

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

/** `Kind namespace/name` (cluster-scoped: `Kind name`), as logs and messages name an object. */
export function objectName(o: KubeObject): string {
  const ns = o.metadata.namespace;
  return ns !== undefined && ns !== ""
    ? `${o.kind} ${ns}/${o.metadata.name}`
    : `${o.kind} ${o.metadata.name}`;
}

export interface PlannedObject {
  key: string;
  stage: ApplyStage;
  object: KubeObject;
  /** Key of the custom resource owning a workload. */
  owner?: string;
}

export interface RevisionPlan {
  /** The validated resources the objects were rendered from. */
  resources: readonly Resource[];
  /** Every object in apply order. */
  objects: readonly PlannedObject[];
  /** Keys of `objects`: the previous inventory's other entries are the prune set. */
  keys: ReadonlySet<string>;
}

const WORKLOAD_KINDS: ReadonlySet<string> = new Set(Object.keys(RENDERERS));

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

/** A plan of these objects (kept in the order given), with its key set. */
export function planOf(
  resources: readonly Resource[],
  objects: readonly PlannedObject[],
): RevisionPlan {
  return { resources, objects, keys: new Set(objects.map((p) => p.key)) };
}

/**
 * The plan of validated resources and what synthesis rendered for them: `owners` is synthesis's
 * word on which resource each object belongs to; the workloads keep synthesis's order.
 */
export function planRevision(
  resources: readonly Resource[],
  rendered: { objects: readonly KubeObject[]; owners: ReadonlyMap<KubeObject, Resource> },
): RevisionPlan {
  const out: PlannedObject[] = crdObjects().map((crd) => ({
    key: objectKey(crd),
    stage: "crds",
    object: crd,
  }));
  for (const name of [...new Set(resources.map((r) => r.metadata.namespace))].sort()) {
    const ns: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name } };
    out.push({ key: objectKey(ns), stage: "namespaces", object: ns });
  }
  const byKind = (a: Resource, b: Resource) =>
    KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) ||
    a.metadata.namespace.localeCompare(b.metadata.namespace) ||
    a.metadata.name.localeCompare(b.metadata.name);
  for (const r of [...resources].sort(byKind)) {
    out.push({
      key: resourceKey(r),
      stage: WORKLOAD_KINDS.has(r.kind) ? "resources" : "config",
      object: resourceObject(r),
    });
  }
  // Configuration kinds before the custom resources that refer to them (a stable sort).
  out.sort((a, b) => STAGES.indexOf(a.stage) - STAGES.indexOf(b.stage));
  const owners = new Map([...rendered.owners].map(([o, r]) => [objectKey(o), resourceKey(r)]));
  for (const o of rendered.objects) {
    const key = objectKey(o);
    const owner = owners.get(key);
    out.push({ key, stage: "workloads", object: o, ...(owner !== undefined ? { owner } : {}) });
  }
  return planOf(resources, out);
}

/** The workloads of the plan, in apply order (what the directory target writes). */
export function planWorkloads(plan: RevisionPlan): KubeObject[] {
  return plan.objects.filter((p) => p.stage === "workloads").map((p) => p.object);
}

/** Which resource (by key) each owned object (by key) belongs to. */
export function planOwners(plan: RevisionPlan): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of plan.objects) if (p.owner !== undefined) out.set(p.key, p.owner);
  return out;
}

/** The plan without the objects owned by these resources (by key); the resources stay. */
export function withoutOwnedBy(plan: RevisionPlan, owners: ReadonlySet<string>): RevisionPlan {
  if (owners.size === 0) return plan;
  return planOf(
    plan.resources,
    plan.objects.filter((p) => p.owner === undefined || !owners.has(p.owner)),
  );
}

/**
 * Admission, decided once per revision whatever the target: every refusal of every check (see
 * admission.ts), in plan order. What the plan derives from a refused resource (its workloads, the
 * Namespace it lives in) is not named again: one line per thing the author wrote. Any refusal
 * refuses the whole revision, so a commit is applied entirely or not at all.
 */
export function admitPlan(plan: RevisionPlan, checks: readonly AdmissionCheck[]): Refusal[] {
  if (checks.length === 0) return [];
  const found: { p: PlannedObject; reason: string }[] = [];
  for (const p of plan.objects) {
    for (const check of checks) {
      const reason = check(p.object);
      if (reason !== undefined) found.push({ p, reason });
    }
  }
  const refused = new Set(found.filter((f) => f.p.stage !== "namespaces").map((f) => f.p.key));
  const namespaces = new Set(
    found.filter((f) => refused.has(f.p.key)).map((f) => f.p.object.metadata.namespace),
  );
  return found
    .filter(({ p }) => !(p.owner !== undefined && refused.has(p.owner)))
    .filter(({ p }) => !(p.stage === "namespaces" && namespaces.has(p.object.metadata.name)))
    .map(({ p, reason }) => ({ object: objectName(p.object), reason }));
}

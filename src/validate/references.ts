// The reference level: rules over the whole set of resources given. A reference names an
// existing resource of the right kind in the same namespace; kind/namespace/name is unique; an
// MCPServer and an MCPRemoteProxy do not share a name; OIDC audiences are unique per server.
// It works on the facts taken from each resource when it was read (reference-facts.ts).
import type { Kind } from "../schema/kinds.js";
import { type AudienceUse, type ResourceFacts, referencePointer } from "./reference-facts.js";
import { WORKLOAD_KINDS } from "./reference-table.js";
import { type IssueTarget, addIssue, resourceLabel } from "./resource.js";

/** A resource of one of our kinds that has a name: what references can point at. */
export interface OwnResource extends ResourceFacts {
  /** Where its issues go. */
  at: IssueTarget;
}

export interface ReferenceOptions {
  allowMissingRefs: boolean;
}

function where(r: OwnResource): string {
  return `${r.at.result.file}:${r.at.result.line}`;
}

/** Map of maps that creates the inner map on first use. */
function inner<K, V>(outer: Map<K, V>, k: K, create: () => V): V {
  let v = outer.get(k);
  if (v === undefined) {
    v = create();
    outer.set(k, v);
  }
  return v;
}

/** Resources by namespace, kind and name (nested maps: no key strings built per lookup). */
export class ResourceIndex {
  private readonly byNamespace = new Map<string, Map<Kind, Map<string, OwnResource[]>>>();

  constructor(readonly resources: readonly OwnResource[]) {
    for (const r of resources) {
      const byKind = inner(
        this.byNamespace,
        r.namespace,
        () => new Map<Kind, Map<string, OwnResource[]>>(),
      );
      const byName = inner(byKind, r.kind, () => new Map<string, OwnResource[]>());
      inner(byName, r.name, (): OwnResource[] => []).push(r);
    }
  }

  get(kind: Kind, namespace: string, name: string): OwnResource | undefined {
    return this.byNamespace.get(namespace)?.get(kind)?.get(name)?.[0];
  }

  *groups(): Iterable<OwnResource[]> {
    for (const byKind of this.byNamespace.values()) {
      for (const byName of byKind.values()) yield* byName.values();
    }
  }
}

/** Runs every reference-level rule and attaches the issues to the resources' results. */
export function checkReferences(
  resources: readonly OwnResource[],
  options: ReferenceOptions,
): void {
  const index = new ResourceIndex(resources);
  checkDuplicates(index);
  checkWorkloadCollisions(resources);
  const missing = options.allowMissingRefs ? "warning" : "error";
  for (const r of resources) {
    checkNamedReferences(r, index, missing);
    checkWorkloadNames(r, index, missing);
  }
  checkAudiences(resources, index);
}

function checkDuplicates(index: ResourceIndex): void {
  for (const group of index.groups()) {
    const [first, ...rest] = group;
    if (first === undefined) continue;
    for (const dup of rest) {
      addIssue(
        dup.at,
        "/metadata/name",
        `duplicate ${dup.kind} ${dup.namespace}/${dup.name}: also defined at ${where(first)}`,
        "reference",
      );
    }
  }
}

/**
 * Objects created for a resource that a resource of another kind could also create: workloads,
 * Services and run-configuration ConfigMaps (names as src/synth renders them, after the
 * reference operator).
 */
const CHILD_OBJECTS: Partial<Record<Kind, (name: string) => string[]>> = {
  MCPServer: (n) => [`Deployment ${n}`, `ConfigMap ${n}-runconfig`, `Service mcp-${n}-proxy`],
  MCPRemoteProxy: (n) => [
    `Deployment ${n}`,
    `ConfigMap ${n}-runconfig`,
    `Service mcp-${n}-remote-proxy`,
  ],
  VirtualMCPServer: (n) => [`Deployment ${n}`, `ConfigMap ${n}-vmcp-config`, `Service vmcp-${n}`],
  MCPRegistry: (n) => [`Deployment ${n}-api`, `Service ${n}-api`],
  EmbeddingServer: (n) => [`StatefulSet ${n}`, `Service ${n}`],
};

/**
 * Two resources that would create the same object collide: an MCPServer and an MCPRemoteProxy
 * of one name share a Deployment and ConfigMap (the reference operator does not guard it), a
 * VirtualMCPServer's Deployment takes its own name too, an MCPRegistry's is `<name>-api`.
 */
function checkWorkloadCollisions(resources: readonly OwnResource[]): void {
  const byNamespace = new Map<string, Map<string, OwnResource[]>>();
  for (const r of resources) {
    const children = CHILD_OBJECTS[r.kind]?.(r.name);
    if (children === undefined) continue;
    const owners = inner(byNamespace, r.namespace, () => new Map<string, OwnResource[]>());
    for (const child of children) {
      const list = owners.get(child);
      if (list === undefined) owners.set(child, [r]);
      else if (!list.some((o) => o.kind === r.kind && o.name === r.name)) list.push(r);
    }
  }
  const collisions: [string, OwnResource[]][] = [];
  for (const owners of byNamespace.values()) {
    for (const entry of owners) if (entry[1].length > 1) collisions.push(entry);
  }
  const reported = new Map<OwnResource, Map<OwnResource, string[]>>();
  for (const [child, list] of collisions) {
    for (const r of list) {
      for (const other of list) {
        if (other === r) continue;
        const byOther = reported.get(r) ?? new Map<OwnResource, string[]>();
        reported.set(r, byOther);
        byOther.set(other, [...(byOther.get(other) ?? []), child]);
      }
    }
  }
  for (const [r, byOther] of reported) {
    for (const [other, children] of byOther) {
      const objects = children.map((c) => c.replace(" ", ' "') + '"').join(" and the ");
      addIssue(
        r.at,
        "/metadata/name",
        `${r.kind} ${r.namespace}/${r.name} and ${other.kind} ${other.namespace}/${other.name} ` +
          `(${where(other)}) would both create the ${objects}`,
        "reference",
      );
    }
  }
}

function checkNamedReferences(
  r: OwnResource,
  index: ResourceIndex,
  missing: "error" | "warning",
): void {
  for (const ref of r.references) {
    const targets = ref.kind === undefined ? ref.pattern.targets : [ref.kind];
    if (targets.some((t) => index.get(t, r.namespace, ref.name) !== undefined)) continue;
    const field = ref.pattern.segments[ref.pattern.segments.length - 1] ?? "reference";
    addIssue(
      r.at,
      referencePointer(ref),
      `${field}: ${targets.join(" or ")} "${ref.name}" not found in namespace ${r.namespace}`,
      "reference",
      missing,
    );
  }
}

function checkWorkloadNames(
  r: OwnResource,
  index: ResourceIndex,
  missing: "error" | "warning",
): void {
  for (const n of r.workloads) {
    if (WORKLOAD_KINDS.some((k) => index.get(k, r.namespace, n.name) !== undefined)) continue;
    addIssue(
      r.at,
      n.pointer,
      `backend workload "${n.name}" not found: no ${WORKLOAD_KINDS.join(", ")} of that name in ` +
        `namespace ${r.namespace} and no static backend of that name`,
      "reference",
      missing,
      n.target,
    );
  }
}

/** Who issues the tokens an MCPOIDCConfig accepts; an unknown config counts as its own issuer. */
function issuerIdentity(index: ResourceIndex, namespace: string, configName: string): string {
  return index.get("MCPOIDCConfig", namespace, configName)?.issuer ?? `config ${configName}`;
}

/** Servers sharing an issuer and an audience accept each other's tokens (replay). */
function checkAudiences(resources: readonly OwnResource[], index: ResourceIndex): void {
  type Use = { r: OwnResource; use: AudienceUse };
  // namespace -> issuer -> audience -> uses
  const byNamespace = new Map<string, Map<string, Map<string, Use[]>>>();
  const groups: Use[][] = [];
  for (const r of resources) {
    for (const use of r.audiences) {
      const issuer = issuerIdentity(index, r.namespace, use.config);
      const byIssuer = inner(byNamespace, r.namespace, () => new Map<string, Map<string, Use[]>>());
      const byAudience = inner(byIssuer, issuer, () => new Map<string, Use[]>());
      const list = inner(byAudience, use.audience, () => {
        const created: Use[] = [];
        groups.push(created);
        return created;
      });
      list.push({ r, use });
    }
  }
  for (const list of groups) {
    if (list.length < 2) continue;
    for (const entry of list) {
      const others = list
        .filter((o) => o !== entry)
        .map((o) => `${resourceLabel(o.r)} (${where(o.r)})`);
      addIssue(
        entry.r.at,
        `${entry.use.at}/audience`,
        `audience "${entry.use.audience}" is also used by ${others.join(", ")} with the same issuer: ` +
          "each server needs its own audience, or a token for one is accepted by the other",
        "reference",
      );
    }
  }
}

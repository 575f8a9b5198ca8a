// The reference level: rules over the whole set of resources given. A reference names an
// existing resource of the right kind in the same namespace; kind/namespace/name is unique; an
// MCPServer and an MCPRemoteProxy do not share a name; OIDC audiences are unique per server.
// It works on the facts taken from each resource when it was read (reference-facts.ts).
import type { Kind } from "../schema/kinds.js";
import type { ResourceFacts } from "./reference-facts.js";
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

function key(kind: string, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}

function where(r: OwnResource): string {
  return `${r.at.result.file}:${r.at.result.line}`;
}

export class ResourceIndex {
  private readonly byKey = new Map<string, OwnResource[]>();

  constructor(readonly resources: readonly OwnResource[]) {
    for (const r of resources) {
      const k = key(r.kind, r.namespace, r.name);
      const list = this.byKey.get(k);
      if (list === undefined) this.byKey.set(k, [r]);
      else list.push(r);
    }
  }

  get(kind: Kind, namespace: string, name: string): OwnResource | undefined {
    return this.byKey.get(key(kind, namespace, name))?.[0];
  }

  groups(): Iterable<OwnResource[]> {
    return this.byKey.values();
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
  const owners = new Map<string, OwnResource[]>();
  for (const r of resources) {
    for (const child of CHILD_OBJECTS[r.kind]?.(r.name) ?? []) {
      const k = `${r.namespace}\u0000${child}`;
      const list = owners.get(k);
      if (list === undefined) owners.set(k, [r]);
      else if (!list.some((o) => o.kind === r.kind && o.name === r.name)) list.push(r);
    }
  }
  const reported = new Map<OwnResource, Map<OwnResource, string[]>>();
  for (const [k, list] of owners) {
    if (list.length < 2) continue;
    const child = k.slice(k.indexOf("\u0000") + 1);
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
    if (ref.targets.some((t) => index.get(t, r.namespace, ref.name) !== undefined)) continue;
    addIssue(
      r.at,
      ref.pointer,
      `${ref.field}: ${ref.targets.join(" or ")} "${ref.name}" not found in namespace ${r.namespace}`,
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
  const byAudience = new Map<string, { r: OwnResource; pointer: string; audience: string }[]>();
  for (const r of resources) {
    for (const use of r.audiences) {
      const issuer = issuerIdentity(index, r.namespace, use.config);
      const k = `${r.namespace}\u0000${issuer}\u0000${use.audience}`;
      const entry = { r, pointer: use.pointer, audience: use.audience };
      const list = byAudience.get(k);
      if (list === undefined) byAudience.set(k, [entry]);
      else list.push(entry);
    }
  }
  for (const list of byAudience.values()) {
    if (list.length < 2) continue;
    for (const entry of list) {
      const others = list
        .filter((o) => o !== entry)
        .map((o) => `${resourceLabel(o.r)} (${where(o.r)})`);
      addIssue(
        entry.r.at,
        entry.pointer,
        `audience "${entry.audience}" is also used by ${others.join(", ")} with the same issuer: ` +
          "each server needs its own audience, or a token for one is accepted by the other",
        "reference",
      );
    }
  }
}

// The reference level: rules over the whole set of resources given. A reference names an
// existing resource of the right kind in the same namespace; kind/namespace/name is unique; an
// MCPServer and an MCPRemoteProxy do not share a name; OIDC audiences are unique per server.
import type { Kind } from "../schema/kinds.js";
import {
  type ReferencePattern,
  WORKLOAD_KINDS,
  WORKLOAD_PATTERNS,
  type WorkloadPattern,
} from "./reference-table.js";
import { type Unit, addIssue, escapePointer, isObject, resourceLabel } from "./resource.js";

/** A resource of one of our kinds that has a name: what references can point at. */
export interface OwnResource {
  unit: Unit;
  kind: Kind;
  namespace: string;
  name: string;
}

export interface ReferenceOptions {
  allowMissingRefs: boolean;
}

function key(kind: string, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}

function where(unit: Unit): string {
  return `${unit.result.file}:${unit.result.line}`;
}

/** Values at `segments` (with `*` for any list item or map value), with their pointers. */
export function valuesAt(
  value: unknown,
  segments: readonly string[],
): { pointer: string; value: unknown }[] {
  let current: { pointer: string; value: unknown }[] = [{ pointer: "", value }];
  for (const segment of segments) {
    const next: { pointer: string; value: unknown }[] = [];
    for (const { pointer, value: v } of current) {
      if (segment === "*") {
        if (Array.isArray(v))
          v.forEach((item, i) => next.push({ pointer: `${pointer}/${i}`, value: item }));
        else if (isObject(v)) {
          for (const [k, item] of Object.entries(v)) {
            next.push({ pointer: `${pointer}/${escapePointer(k)}`, value: item });
          }
        }
      } else if (isObject(v) && Object.hasOwn(v, segment)) {
        next.push({ pointer: `${pointer}/${escapePointer(segment)}`, value: v[segment] });
      }
    }
    current = next;
    if (current.length === 0) break;
  }
  return current;
}

/** The name a reference value carries: a string, or an object's `name` (else undefined). */
function referencedName(value: unknown): { name: string; pointer: string } | undefined {
  if (typeof value === "string") return value === "" ? undefined : { name: value, pointer: "" };
  if (isObject(value) && typeof value.name === "string" && value.name !== "") {
    return { name: value.name, pointer: "/name" };
  }
  return undefined;
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

/** Runs every reference-level rule and attaches the issues to the units. */
export function checkReferences(
  resources: readonly OwnResource[],
  patterns: (kind: Kind) => readonly ReferencePattern[],
  options: ReferenceOptions,
): void {
  const index = new ResourceIndex(resources);
  checkDuplicates(index);
  checkWorkloadCollisions(resources);
  const missing = options.allowMissingRefs ? "warning" : "error";
  for (const r of resources) {
    for (const pattern of patterns(r.kind)) checkPattern(r, pattern, index, missing);
    const backends = new Map<string, Set<string>>();
    for (const pattern of WORKLOAD_PATTERNS[r.kind] ?? []) {
      checkWorkloadPattern(r, pattern, index, missing, backends);
    }
  }
  checkAudiences(resources, index);
}

function checkDuplicates(index: ResourceIndex): void {
  for (const group of index.groups()) {
    const [first, ...rest] = group;
    if (first === undefined) continue;
    for (const dup of rest) {
      addIssue(
        dup.unit,
        "/metadata/name",
        `duplicate ${dup.kind} ${dup.namespace}/${dup.name}: also defined at ${where(first.unit)}`,
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
        r.unit,
        "/metadata/name",
        `${r.kind} ${r.namespace}/${r.name} and ${other.kind} ${other.namespace}/${other.name} ` +
          `(${where(other.unit)}) would both create the ${objects}`,
        "reference",
      );
    }
  }
}

function checkPattern(
  r: OwnResource,
  pattern: ReferencePattern,
  index: ResourceIndex,
  missing: "error" | "warning",
): void {
  for (const found of valuesAt(r.unit.value, pattern.segments)) {
    const refs = pattern.list
      ? Array.isArray(found.value)
        ? found.value.map((v, i) => ({ value: v as unknown, pointer: `${found.pointer}/${i}` }))
        : []
      : [{ value: found.value, pointer: found.pointer }];
    for (const ref of refs) {
      const named = referencedName(ref.value);
      if (named === undefined) continue; // the schema level reports a malformed reference
      let targets = pattern.targets;
      if (isObject(ref.value) && typeof ref.value.kind === "string") {
        const k = ref.value.kind as Kind;
        if (!targets.includes(k)) continue; // the schema level reports a wrong kind
        targets = [k];
      }
      if (targets.some((t) => index.get(t, r.namespace, named.name) !== undefined)) continue;
      const field = pattern.segments[pattern.segments.length - 1] ?? "reference";
      addIssue(
        r.unit,
        ref.pointer + named.pointer,
        `${field}: ${targets.join(" or ")} "${named.name}" not found in namespace ${r.namespace}`,
        "reference",
        missing,
      );
    }
  }
}

/** Names of the static backends of the virtual-server configuration at `config`. */
function staticBackends(
  value: unknown,
  config: readonly string[],
  cache: Map<string, Set<string>>,
): Set<string> {
  const key = config.join("/");
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const names = new Set<string>();
  cache.set(key, names);
  for (const found of valuesAt(value, [...config, "backends", "*", "name"])) {
    if (typeof found.value === "string") names.add(found.value);
  }
  return names;
}

function checkWorkloadPattern(
  r: OwnResource,
  pattern: WorkloadPattern,
  index: ResourceIndex,
  missing: "error" | "warning",
  cache: Map<string, Set<string>>,
): void {
  const names: { name: string; pointer: string; target: "value" | "key" }[] = [];
  for (const found of valuesAt(r.unit.value, pattern.segments)) {
    if (pattern.form === "value" && typeof found.value === "string") {
      names.push({ name: found.value, pointer: found.pointer, target: "value" });
    } else if (pattern.form === "items" && Array.isArray(found.value)) {
      found.value.forEach((v, i) => {
        if (typeof v === "string")
          names.push({ name: v, pointer: `${found.pointer}/${i}`, target: "value" });
      });
    } else if (pattern.form === "keys" && isObject(found.value)) {
      for (const k of Object.keys(found.value)) {
        names.push({ name: k, pointer: `${found.pointer}/${escapePointer(k)}`, target: "key" });
      }
    }
  }
  if (names.length === 0) return;
  const backends = staticBackends(r.unit.value, pattern.config, cache);
  for (const n of names) {
    if (n.name === "" || backends.has(n.name)) continue;
    if (WORKLOAD_KINDS.some((k) => index.get(k, r.namespace, n.name) !== undefined)) continue;
    addIssue(
      r.unit,
      n.pointer,
      `backend workload "${n.name}" not found: no ${WORKLOAD_KINDS.join(", ")} of that name in ` +
        `namespace ${r.namespace} and no static backend of that name`,
      "reference",
      missing,
      n.target,
    );
  }
}

const OIDC_USERS: Partial<Record<Kind, string[]>> = {
  MCPServer: ["spec", "oidcConfigRef"],
  MCPRemoteProxy: ["spec", "oidcConfigRef"],
  VirtualMCPServer: ["spec", "incomingAuth", "oidcConfigRef"],
};

/**
 * Who issues the tokens an MCPOIDCConfig accepts: servers sharing an issuer and an audience
 * accept each other's tokens (replay). Unknown configs count as their own issuer.
 */
function issuerIdentity(index: ResourceIndex, namespace: string, configName: string): string {
  const config = index.get("MCPOIDCConfig", namespace, configName);
  const spec = isObject(config?.unit.value)
    ? (config.unit.value as { spec?: unknown }).spec
    : undefined;
  if (isObject(spec)) {
    if (spec.type === "inline" && isObject(spec.inline) && typeof spec.inline.issuer === "string") {
      return `issuer ${spec.inline.issuer}`;
    }
    if (spec.type === "kubernetesServiceAccount") {
      const k = spec.kubernetesServiceAccount;
      const issuer = isObject(k) && typeof k.issuer === "string" ? k.issuer : "";
      return `kubernetes ${issuer}`;
    }
  }
  return `config ${configName}`;
}

function checkAudiences(resources: readonly OwnResource[], index: ResourceIndex): void {
  const byAudience = new Map<string, { r: OwnResource; pointer: string; audience: string }[]>();
  for (const r of resources) {
    const path = OIDC_USERS[r.kind];
    if (path === undefined) continue;
    for (const found of valuesAt(r.unit.value, path)) {
      const ref = found.value;
      if (!isObject(ref) || typeof ref.audience !== "string" || typeof ref.name !== "string")
        continue;
      const k = `${r.namespace}\u0000${issuerIdentity(index, r.namespace, ref.name)}\u0000${ref.audience}`;
      const entry = { r, pointer: `${found.pointer}/audience`, audience: ref.audience };
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
        .map(
          (o) =>
            `${resourceLabel({ kind: o.r.kind, namespace: o.r.namespace, name: o.r.name })} (${where(o.r.unit)})`,
        );
      addIssue(
        entry.r.unit,
        entry.pointer,
        `audience "${entry.audience}" is also used by ${others.join(", ")} with the same issuer: ` +
          "each server needs its own audience, or a token for one is accepted by the other",
        "reference",
      );
    }
  }
}

// What the reference level needs of one resource, taken from its value as soon as the resource
// is read: the names it refers to, its backend workload names, the audiences it accepts and, for
// an MCPOIDCConfig, who issues its tokens. Only these few strings are kept for the checks across
// the whole set (references.ts), so a run does not hold every parsed document until its end.
import { type AuthFacts, authFactsOf } from "./auth-server-refs.js";
import type { Kind } from "../schema/kinds.js";
import {
  type ReferencePattern,
  WORKLOAD_PATTERNS,
  type WorkloadPattern,
} from "./reference-table.js";
import { escapeSegment, toPointer } from "../json-pointer.js";
import { isObject } from "../json.js";
import type { LocateTarget, Position } from "../yaml/model.js";
import { detached } from "../yaml/values.js";

/** A name one of our resources must exist under (in the referring resource's namespace). */
export interface NamedReference {
  name: string;
  /** Pointer of the reference; its name is at `/name` below it when `inObject`. */
  at: string;
  inObject: boolean;
  pattern: ReferencePattern;
  /** The one kind the reference itself names (`kind:`), else any of the pattern's targets. */
  kind?: Kind;
  /** Where its name is, noted when the reference is still unresolved after its document. */
  position?: Position;
}

/** Where a reference's name is, for messages. */
export function referencePointer(ref: NamedReference): string {
  return ref.inObject ? `${ref.at}/name` : ref.at;
}

/** A backend workload name that no static backend of its configuration answers. */
export interface WorkloadName {
  pointer: string;
  name: string;
  target: LocateTarget;
  /** As for NamedReference. */
  position?: Position;
}

/** An `oidcConfigRef` with an audience; the audience is at `${at}/audience`. */
export interface AudienceUse {
  at: string;
  config: string;
  audience: string;
}

export interface ResourceFacts {
  kind: Kind;
  namespace: string;
  name: string;
  /** After the reference level has taken the resource: only those not yet found. */
  references: readonly NamedReference[];
  workloads: readonly WorkloadName[];
  /** The audience it accepts tokens for, when its OIDC configuration reference names one. */
  audience: AudienceUse | undefined;
  /** True when its metadata names no namespace (it is in the run's default one). */
  namespaceDefaulted: boolean;
  /** MCPOIDCConfig only: the issuer its tokens come from, when its spec says. */
  issuer?: string;
  /** Authorization-server facts (auth-server-refs.ts), for the kinds they concern. */
  auth?: AuthFacts;
}

/**
 * Calls `visit` with each value at `segments` (`*`: any list item or map value) and its JSON
 * pointer. Most patterns match nothing: the path up to the first `*` is followed without
 * allocating, and a pointer is built only for values found.
 */
export function visitAt(
  value: unknown,
  segments: readonly string[],
  visit: (found: unknown, pointer: string) => void,
): void {
  let v = value;
  let depth = 0;
  for (; depth < segments.length; depth++) {
    const segment = segments[depth]!;
    if (segment === "*") break;
    if (!isObject(v) || !Object.hasOwn(v, segment)) return;
    v = v[segment];
  }
  if (depth === segments.length) visit(v, staticPointer(segments));
  else visitFrom(v, segments, depth, segments.slice(0, depth), visit);
}

/** The value at a path without wildcards, or undefined. */
function valueAt(value: unknown, segments: readonly string[]): unknown {
  let v = value;
  for (const segment of segments) {
    if (!isObject(v) || !Object.hasOwn(v, segment)) return undefined;
    v = v[segment];
  }
  return v;
}

/** True when `segments` can be followed in `value` up to the first wildcard. */
function reaches(value: unknown, segments: readonly string[]): boolean {
  let v = value;
  for (const segment of segments) {
    if (segment === "*") return true;
    if (!isObject(v) || !Object.hasOwn(v, segment)) return false;
    v = v[segment];
  }
  return true;
}

const staticPointers = new WeakMap<readonly string[], string>();

/** The pointer of a path without wildcards: the same string for every resource. */
function staticPointer(segments: readonly string[]): string {
  let pointer = staticPointers.get(segments);
  if (pointer === undefined) {
    pointer = toPointer(segments);
    staticPointers.set(segments, pointer);
  }
  return pointer;
}

/** visitAt() from `depth` on, `path` being the segments walked so far. */
function visitFrom(
  v: unknown,
  segments: readonly string[],
  depth: number,
  path: string[],
  visit: (found: unknown, pointer: string) => void,
): void {
  if (depth === segments.length) {
    visit(v, toPointer(path));
    return;
  }
  const segment = segments[depth]!;
  const step = (key: string, child: unknown): void => {
    path.push(key);
    visitFrom(child, segments, depth + 1, path, visit);
    path.pop();
  };
  if (segment !== "*") {
    if (isObject(v) && Object.hasOwn(v, segment)) step(segment, v[segment]);
  } else if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) step(String(i), v[i]);
  } else if (isObject(v)) {
    for (const k of Object.keys(v)) step(k, v[k]);
  }
}

/** Values at `segments` with their pointers (see visitAt). */
export function valuesAt(
  value: unknown,
  segments: readonly string[],
): { pointer: string; value: unknown }[] {
  const out: { pointer: string; value: unknown }[] = [];
  visitAt(value, segments, (found, pointer) => out.push({ pointer, value: found }));
  return out;
}

/**
 * No entries: shared, so that the many resources without any allocate nothing. Readonly by
 * type, not frozen: V8 loops over a frozen array through the generic iterator protocol.
 */
export const NONE: readonly never[] = [];

/**
 * Whether a resource of one of `kinds` named `name` is known already in `namespace`: a reference
 * to it is settled and need not be listed. (An answer of false only means "not yet": the
 * reference level looks again at the end.)
 */
export type KnownName = (kinds: readonly Kind[], namespace: string, name: string) => boolean;

/** A resource's references as they are found, leaving out the ones already settled. */
class ReferenceList {
  list: NamedReference[] | undefined;

  constructor(
    private readonly namespace: string,
    private readonly known: KnownName | undefined,
  ) {}

  /** Adds the reference(s) found at `at`: one, or each item of a list pattern's value. */
  addFound(pattern: ReferencePattern, found: unknown, at: string): void {
    if (!pattern.list) this.add(pattern, found, at);
    else if (Array.isArray(found)) {
      for (let i = 0; i < found.length; i++) this.add(pattern, found[i], `${at}/${i}`);
    }
  }

  /** Adds the reference `value` holds, if it names one (else the schema level reports it). */
  private add(pattern: ReferencePattern, value: unknown, at: string): void {
    let name: string;
    let kind: Kind | undefined;
    if (typeof value === "string") name = value;
    else if (isObject(value) && typeof value.name === "string") {
      name = value.name;
      if (typeof value.kind === "string") {
        kind = value.kind as Kind;
        if (!pattern.targets.includes(kind)) return; // a wrong kind
      }
    } else return;
    if (name === "") return;
    const targets = kind === undefined ? pattern.targets : [kind];
    if (this.known?.(targets, this.namespace, name) === true) return;
    // Every field set here, so that all references share one shape.
    const ref: NamedReference = {
      name: detached(name),
      at,
      inObject: typeof value !== "string",
      pattern,
      kind,
      position: undefined,
    };
    if (this.list === undefined) this.list = [ref];
    else this.list.push(ref);
  }
}

function referencesOf(
  value: unknown,
  patterns: readonly ReferencePattern[],
  namespace: string,
  known: KnownName | undefined,
): readonly NamedReference[] {
  if (patterns.length === 0) return NONE;
  const out = new ReferenceList(namespace, known);
  for (const pattern of patterns) {
    const at = pattern.pointer;
    if (at !== undefined) {
      // The common case, followed without a visitor: a path without wildcards.
      const found = valueAt(value, pattern.segments);
      if (found !== undefined) out.addFound(pattern, found, at);
    } else if (reaches(value, pattern.segments)) {
      visitAt(value, pattern.segments, (found, pointer) => out.addFound(pattern, found, pointer));
    }
  }
  return out.list ?? NONE;
}

/** Names of the static backends of the virtual-server configuration at `config`. */
function staticBackends(value: unknown, config: readonly string[]): Set<string> {
  const names = new Set<string>();
  visitAt(value, [...config, "backends", "*", "name"], (found) => {
    if (typeof found === "string") names.add(found);
  });
  return names;
}

function workloadNamesOf(
  value: unknown,
  patterns: readonly WorkloadPattern[],
): readonly WorkloadName[] {
  const out: WorkloadName[] = [];
  const backends = new Map<string, Set<string>>();
  for (const pattern of patterns) {
    const names: WorkloadName[] = [];
    visitAt(value, pattern.segments, (found, pointer) => {
      if (pattern.form === "value" && typeof found === "string") {
        names.push({ name: detached(found), pointer, target: "value" });
      } else if (pattern.form === "items" && Array.isArray(found)) {
        found.forEach((v: unknown, i) => {
          if (typeof v === "string")
            names.push({ name: detached(v), pointer: `${pointer}/${i}`, target: "value" });
        });
      } else if (pattern.form === "keys" && isObject(found)) {
        for (const k of Object.keys(found)) {
          names.push({ name: k, pointer: `${pointer}/${escapeSegment(k)}`, target: "key" });
        }
      }
    });
    if (names.length === 0) continue;
    const configKey = pattern.config.join("/");
    let known = backends.get(configKey);
    if (known === undefined) {
      known = staticBackends(value, pattern.config);
      backends.set(configKey, known);
    }
    for (const n of names) if (n.name !== "" && !known.has(n.name)) out.push(n);
  }
  return out.length === 0 ? NONE : out;
}

/** Where each kind that accepts tokens names its OIDC configuration (paths without wildcards). */
const OIDC_USERS: Partial<Record<Kind, string[]>> = {
  MCPServer: ["spec", "oidcConfigRef"],
  MCPRemoteProxy: ["spec", "oidcConfigRef"],
  VirtualMCPServer: ["spec", "incomingAuth", "oidcConfigRef"],
};

function audienceOf(kind: Kind, value: unknown): AudienceUse | undefined {
  const path = OIDC_USERS[kind];
  if (path === undefined) return undefined;
  const ref = valueAt(value, path);
  if (!isObject(ref) || typeof ref.audience !== "string" || typeof ref.name !== "string") {
    return undefined;
  }
  return {
    at: staticPointer(path),
    config: detached(ref.name),
    audience: detached(ref.audience),
  };
}

/**
 * Who issues the tokens an MCPOIDCConfig accepts, when its spec names it: servers sharing an
 * issuer and an audience accept each other's tokens.
 */
function issuerOf(value: unknown): string | undefined {
  const spec = isObject(value) ? value.spec : undefined;
  if (!isObject(spec)) return undefined;
  if (spec.type === "inline" && isObject(spec.inline) && typeof spec.inline.issuer === "string") {
    return detached(`issuer ${spec.inline.issuer}`);
  }
  if (spec.type === "kubernetesServiceAccount") {
    const k = spec.kubernetesServiceAccount;
    return detached(`kubernetes ${isObject(k) && typeof k.issuer === "string" ? k.issuer : ""}`);
  }
  return undefined;
}

/** Whether the resource's metadata names its namespace (else it is in the run's default). */
function hasNamespace(value: unknown): boolean {
  const metadata = isObject(value) ? value.metadata : undefined;
  return isObject(metadata) && typeof metadata.namespace === "string" && metadata.namespace !== "";
}

/**
 * The facts of one resource of ours; `patterns` are its kind's reference patterns. References
 * to names `known` says exist already are left out: most of a repository's references name
 * resources read before them, and this way nothing is allocated for those.
 */
export function resourceFacts(
  identity: { kind: Kind; namespace: string; name: string },
  value: unknown,
  patterns: readonly ReferencePattern[],
  known?: KnownName,
): ResourceFacts {
  const { kind } = identity;
  const workloadPatterns = WORKLOAD_PATTERNS[kind];
  const facts: ResourceFacts = {
    kind,
    namespace: identity.namespace,
    name: identity.name,
    references: referencesOf(value, patterns, identity.namespace, known),
    workloads: workloadPatterns === undefined ? NONE : workloadNamesOf(value, workloadPatterns),
    audience: audienceOf(kind, value),
    namespaceDefaulted: !hasNamespace(value),
  };
  if (kind === "MCPOIDCConfig") {
    const issuer = issuerOf(value);
    if (issuer !== undefined) facts.issuer = issuer;
  }
  const auth = authFactsOf(kind, value);
  if (auth !== undefined) facts.auth = auth;
  return facts;
}

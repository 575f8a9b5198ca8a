// The reference level: rules over the whole set of resources given. A reference names an
// existing resource of the right kind in the same namespace; kind/namespace/name is unique; an
// MCPServer and an MCPRemoteProxy do not share a name; OIDC audiences are unique per server.
// It works on the facts taken from each resource as it is read (reference-facts.ts), and
// settles a reference as soon as the resource it names has been seen: only the others, and
// what the rules across the whole set need, are kept until the last file has been read.
import { EXTERNAL_POINTER, SERVER_POINTER, authServerIssues } from "./auth-server-refs.js";
import type { Kind } from "../schema/kinds.js";
import {
  type AudienceUse,
  type KnownName,
  type NamedReference,
  NONE,
  type ResourceFacts,
  type WorkloadName,
  referencePointer,
} from "./reference-facts.js";
import { closest } from "../suggest.js";
import { Grouping } from "./grouping.js";
import { WORKLOAD_KINDS } from "./reference-table.js";
import {
  type IssueTarget,
  type Severity,
  addIssue,
  addPositionedIssue,
  resourceLabel,
} from "./resource.js";
import type { LocateTarget, Position } from "../yaml/model.js";

/** A resource of one of our kinds that has a name (what references can point at); its issues go to its result. */
export interface OwnResource extends ResourceFacts, IssueTarget {}

export interface ReferenceOptions {
  allowMissingRefs: boolean;
}

function where(r: OwnResource): string {
  return `${r.result.file}:${r.result.line}`;
}

/** The resources of one namespace and name: one, or (rarely) several of different kinds. */
type Named = OwnResource | OwnResource[];

/** The first resource of `kind` among those of a name. */
function ofKind(named: Named, kind: Kind): OwnResource | undefined {
  if (!Array.isArray(named)) return named.kind === kind ? named : undefined;
  for (const r of named) if (r.kind === kind) return r;
  return undefined;
}

/**
 * Resources by namespace and name, then kind: two map lookups (namespaces are interned, so the
 * first is by a string already hashed) and no key strings built per lookup. A name almost
 * always belongs to one resource; the same name of another kind makes a short list, a second
 * definition of the same kind is kept apart as a duplicate.
 */
export class ResourceIndex {
  private readonly byNamespace = new Map<string, Map<string, Named>>();
  /** Each kind/namespace/name defined more than once: its definitions, first one first. */
  private readonly repeated: OwnResource[][] = [];
  private readonly repeatsOf = new Map<OwnResource, OwnResource[]>();

  /** Adds a resource; false when one of its kind, namespace and name was there already. */
  add(r: OwnResource): boolean {
    let byName = this.byNamespace.get(r.namespace);
    if (byName === undefined) {
      byName = new Map<string, Named>();
      this.byNamespace.set(r.namespace, byName);
    }
    const named = byName.get(r.name);
    if (named === undefined) {
      byName.set(r.name, r);
      return true;
    }
    const first = ofKind(named, r.kind);
    if (first === undefined) {
      if (Array.isArray(named)) named.push(r);
      else byName.set(r.name, [named, r]);
      return true;
    }
    let group = this.repeatsOf.get(first);
    if (group === undefined) {
      group = [first];
      this.repeatsOf.set(first, group);
      this.repeated.push(group);
    }
    group.push(r);
    return false;
  }

  /** The first resource added of `kind` in `namespace` named `name`. */
  get(kind: Kind, namespace: string, name: string): OwnResource | undefined {
    const named = this.byNamespace.get(namespace)?.get(name);
    return named === undefined ? undefined : ofKind(named, kind);
  }

  /** True when a resource of one of `kinds` has `name` in `namespace`. */
  hasAny(kinds: readonly Kind[], namespace: string, name: string): boolean {
    const named = this.byNamespace.get(namespace)?.get(name);
    if (named === undefined) return false;
    if (!Array.isArray(named)) return kinds.includes(named.kind);
    for (const r of named) if (kinds.includes(r.kind)) return true;
    return false;
  }

  /** The names of resources of one of `kinds` in `namespace`, in the order they were added. */
  *namesOf(kinds: readonly Kind[], namespace: string): Iterable<string> {
    for (const [name, named] of this.byNamespace.get(namespace) ?? []) {
      if (
        Array.isArray(named)
          ? named.some((r) => kinds.includes(r.kind))
          : kinds.includes(named.kind)
      ) {
        yield name;
      }
    }
  }

  /** The namespaces other than `except` where a resource of one of `kinds` has `name`, sorted. */
  namespacesWith(kinds: readonly Kind[], name: string, except: string): string[] {
    const found: string[] = [];
    for (const namespace of this.byNamespace.keys()) {
      if (namespace !== except && this.hasAny(kinds, namespace, name)) found.push(namespace);
    }
    return found.sort();
  }

  /** Every kind/namespace/name defined more than once, with its definitions in order. */
  duplicates(): readonly (readonly OwnResource[])[] {
    return this.repeated;
  }
}

/**
 * The reference level of one run: resources are added as they are read, checked at the end.
 * What the end needs is gathered as they are added (collisions with resources read before,
 * the few resources with names still unsettled or with an audience), so that finish() does not
 * go over every resource again.
 */
export class ReferenceLevel {
  private readonly index = new ResourceIndex();
  private readonly all: OwnResource[] = [];
  private readonly collisions: Collision[] = [];
  /** Resources with references or backend names not found when they were added. */
  private readonly unsettled: OwnResource[] = [];
  private readonly audienceUsers: OwnResource[] = [];
  /** Workloads that name an authorization server or an external auth configuration. */
  private readonly authUsers: OwnResource[] = [];

  constructor(private readonly options: ReferenceOptions) {}

  /** Whether a name is known already (for resourceFacts(): a reference to it is settled). */
  readonly known: KnownName = (kinds, namespace, name) => this.index.hasAny(kinds, namespace, name);

  /** The resources added, with the references still unsettled. */
  get resources(): readonly OwnResource[] {
    return this.all;
  }

  /**
   * Adds a resource of ours; its references to resources already added are settled now (a
   * name that exists stays found), the others wait for finish().
   */
  add(facts: ResourceFacts, at: IssueTarget): void {
    // Every field written out: a spread would keep them in a separate property array.
    const r: OwnResource = {
      kind: facts.kind,
      namespace: facts.namespace,
      name: facts.name,
      references: facts.references,
      workloads: facts.workloads,
      audience: facts.audience,
      namespaceDefaulted: facts.namespaceDefaulted,
      result: at.result,
      prefix: at.prefix,
      doc: at.doc,
    };
    if (facts.issuer !== undefined) r.issuer = facts.issuer;
    if (facts.auth !== undefined) {
      r.auth = facts.auth;
      if (r.auth.server !== undefined || r.auth.external !== undefined) {
        // Noted now, while the document is at hand (the rules run at the end); a verdict
        // adopted (file-verdict.ts) has them already.
        if (r.auth.server !== undefined) {
          r.auth.serverAt ??= at.doc.locate(at.prefix + SERVER_POINTER);
        }
        if (r.auth.external !== undefined) {
          r.auth.externalAt ??= at.doc.locate(at.prefix + EXTERNAL_POINTER);
        }
        this.authUsers.push(r);
      }
    }
    // A resource defined twice is a duplicate, reported as such, not a collision with itself.
    if (this.index.add(r)) this.findCollisions(r);
    if (r.references.length > 0) r.references = this.unsettledReferences(r, at);
    if (r.workloads.length > 0) r.workloads = this.unsettledWorkloads(r, at);
    if (r.references.length > 0 || r.workloads.length > 0) this.unsettled.push(r);
    if (r.audience !== undefined) this.audienceUsers.push(r);
    this.all.push(r);
  }

  /** Notes each resource added before that would create an object `r` creates too. */
  private findCollisions(r: OwnResource): void {
    for (const [type, prefix, suffix, rivals] of CHILD_OBJECTS[r.kind] ?? []) {
      // The object's name is built only for a rival that names its objects otherwise.
      let object: string | undefined;
      for (const [kind, rivalPrefix, rivalSuffix] of rivals) {
        let name: string | undefined = r.name;
        if (rivalPrefix !== prefix || rivalSuffix !== suffix) {
          object ??= prefix + r.name + suffix;
          name = nameWithin(object, rivalPrefix, rivalSuffix);
        }
        const other = name === undefined ? undefined : this.index.get(kind, r.namespace, name);
        if (other === undefined) continue;
        object ??= prefix + r.name + suffix;
        this.collisions.push({ r, other, object: `${type} "${object}"` });
      }
    }
  }

  // The place of each name left unsettled is noted while the document is at hand: finding it
  // at the end would mean parsing the document again.

  private unsettledReferences(r: OwnResource, at: IssueTarget): readonly NamedReference[] {
    let open: NamedReference[] | undefined;
    for (const ref of r.references) {
      if (this.index.hasAny(referenceTargets(ref), r.namespace, ref.name)) continue;
      ref.position ??= at.doc.locate(at.prefix + referencePointer(ref));
      (open ??= []).push(ref);
    }
    return open ?? NONE;
  }

  private unsettledWorkloads(r: OwnResource, at: IssueTarget): readonly WorkloadName[] {
    let open: WorkloadName[] | undefined;
    for (const w of r.workloads) {
      if (this.index.hasAny(WORKLOAD_KINDS, r.namespace, w.name)) continue;
      w.position ??= at.doc.locate(at.prefix + w.pointer, w.target);
      (open ??= []).push(w);
    }
    return open ?? NONE;
  }

  /** Runs every reference-level rule and attaches the issues to the resources' results. */
  finish(): void {
    const index = this.index;
    checkDuplicates(index);
    reportCollisions(this.collisions);
    const missing = this.options.allowMissingRefs ? "warning" : "error";
    for (const r of this.unsettled) {
      checkNamedReferences(r, index, missing);
      checkWorkloadNames(r, index, missing);
    }
    checkAudiences(this.audienceUsers, index);
    for (const r of this.authUsers) {
      const config = (name: string) => index.get("MCPExternalAuthConfig", r.namespace, name)?.auth;
      for (const i of authServerIssues(r.auth!, config)) {
        addIssueAt(r, i.path, i.position, i.message, "error");
      }
    }
  }
}

function checkDuplicates(index: ResourceIndex): void {
  for (const [first, ...rest] of index.duplicates()) {
    for (const dup of rest) {
      addIssue(
        dup,
        "/metadata/name",
        `duplicate ${dup.kind} ${dup.namespace}/${dup.name}: also defined at ${where(first!)}`,
        "reference",
      );
    }
  }
}

type ChildType = "Deployment" | "StatefulSet" | "ConfigMap" | "Service";

/** An object created for a resource named n: its type, and the text around n in its name. */
type ChildTemplate = readonly [type: ChildType, prefix: string, suffix: string];

/**
 * Objects created for a resource that a resource of another kind could also create: workloads,
 * Services and run-configuration ConfigMaps (names as src/synth renders them, after the
 * reference operator).
 */
const CHILD_TEMPLATES: Partial<Record<Kind, readonly ChildTemplate[]>> = {
  MCPServer: [
    ["Deployment", "", ""],
    ["ConfigMap", "", "-runconfig"],
    ["Service", "mcp-", "-proxy"],
  ],
  MCPRemoteProxy: [
    ["Deployment", "", ""],
    ["ConfigMap", "", "-runconfig"],
    ["Service", "mcp-", "-remote-proxy"],
  ],
  VirtualMCPServer: [
    ["Deployment", "", ""],
    ["ConfigMap", "", "-vmcp-config"],
    ["Service", "vmcp-", ""],
  ],
  MCPRegistry: [
    ["Deployment", "", "-api"],
    ["Service", "", "-api"],
  ],
  EmbeddingServer: [
    ["StatefulSet", "", ""],
    ["Service", "", ""],
  ],
};

/** Another kind that creates an object of the same type: its name is prefix + n + suffix. */
type Rival = readonly [kind: Kind, prefix: string, suffix: string];

/** Each kind's templates, each with the other kinds' templates of its type. */
const CHILD_OBJECTS: Partial<Record<Kind, readonly (readonly [...ChildTemplate, Rival[]])[]>> =
  Object.fromEntries(
    Object.entries(CHILD_TEMPLATES).map(([kind, templates]) => [
      kind,
      templates.map(([type, prefix, suffix]) => {
        const rivals: Rival[] = [];
        for (const [other, theirs] of Object.entries(CHILD_TEMPLATES)) {
          if (other === kind) continue;
          for (const [t, p, s] of theirs) if (t === type) rivals.push([other as Kind, p, s]);
        }
        return [type, prefix, suffix, rivals] as const;
      }),
    ]),
  );

/** The n for which prefix + n + suffix is `object`, if there is one. */
function nameWithin(object: string, prefix: string, suffix: string): string | undefined {
  if (prefix === "" && suffix === "") return object;
  if (object.length <= prefix.length + suffix.length) return undefined;
  if (!object.startsWith(prefix) || !object.endsWith(suffix)) return undefined;
  return object.slice(prefix.length, object.length - suffix.length);
}

/** Two resources that would create the same object, found when the later one was added. */
interface Collision {
  r: OwnResource;
  other: OwnResource;
  /** `Deployment "name"` */
  object: string;
}

/**
 * Two resources that would create the same object collide: an MCPServer and an MCPRemoteProxy
 * of one name share a Deployment and ConfigMap (the reference operator does not guard it), a
 * VirtualMCPServer's Deployment takes its own name too, an MCPRegistry's is `<name>-api`.
 * Each of the two gets one issue naming the other and every object they would share.
 */
function reportCollisions(collisions: readonly Collision[]): void {
  const reported = new Map<OwnResource, Map<OwnResource, string[]>>();
  const note = (r: OwnResource, other: OwnResource, object: string): void => {
    let byOther = reported.get(r);
    if (byOther === undefined) {
      byOther = new Map<OwnResource, string[]>();
      reported.set(r, byOther);
    }
    byOther.set(other, [...(byOther.get(other) ?? []), object]);
  };
  for (const { r, other, object } of collisions) {
    note(other, r, object);
    note(r, other, object);
  }
  for (const [r, byOther] of reported) {
    for (const [other, objects] of byOther) {
      addIssue(
        r,
        "/metadata/name",
        `${r.kind} ${r.namespace}/${r.name} and ${other.kind} ${other.namespace}/${other.name} ` +
          `(${where(other)}) would both create the ${objects.join(" and the ")}`,
        "reference",
      );
    }
  }
}

/** An issue at a position noted earlier (else found now). */
function addIssueAt(
  r: OwnResource,
  path: string,
  position: Position | undefined,
  message: string,
  severity: Severity,
  target: LocateTarget = "value",
): void {
  if (position === undefined) addIssue(r, path, message, "reference", severity, target);
  else addPositionedIssue(r, { path, ...position, message, level: "reference" }, severity);
}

/** The kinds a reference may name: the one it gives (`kind:`), else its property's. */
function referenceTargets(ref: NamedReference): readonly Kind[] {
  return ref.kind === undefined ? ref.pattern.targets : [ref.kind];
}

function checkNamedReferences(
  r: OwnResource,
  index: ResourceIndex,
  missing: "error" | "warning",
): void {
  for (const ref of r.references) {
    const targets = referenceTargets(ref);
    if (index.hasAny(targets, r.namespace, ref.name)) continue;
    const field = ref.pattern.segments[ref.pattern.segments.length - 1] ?? "reference";
    const message =
      `${field}: ${targets.join(" or ")} "${ref.name}" not found in namespace ${r.namespace}` +
      whereElse(r, index, targets, ref.name);
    addIssueAt(r, referencePointer(ref), ref.position, message, missing);
  }
}

/**
 * What helps with a name not found: the closest name of those kinds in the namespace (a typo),
 * and the namespaces that do have it (a resource moved, or one without metadata.namespace that
 * fell into the default namespace): a reference never leaves its resource's namespace.
 */
function whereElse(
  r: OwnResource,
  index: ResourceIndex,
  kinds: readonly Kind[],
  name: string,
): string {
  const near = closest(name, index.namesOf(kinds, r.namespace));
  let out = near === undefined ? "" : ` (did you mean "${near}"?)`;
  const elsewhere = index.namespacesWith(kinds, name, r.namespace);
  if (elsewhere.length > 0) {
    const shown =
      elsewhere.length <= 3
        ? elsewhere.join(", ")
        : `${elsewhere.slice(0, 3).join(", ")} and ${elsewhere.length - 3} more`;
    out +=
      `; it exists in namespace${elsewhere.length > 1 ? "s" : ""} ${shown}, and a reference ` +
      "names a resource of its own namespace";
    if (r.namespaceDefaulted) {
      out += ` (this resource has no metadata.namespace, so it is in ${r.namespace})`;
    }
  }
  return out;
}

function checkWorkloadNames(
  r: OwnResource,
  index: ResourceIndex,
  missing: "error" | "warning",
): void {
  for (const n of r.workloads) {
    if (index.hasAny(WORKLOAD_KINDS, r.namespace, n.name)) continue;
    const message =
      `backend workload "${n.name}" not found: no ${WORKLOAD_KINDS.join(", ")} of that name in ` +
      `namespace ${r.namespace} and no static backend of that name` +
      whereElse(r, index, WORKLOAD_KINDS, n.name);
    addIssueAt(r, n.pointer, n.position, message, missing, n.target);
  }
}

/** Who issues the tokens an MCPOIDCConfig accepts; an unknown config counts as its own issuer. */
function issuerIdentity(index: ResourceIndex, namespace: string, configName: string): string {
  return index.get("MCPOIDCConfig", namespace, configName)?.issuer ?? `config ${configName}`;
}

/** An audience and the resource using it. */
type ServerAudience = { r: OwnResource; use: AudienceUse };

/** Servers sharing an issuer and an audience accept each other's tokens (replay). */
function checkAudiences(users: readonly OwnResource[], index: ResourceIndex): void {
  for (const g of audienceGroups(users, index).values()) reportSharedAudiences(g.repeats());
}

/** Namespace -> (issuer, audience) -> the uses by `resources` (those with an audience). */
function audienceGroups(
  resources: readonly OwnResource[],
  index: ResourceIndex,
): Map<string, Grouping<ServerAudience>> {
  const byNamespace = new Map<string, Grouping<ServerAudience>>();
  for (const r of resources) {
    const use = r.audience;
    if (use === undefined) continue;
    let byAudience = byNamespace.get(r.namespace);
    if (byAudience === undefined) {
      byAudience = new Grouping<ServerAudience>();
      byNamespace.set(r.namespace, byAudience);
    }
    byAudience.add(issuerIdentity(index, r.namespace, use.config), use.audience, { r, use });
  }
  return byNamespace;
}

function reportSharedAudiences(groups: readonly (readonly ServerAudience[])[]): void {
  for (const list of groups) {
    for (const entry of list) {
      const others = list
        .filter((o) => o !== entry)
        .map((o) => `${resourceLabel(o.r)} (${where(o.r)})`);
      addIssue(
        entry.r,
        `${entry.use.at}/audience`,
        `audience "${entry.use.audience}" is also used by ${others.join(", ")} with the same issuer: ` +
          "each server needs its own audience, or a token for one is accepted by the other",
        "reference",
      );
    }
  }
}

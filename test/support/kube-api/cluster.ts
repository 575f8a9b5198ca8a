// The state machine behind the HTTP handlers: the write pipeline every create, update, patch and
// apply goes through (status reset, server-owned metadata, pruning and defaults, validation,
// managedFields, generation, no-op detection), deletion with finalizers and propagation policies,
// the garbage collector for ownerReferences, namespace termination and CRD establishment.
import { randomUUID } from "node:crypto";
import type { ApiError } from "./errors.js";
import {
  type ResourceRef,
  badRequest,
  conflict,
  forbidden,
  invalid,
  namespaceNotFound,
} from "./errors.js";
import { canonical } from "./fieldpath.js";
import {
  type Manager,
  managedView,
  readManagers,
  trackUpdate,
  writeManagers,
} from "./managed-fields.js";
import { metadataCauses } from "./metadata.js";
import { Registry } from "./registry.js";
import { type ResourceType, groupVersion, storageKey } from "./resource-type.js";
import { Store } from "./store.js";
import { type KObject, clone, isRecord, nowTime } from "./types.js";

export type PropagationPolicy = "Background" | "Foreground" | "Orphan";

export interface WriteArgs {
  type: ResourceType;
  version: string;
  old: KObject | undefined;
  next: KObject;
  subresource: string | undefined;
  manager: string;
  /** Ownership computed by server-side apply; otherwise the write is tracked as an Update. */
  managers?: Manager[];
  dryRun?: boolean;
  /** fieldValidation=Strict: unknown fields are an error instead of a warning. */
  strict?: boolean;
}

export interface WriteResult {
  object: KObject;
  changed: boolean;
  warnings: string[];
}

export interface ClusterOptions {
  establishDelayMs: number;
  namespaceDeletionDelayMs: number;
  eventLogLimit: number;
  serverAddress: () => string;
}

const SYSTEM_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** Compares two stored objects, ignoring resourceVersion and managedFields timestamps. */
function sameObject(a: KObject, b: KObject): boolean {
  const strip = (o: KObject): KObject => {
    const meta = { ...o.metadata };
    delete meta.resourceVersion;
    if (Array.isArray(meta.managedFields))
      meta.managedFields = meta.managedFields.map((m) => ({ ...m, time: "" }));
    return { ...o, metadata: meta };
  };
  return canonical(strip(a)) === canonical(strip(b));
}

function withoutMetaAndStatus(obj: KObject): string {
  const copy = { ...obj };
  delete copy.metadata;
  delete copy.status;
  delete copy.apiVersion;
  delete copy.kind;
  return canonical(copy);
}

export class Cluster {
  readonly store: Store;
  readonly registry: Registry;
  private readonly timers = new Set<NodeJS.Timeout | NodeJS.Immediate>();
  private stopped = false;

  constructor(private readonly options: ClusterOptions) {
    this.store = new Store(options.eventLogLimit);
    this.registry = new Registry(options.serverAddress);
    const namespaces = this.registry.lookup("", "v1", "namespaces")!;
    for (const name of SYSTEM_NAMESPACES) {
      this.write({
        type: namespaces,
        version: "v1",
        old: undefined,
        next: { apiVersion: "v1", kind: "Namespace", metadata: { name } },
        subresource: undefined,
        manager: "kube-apiserver",
      });
    }
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) {
      clearTimeout(timer as NodeJS.Timeout);
      clearImmediate(timer as NodeJS.Immediate);
    }
    this.timers.clear();
  }

  /** Runs `fn` after `ms` (next turn of the event loop when 0), unless the server stops. */
  later(ms: number, fn: () => void): void {
    if (this.stopped) return;
    const run = () => {
      this.timers.delete(handle);
      if (!this.stopped) fn();
    };
    const handle = ms > 0 ? setTimeout(run, ms) : setImmediate(run);
    this.timers.add(handle);
  }

  /** The object as a client sees it through `version`: a deep copy with that apiVersion. */
  present(type: ResourceType, version: string, obj: KObject): KObject {
    return clone(this.view(type, version, obj));
  }

  /** Like present, but sharing the stored data: only for serializing a response at once. */
  view(type: ResourceType, version: string, obj: KObject): KObject {
    return { ...obj, apiVersion: groupVersion(type.group, version), kind: type.kind };
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KObject | undefined {
    return this.store.get(storageKey(type), type.namespaced ? namespace : undefined, name);
  }

  /** 404 unless the namespace exists; 403 when it is being deleted. */
  checkNamespace(
    type: ResourceRef & { namespaced: boolean },
    namespace: string | undefined,
    name: string,
  ): void {
    if (!type.namespaced || namespace === undefined) return;
    const ns = this.store.get("/namespaces", undefined, namespace);
    if (!ns) throw namespaceNotFound(namespace);
    if (ns.metadata?.deletionTimestamp) {
      throw forbidden(
        type,
        name,
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
    }
  }

  write(args: WriteArgs): WriteResult {
    const { type, version, old, subresource } = args;
    const scope = subresource === "status" ? "status" : "main";
    const gv = groupVersion(type.group, version);
    let next = args.next;
    const warnings: string[] = [];
    // managedFields sent back as read are ignored; changed ones replace the recorded ownership.
    const ownership = (o: KObject | undefined) =>
      canonical((o?.metadata?.managedFields ?? []).map((m) => ({ ...m, time: "" })));
    const explicitManagedFields =
      Array.isArray(next.metadata?.managedFields) &&
      (old === undefined || ownership(next) !== ownership(old));
    const requestedManagers = explicitManagedFields ? readManagers(next) : undefined;

    if (old) {
      if (scope === "status") {
        const status = next.status;
        next = clone(old);
        if (status === undefined) delete next.status;
        else next.status = clone(status);
      } else if (type.status) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
      const meta = (next.metadata ??= {});
      const oldMeta = old.metadata!;
      for (const key of [
        "uid",
        "creationTimestamp",
        "generation",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "name",
        "namespace",
      ] as const) {
        if (oldMeta[key] === undefined) delete meta[key];
        else (meta as Record<string, unknown>)[key] = oldMeta[key];
      }
      if (oldMeta.deletionTimestamp) {
        const before = new Set(oldMeta.finalizers ?? []);
        if ((meta.finalizers ?? []).some((f) => !before.has(f))) {
          throw invalid(type, String(meta.name), [
            {
              reason: "FieldValueForbidden",
              message: "Forbidden: no new finalizers can be added if the object is being deleted",
              field: "metadata.finalizers",
            },
          ]);
        }
      }
    } else {
      if (type.status) delete next.status;
      const meta = (next.metadata ??= {});
      meta.uid = randomUUID();
      meta.creationTimestamp = nowTime();
      delete meta.resourceVersion;
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
      if (type.generation) meta.generation = 1;
      else delete meta.generation;
    }
    next.apiVersion = gv;
    next.kind = type.kind;

    const schema = type.crd?.schemas.get(version);
    if (type.crd) {
      const pruned = schema ? schema.prune(next) : [];
      if (pruned.length > 0 && args.strict) {
        throw badRequest(
          `strict decoding error: ${pruned.map((p) => `unknown field "${p}"`).join(", ")}`,
        );
      }
      for (const path of pruned) warnings.push(`unknown field "${path}"`);
      schema?.applyDefaults(next);
    } else {
      type.rules?.prepare?.(next, old);
    }

    const name = String(next.metadata?.name ?? "");
    const causes = [...metadataCauses(next, type.nameRule)];
    if (schema) causes.push(...schema.validate(next, old));
    else if (!type.crd) causes.push(...(type.rules?.validate?.(next, old) ?? []));
    if (causes.length > 0) throw invalid(type, name, causes);

    const shape = type.shape(version);
    const baseManagers = requestedManagers ?? readManagers(old);
    const managers =
      args.managers ??
      trackUpdate(
        baseManagers,
        args.manager,
        gv,
        subresource,
        managedView(old, scope, type.status),
        managedView(next, scope, type.status),
        shape,
      );
    const encoded = writeManagers(managers);
    if (encoded.length > 0) next.metadata.managedFields = encoded;
    else delete next.metadata.managedFields;

    if (old && type.generation && withoutMetaAndStatus(old) !== withoutMetaAndStatus(next)) {
      next.metadata.generation = (old.metadata?.generation ?? 0) + 1;
    }
    if (old && sameObject(old, next)) return { object: old, changed: false, warnings };
    if (args.dryRun) {
      if (old) next.metadata.resourceVersion = old.metadata?.resourceVersion;
      return { object: next, changed: true, warnings };
    }
    const stored = this.store.put(storageKey(type), next);
    this.afterWrite(type, stored, old);
    return { object: stored, changed: true, warnings };
  }

  private afterWrite(type: ResourceType, obj: KObject, old: KObject | undefined): void {
    const meta = obj.metadata!;
    if (
      meta.deletionTimestamp &&
      (meta.finalizers ?? []).length === 0 &&
      type.plural !== "namespaces"
    ) {
      this.removeNow(type, obj, "Background");
      return;
    }
    if ((meta.ownerReferences ?? []).length > 0) {
      const uid = meta.uid!;
      this.later(0, () => this.collectIfOrphaned(uid));
    }
    if (type.group === "apiextensions.k8s.io" && type.plural === "customresourcedefinitions") {
      this.crdWritten(obj, old);
    }
  }

  // --- CustomResourceDefinitions -------------------------------------------------------------

  private static established(crd: KObject | undefined): boolean {
    const conditions = isRecord(crd?.status) ? crd.status.conditions : undefined;
    return (
      Array.isArray(conditions) &&
      conditions.some((c) => isRecord(c) && c.type === "Established" && c.status === "True")
    );
  }

  private crdWritten(crd: KObject, old: KObject | undefined): void {
    const name = crd.metadata!.name!;
    if (Cluster.established(crd)) {
      if (old && withoutMetaAndStatus(old) !== withoutMetaAndStatus(crd))
        this.registry.installCrd(crd);
      return;
    }
    if (old && !Cluster.established(old) && withoutMetaAndStatus(old) === withoutMetaAndStatus(crd))
      return;
    this.later(this.options.establishDelayMs, () => this.establish(name));
  }

  /** Marks a CRD NamesAccepted and Established and starts serving its resources. */
  establish(name: string): void {
    const type = this.registry.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")!;
    const crd = this.get(type, undefined, name);
    if (!crd || crd.metadata?.deletionTimestamp || Cluster.established(crd)) return;
    const spec = (crd.spec ?? {}) as Record<string, unknown>;
    const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : [];
    const storage = versions.find((v) => v.storage === true);
    const now = nowTime();
    const next = clone(crd);
    next.status = {
      conditions: [
        {
          type: "NamesAccepted",
          status: "True",
          lastTransitionTime: now,
          reason: "NoConflicts",
          message: "no conflicts found",
        },
        {
          type: "Established",
          status: "True",
          lastTransitionTime: now,
          reason: "InitialNamesAccepted",
          message: "the initial names have been accepted",
        },
      ],
      acceptedNames: clone(spec.names),
      storedVersions: storage ? [storage.name] : [],
    };
    this.registry.installCrd(next);
    this.write({
      type,
      version: "v1",
      old: crd,
      next,
      subresource: "status",
      manager: "kube-apiserver",
    });
  }

  /** Installs a CRD and establishes it at once (for CRDs present when the server starts). */
  preinstall(crd: KObject): void {
    const type = this.registry.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")!;
    const name = String(crd.metadata?.name);
    const existing = this.get(type, undefined, name);
    this.write({
      type,
      version: "v1",
      old: existing,
      next: clone(crd),
      subresource: undefined,
      manager: "kube-api-double",
    });
    this.establish(name);
  }

  // --- deletion and garbage collection --------------------------------------------------------

  /**
   * Deletes `obj`: objects with finalizers (and namespaces) get a deletionTimestamp and stay until
   * they are gone; others are removed and their dependents handled by `policy`.
   * Returns the object as it now is, and whether it is gone.
   */
  delete(
    type: ResourceType,
    obj: KObject,
    policy: PropagationPolicy,
    dryRun = false,
  ): { object: KObject; gone: boolean } {
    if (dryRun) return { object: obj, gone: true };
    const meta = obj.metadata!;
    if (type.plural === "namespaces" && type.group === "") {
      if (!meta.deletionTimestamp) {
        const next = clone(obj);
        next.metadata!.deletionTimestamp = nowTime();
        next.status = { phase: "Terminating" };
        const stored = this.store.put(storageKey(type), next);
        this.later(this.options.namespaceDeletionDelayMs, () => this.purgeNamespace(meta.name!));
        return { object: stored, gone: false };
      }
      return { object: obj, gone: false };
    }
    const finalizers = [...(meta.finalizers ?? [])];
    if (policy === "Foreground") this.deleteDependents(meta.uid!);
    if (policy === "Orphan") this.orphanDependents(meta.uid!);
    if (finalizers.length > 0) {
      if (meta.deletionTimestamp) return { object: obj, gone: false };
      const next = clone(obj);
      next.metadata!.deletionTimestamp = nowTime();
      next.metadata!.deletionGracePeriodSeconds = 0;
      const stored = this.store.put(storageKey(type), next);
      return { object: stored, gone: false };
    }
    const gone = this.removeNow(type, obj, policy);
    return { object: gone ?? obj, gone: true };
  }

  private removeNow(
    type: ResourceType,
    obj: KObject,
    policy: PropagationPolicy,
  ): KObject | undefined {
    const gone = this.store.remove(storageKey(type), obj);
    if (!gone) return undefined;
    const uid = obj.metadata!.uid!;
    if (policy !== "Orphan") this.later(0, () => this.collectDependents(uid));
    if (type.group === "apiextensions.k8s.io" && type.plural === "customresourcedefinitions") {
      const served = this.registry.removeCrd(obj.metadata!.name!);
      if (served)
        for (const cr of this.store.list(storageKey(served)))
          this.removeNow(served, cr, "Background");
    }
    return gone;
  }

  private typeOfKey(key: string): ResourceType | undefined {
    return this.registry.byStorageKey(key);
  }

  private deleteDependents(uid: string): void {
    for (const dep of this.store.dependentsOf(uid)) {
      const type = this.typeOfKey(dep.key);
      if (type) this.delete(type, dep.object, "Foreground");
    }
  }

  private orphanDependents(uid: string): void {
    for (const dep of this.store.dependentsOf(uid)) {
      const type = this.typeOfKey(dep.key);
      if (!type) continue;
      const next = clone(dep.object);
      next.metadata!.ownerReferences = (next.metadata!.ownerReferences ?? []).filter(
        (r) => r.uid !== uid,
      );
      if (next.metadata!.ownerReferences.length === 0) delete next.metadata!.ownerReferences;
      this.store.put(dep.key, next);
    }
  }

  /** After an owner is gone: dependents with no remaining owner are deleted (in background). */
  private collectDependents(uid: string): void {
    for (const dep of this.store.dependentsOf(uid))
      this.collectIfOrphaned(dep.object.metadata!.uid!);
  }

  private collectIfOrphaned(uid: string): void {
    const found = this.store.byUidLookup(uid);
    if (!found) return;
    const refs = found.object.metadata?.ownerReferences ?? [];
    if (refs.length === 0) return;
    const alive = refs.filter((r) => this.store.byUidLookup(r.uid) !== undefined);
    if (alive.length > 0) return;
    const type = this.typeOfKey(found.key);
    if (type && !found.object.metadata?.deletionTimestamp)
      this.delete(type, found.object, "Background");
  }

  private purgeNamespace(name: string): void {
    for (const key of this.store.keys()) {
      const type = this.typeOfKey(key);
      if (!type?.namespaced) continue;
      for (const obj of this.store.list(key, name)) this.removeNow(type, obj, "Background");
    }
    const nsType = this.registry.lookup("", "v1", "namespaces")!;
    const ns = this.get(nsType, undefined, name);
    if (ns) this.store.remove(storageKey(nsType), ns);
  }
}

export function preconditionFailed(
  type: ResourceType,
  name: string,
  what: "UID" | "ResourceVersion",
  want: string,
  have: string,
): ApiError {
  return conflict(
    type,
    name,
    `Precondition failed: ${what} in precondition: ${want}, ${what} in object meta: ${have}`,
  );
}

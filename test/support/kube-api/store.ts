// Object storage: one bucket per resource (group/plural), keyed by namespace/name; a global
// resourceVersion counter; an index of objects by uid and of dependents by owner uid; and the
// log of watch events (bounded) that watches replay from a resourceVersion.
import { type KObject, clone } from "./types.js";

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoreEvent {
  rv: number;
  key: string;
  type: EventType;
  object: KObject;
  /** The object before a MODIFIED event. */
  previous?: KObject;
}

export function objectId(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

export class Store {
  private rv = 1000;
  private readonly buckets = new Map<string, Map<string, KObject>>();
  private readonly byUid = new Map<string, { key: string; id: string }>();
  private readonly dependents = new Map<string, Set<string>>();
  private readonly log: StoreEvent[] = [];
  /** Oldest resourceVersion a watch can still start from. */
  private oldest = 1000;
  private readonly listeners = new Set<(event: StoreEvent) => void>();

  constructor(private readonly logLimit: number) {}

  get resourceVersion(): string {
    return String(this.rv);
  }

  private bucket(key: string): Map<string, KObject> {
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = new Map<string, KObject>()));
    return bucket;
  }

  /** The stored object (not a copy: callers must not change it). */
  get(key: string, namespace: string | undefined, name: string): KObject | undefined {
    return this.buckets.get(key)?.get(objectId(namespace, name));
  }

  /** Stored objects of a resource, in one namespace or all, sorted by namespace/name. */
  list(key: string, namespace?: string): KObject[] {
    const bucket = this.buckets.get(key);
    if (!bucket) return [];
    const ids = [...bucket.keys()].sort();
    const out: KObject[] = [];
    for (const id of ids) {
      if (namespace !== undefined && !id.startsWith(`${namespace}/`)) continue;
      out.push(bucket.get(id)!);
    }
    return out;
  }

  keys(): string[] {
    return [...this.buckets.keys()];
  }

  byUidLookup(uid: string): { key: string; object: KObject } | undefined {
    const at = this.byUid.get(uid);
    if (!at) return undefined;
    const object = this.buckets.get(at.key)?.get(at.id);
    return object ? { key: at.key, object } : undefined;
  }

  dependentsOf(uid: string): { key: string; object: KObject }[] {
    const out: { key: string; object: KObject }[] = [];
    for (const dep of this.dependents.get(uid) ?? []) {
      const found = this.byUidLookup(dep);
      if (found) out.push(found);
    }
    return out;
  }

  private index(obj: KObject, add: boolean): void {
    const uid = obj.metadata?.uid;
    if (!uid) return;
    for (const ref of obj.metadata?.ownerReferences ?? []) {
      let set = this.dependents.get(ref.uid);
      if (add) {
        if (!set) this.dependents.set(ref.uid, (set = new Set()));
        set.add(uid);
      } else {
        set?.delete(uid);
        if (set?.size === 0) this.dependents.delete(ref.uid);
      }
    }
  }

  /** Stores `obj` (taking ownership of it) with a new resourceVersion and emits the event. */
  put(key: string, obj: KObject): KObject {
    const meta = obj.metadata!;
    const id = objectId(meta.namespace, meta.name!);
    const bucket = this.bucket(key);
    const previous = bucket.get(id);
    meta.resourceVersion = String(++this.rv);
    if (previous) this.index(previous, false);
    bucket.set(id, obj);
    this.byUid.set(meta.uid!, { key, id });
    this.index(obj, true);
    this.emit(
      previous
        ? { rv: this.rv, key, type: "MODIFIED", object: obj, previous }
        : { rv: this.rv, key, type: "ADDED", object: obj },
    );
    return obj;
  }

  remove(key: string, obj: KObject): KObject | undefined {
    const meta = obj.metadata!;
    const id = objectId(meta.namespace, meta.name!);
    const bucket = this.buckets.get(key);
    const stored = bucket?.get(id);
    if (!bucket || !stored) return undefined;
    bucket.delete(id);
    this.byUid.delete(stored.metadata!.uid!);
    this.index(stored, false);
    const gone = clone(stored);
    gone.metadata!.resourceVersion = String(++this.rv);
    this.emit({ rv: this.rv, key, type: "DELETED", object: gone });
    return gone;
  }

  private emit(event: StoreEvent): void {
    this.log.push(event);
    if (this.log.length > this.logLimit) {
      const dropped = this.log.splice(0, this.log.length - this.logLimit);
      this.oldest = dropped[dropped.length - 1]!.rv;
    }
    for (const listener of this.listeners) listener(event);
  }

  /** Events after `rv` for `key`, or undefined when `rv` is older than the log keeps. */
  eventsSince(key: string, rv: number): StoreEvent[] | undefined {
    if (rv < this.oldest) return undefined;
    return this.log.filter((e) => e.rv > rv && e.key === key);
  }

  /** Forgets the event log (watches from an older resourceVersion get 410 Gone). */
  compact(): void {
    this.log.length = 0;
    this.oldest = this.rv;
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

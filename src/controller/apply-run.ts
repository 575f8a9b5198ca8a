// The bookkeeping of one revision's apply against the previous inventory: which planned objects
// must be sent (new, changed since last sent, or still missing their owner's uid), the
// inventory entry each leaves, the owner reference each is sent with, and what changed.
import type { KubeObject } from "../synth/model.js";
import type { ObjectChange } from "./applier.js";
import { objectHash, ownerOfPlanned, withOwner } from "./cluster-plan.js";
import { type PlannedObject, objectName } from "./revision-plan.js";
import type { InventoryEntry } from "./inventory.js";
import type { LiveObject } from "../infra/kube/client.js";

export class ApplyRun {
  readonly previous: ReadonlyMap<string, InventoryEntry>;
  /** Entries of the objects handled so far (sent or unchanged), by key. */
  readonly next = new Map<string, InventoryEntry>();
  readonly changes: ObjectChange[] = [];
  applied = 0;
  unchanged = 0;
  /** Hash of each object as needsWrite last computed it. */
  private readonly hashes = new Map<string, string>();
  private readonly onChange: ((c: ObjectChange) => void) | undefined;

  constructor(
    previous: ReadonlyMap<string, InventoryEntry>,
    opts: { onChange?: (c: ObjectChange) => void } = {},
  ) {
    this.previous = previous;
    this.onChange = opts.onChange;
  }

  /** The owner reference of a planned object, once its owner's uid is known. */
  private ownerRef(p: PlannedObject) {
    return ownerOfPlanned(p, (key) => this.next.get(key) ?? this.previous.get(key));
  }

  /** The object as sent: with its owner reference once the owner's uid is known. */
  sent(p: PlannedObject): KubeObject {
    return withOwner(p.object, this.ownerRef(p));
  }

  /**
   * True when the object must be sent whatever the cluster holds: new, changed since last sent,
   * or its owner's uid now known. The others are sent only when they drifted (drift-check.ts).
   */
  needsWrite(p: PlannedObject): boolean {
    const owner = this.ownerRef(p);
    const hash = objectHash(withOwner(p.object, owner));
    this.hashes.set(p.key, hash);
    const prev = this.previous.get(p.key);
    return (
      prev === undefined || prev.hash !== hash || (p.owner !== undefined && owner === undefined)
    );
  }

  /** The inventory entry of a planned object; custom resources keep their uid and generation. */
  entry(p: PlannedObject, hash: string, live?: LiveObject): InventoryEntry {
    const prev = this.previous.get(p.key);
    const uid = live?.metadata.uid ?? prev?.uid;
    const generation = live?.metadata.generation ?? prev?.generation;
    const { apiVersion, kind, metadata } = p.object;
    return {
      apiVersion,
      kind,
      ...(metadata.namespace !== undefined ? { namespace: metadata.namespace } : {}),
      name: metadata.name,
      hash,
      ...(p.stage === "config" || p.stage === "resources"
        ? {
            ...(uid !== undefined ? { uid } : {}),
            ...(generation !== undefined ? { generation } : {}),
          }
        : {}),
    };
  }

  /**
   * The previous inventory plus every object about to be written (hash "" until confirmed):
   * recorded before the first write, so a controller stopped mid-apply leaves nothing outside it.
   */
  provisional(plan: readonly PlannedObject[]): Map<string, InventoryEntry> {
    const out = new Map(this.previous);
    for (const p of plan) {
      if (!out.has(p.key) && this.needsWrite(p)) out.set(p.key, this.entry(p, ""));
    }
    return out;
  }

  /** Records an object needsWrite found unchanged. */
  keepUnchanged(p: PlannedObject): void {
    this.next.set(p.key, this.entry(p, this.hashes.get(p.key) ?? objectHash(this.sent(p))));
    this.unchanged++;
    this.changes.push({ object: objectName(p.object), action: "unchanged" });
  }

  /** Records a write: the object as sent, what the server returned, and whether it was recreated. */
  written(p: PlannedObject, sent: KubeObject, live: LiveObject, recreated?: string): void {
    const existed = this.previous.has(p.key);
    this.next.set(p.key, this.entry(p, objectHash(sent), live));
    this.applied++;
    this.note({
      object: objectName(p.object) + (recreated !== undefined ? ` (${recreated})` : ""),
      action: recreated !== undefined ? "recreated" : existed ? "configured" : "created",
    });
  }

  note(c: ObjectChange): void {
    this.changes.push(c);
    if (c.action !== "unchanged") this.onChange?.(c);
  }
}

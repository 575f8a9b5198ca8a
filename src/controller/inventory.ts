// The apply inventory: which objects the controller applied, with the hash of what it sent and,
// for custom resources, their uid and generation. Kept in a ConfigMap in the controller's
// namespace (gzip'd JSON, so 5,000 objects fit in a fraction of the 1 MiB limit), next to the
// revision those objects came from. Prune deletes only what is in it; a restart reads it back, so
// unchanged objects are not re-sent after a restart either.
import { gunzipSync, gzipSync } from "node:zlib";
import { MANAGED_BY } from "../synth/labels.js";
import { type KubeClient, type KubeObjectRef, KubeApiError } from "../infra/kube/client.js";

export interface InventoryEntry {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** Hash of the object as last sent; "" when a write was started but not confirmed. */
  hash: string;
  uid?: string;
  generation?: number;
}

export interface Inventory {
  revision: string;
  entries: Map<string, InventoryEntry>;
}

const KEY = "inventory.json.gz";

export class InventoryStore {
  readonly name: string;
  readonly namespace: string;
  private readonly client: KubeClient;
  private readonly fieldManager: string;

  constructor(client: KubeClient, opts: { name: string; namespace: string; fieldManager: string }) {
    this.client = client;
    this.name = opts.name;
    this.namespace = opts.namespace;
    this.fieldManager = opts.fieldManager;
  }

  private ref() {
    return {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: this.name, namespace: this.namespace },
    };
  }

  async read(): Promise<Inventory | undefined> {
    const live = await this.client.get(this.ref());
    if (live === undefined) return undefined;
    const binary = (live.binaryData as Record<string, string> | undefined)?.[KEY];
    const data = live.data as Record<string, string> | undefined;
    if (binary === undefined) return { revision: data?.revision ?? "", entries: new Map() };
    const list = JSON.parse(gunzipSync(Buffer.from(binary, "base64")).toString("utf8")) as [
      string,
      InventoryEntry,
    ][];
    return { revision: data?.revision ?? "", entries: new Map(list) };
  }

  async write(inventory: Inventory): Promise<void> {
    const body = gzipSync(JSON.stringify([...inventory.entries]));
    const cm = {
      ...this.ref(),
      metadata: {
        ...this.ref().metadata,
        labels: { "app.kubernetes.io/managed-by": MANAGED_BY, "mcpfleet.dev/inventory": "true" },
      },
      data: { revision: inventory.revision, objects: String(inventory.entries.size) },
      binaryData: { [KEY]: body.toString("base64") },
    };
    await applyInOwnNamespace(this.client, cm, this.fieldManager);
  }
}

/** The inventory ConfigMap's name for a field manager: `<field manager>-inventory`. */
export function inventoryName(fieldManager: string): string {
  return `${fieldManager}-inventory`;
}

/**
 * Server-side apply of an object of the controller's namespace, creating the namespace when it
 * is missing (a plain kubeconfig, no install bundle).
 */
export async function applyInOwnNamespace(
  client: KubeClient,
  obj: KubeObjectRef,
  fieldManager: string,
): Promise<void> {
  try {
    await client.apply(obj, { fieldManager });
  } catch (err) {
    const namespace = obj.metadata.namespace;
    if (!(err instanceof KubeApiError && err.status === 404) || namespace === undefined) throw err;
    await client.apply(
      { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
      { fieldManager },
    );
    await client.apply(obj, { fieldManager });
  }
}

export function sameEntries(
  a: ReadonlyMap<string, InventoryEntry>,
  b: ReadonlyMap<string, InventoryEntry>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (w === undefined || w.hash !== v.hash || w.uid !== v.uid || w.generation !== v.generation)
      return false;
  }
  return true;
}

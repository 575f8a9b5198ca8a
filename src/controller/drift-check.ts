// Which objects the inventory calls unchanged have nevertheless drifted in the cluster: deleted,
// or a field we set changed by someone else. Read with one LIST per kind and namespace (our
// managed-by label selects ours, pages of 500) instead of one GET per object, and compared field by
// field: an object is kept when every field it sets has the same value live, whatever the server
// defaulted or others added beside it. What differs or is missing is sent again; a kind the writer
// may not list (or the server does not serve) is sent whole, as before this check existed.
import { MANAGED_BY } from "../synth/labels.js";
import type { KubeObject } from "../synth/model.js";
import { KubeApiError, type KubeClient, type LiveObject } from "../infra/kube/client.js";
import { MANAGED_BY_LABEL } from "./cluster-plan.js";
import { eachLimit } from "./each-limit.js";
import { objectKey } from "./revision-plan.js";

/** Lists of a drift check in flight at once. */
const LISTS_IN_FLIGHT = 4;

/** True when every field `desired` sets has the same value in `live` (lists: same length). */
export function holds(desired: unknown, live: unknown): boolean {
  if (desired === null) return live === null || live === undefined;
  if (Array.isArray(desired)) {
    return (
      Array.isArray(live) &&
      live.length === desired.length &&
      desired.every((d, i) => holds(d, live[i]))
    );
  }
  if (typeof desired === "object") {
    if (typeof live !== "object" || live === null || Array.isArray(live)) return false;
    const l = live as Record<string, unknown>;
    return Object.entries(desired).every(([k, v]) => v === undefined || holds(v, l[k]));
  }
  return desired === live;
}

/** Objects of one kind in one namespace (cluster-scoped: namespace ""). */
function groupKey(o: KubeObject): string {
  return `${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ""}`;
}

/**
 * The keys of the objects of `desired` (as they would be sent) that are missing live or differ in
 * a field they set, and the live objects read. `client` reads; `marked` is false for objects sent
 * without our managed-by label (our CRDs), which are read one by one instead. `retry` wraps each
 * request.
 */
export async function driftedObjects(
  client: KubeClient,
  desired: readonly KubeObject[],
  opts: { marked: boolean; retry: <T>(fn: () => Promise<T>) => Promise<T> },
): Promise<{ drifted: Set<string>; live: LiveObject[] }> {
  const groups = new Map<string, KubeObject[]>();
  for (const o of desired) {
    const k = groupKey(o);
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [o]);
    else group.push(o);
  }
  const drifted = new Set<string>();
  const read: LiveObject[] = [];
  // A few groups read at once: each list is a round trip or more, and there is one per kind and
  // namespace.
  await eachLimit([...groups.values()], LISTS_IN_FLIGHT, async (objects) => {
    const live = await liveObjects(client, objects, opts);
    if (live !== undefined) for (const l of live.values()) read.push(l);
    for (const o of objects) {
      const key = objectKey(o);
      if (live === undefined || !holds(o, live.get(key))) drifted.add(key);
    }
  });
  return { drifted, live: read };
}

/** The live objects of one group by key; undefined when they cannot be read (send them all). */
async function liveObjects(
  client: KubeClient,
  objects: readonly KubeObject[],
  opts: { marked: boolean; retry: <T>(fn: () => Promise<T>) => Promise<T> },
): Promise<Map<string, LiveObject> | undefined> {
  const first = objects[0];
  if (first === undefined) return new Map();
  try {
    const items: LiveObject[] = [];
    if (opts.marked) {
      const namespace = first.metadata.namespace;
      items.push(
        ...(await opts.retry(() =>
          client.list(first.apiVersion, first.kind, {
            ...(namespace !== undefined ? { namespace } : {}),
            labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
          }),
        )),
      );
    } else {
      for (const o of objects) {
        const live = await opts.retry(() => client.get(o));
        if (live !== undefined) items.push({ ...live, apiVersion: o.apiVersion, kind: o.kind });
      }
    }
    return new Map(items.map((l) => [objectKey(l), l]));
  } catch (err) {
    if (err instanceof KubeApiError && (err.status === 403 || err.status === 404)) return undefined;
    throw err;
  }
}

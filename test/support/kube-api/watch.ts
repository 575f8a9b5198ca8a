// Watch: a chunked response of JSON lines {type, object}. Without a resourceVersion (or "0") it
// starts with ADDED for every current object; with one it replays the events after it (410 Gone
// as an ERROR event when that is older than the event log); then streams live events. With a
// selector, an object that stops matching is sent as DELETED and one that starts as ADDED.
import type { ServerResponse } from "node:http";
import type { Cluster } from "./cluster.js";
import { badRequest, expired } from "./errors.js";
import { selectors } from "./handlers.js";
import { storageKey } from "./resource-type.js";
import type { ResourceRequest } from "./router.js";
import type { StoreEvent } from "./store.js";
import type { KObject } from "./types.js";

export function serveWatch(
  cluster: Cluster,
  request: ResourceRequest,
  query: Record<string, string>,
  res: ServerResponse,
  onOpen: (close: () => void) => () => void,
): void {
  const { type, version, namespace } = request;
  const key = storageKey(type);
  const filters = selectors(type, query);
  const matches = (obj: KObject): boolean =>
    (namespace === undefined || obj.metadata?.namespace === namespace) &&
    filters.every((f) => f(obj));
  const rvParam = query.resourceVersion;
  let replay: StoreEvent[] | undefined = [];
  if (rvParam !== undefined && rvParam !== "" && rvParam !== "0") {
    const rv = Number(rvParam);
    if (!Number.isInteger(rv) || rv < 0) throw badRequest(`invalid resource version: ${rvParam}`);
    replay = cluster.store.eventsSince(key, rv);
  }

  res.writeHead(200, {
    "Content-Type": "application/json",
    "Transfer-Encoding": "chunked",
    "Cache-Control": "no-cache, private",
  });
  res.flushHeaders();
  const send = (eventType: string, object: unknown): void => {
    res.write(`${JSON.stringify({ type: eventType, object })}\n`);
  };
  const deliver = (event: StoreEvent): void => {
    if (event.key !== key) return;
    const now = matches(event.object);
    const present = () => cluster.view(type, version, event.object);
    if (event.type === "MODIFIED" && event.previous) {
      const before = matches(event.previous);
      if (before && now) send("MODIFIED", present());
      else if (!before && now) send("ADDED", present());
      else if (before && !now) send("DELETED", present());
      return;
    }
    if (now) send(event.type, present());
  };

  if (replay === undefined) {
    const status = expired(
      `too old resource version: ${rvParam} (${cluster.store.resourceVersion})`,
    ).toStatus();
    send("ERROR", status);
    res.end();
    return;
  }
  if (rvParam === undefined || rvParam === "" || rvParam === "0") {
    for (const obj of cluster.store.list(key, namespace))
      if (matches(obj)) send("ADDED", cluster.view(type, version, obj));
  } else {
    for (const event of replay) deliver(event);
  }

  let timer: NodeJS.Timeout | undefined;
  let unregister = (): void => {};
  let unsubscribe = (): void => {};
  const close = (): void => {
    unsubscribe();
    unregister();
    if (timer) clearTimeout(timer);
    if (!res.writableEnded) res.end();
  };
  unsubscribe = cluster.store.subscribe(deliver);
  unregister = onOpen(close);
  const timeout = Number(query.timeoutSeconds ?? 0);
  if (timeout > 0) timer = setTimeout(close, timeout * 1000);
  res.on("close", close);
}

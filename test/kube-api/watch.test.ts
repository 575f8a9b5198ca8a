import {
  CoreV1Api,
  type KubernetesObject,
  type V1ConfigMap,
  Watch,
  makeInformer,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { eventually } from "./helpers.js";

let api: KubeApi;
let core: CoreV1Api;

beforeAll(async () => {
  api = await startKubeApi();
  core = api.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: "w" } } });
});
afterAll(() => api.stop());

interface Seen {
  type: string;
  name: string;
  data?: Record<string, string>;
}

async function watch(path: string, query: Record<string, string>) {
  const events: Seen[] = [];
  let ended: unknown = "open";
  const controller = await new Watch(api.kubeConfig()).watch(
    path,
    query,
    (type: string, obj: V1ConfigMap) =>
      events.push({ type, name: obj.metadata?.name ?? "", data: obj.data }),
    (err: unknown) => (ended = err ?? null),
  );
  return { events, controller, ended: () => ended };
}

describe("watch", () => {
  test("streams ADDED, MODIFIED and DELETED; starts with the current objects", async () => {
    await core.createNamespacedConfigMap({ namespace: "w", body: { metadata: { name: "pre" } } });
    const w = await watch("/api/v1/namespaces/w/configmaps", {});
    await core.createNamespacedConfigMap({
      namespace: "w",
      body: { metadata: { name: "live" }, data: { v: "1" } },
    });
    await core.patchNamespacedConfigMap({
      namespace: "w",
      name: "live",
      body: [{ op: "replace", path: "/data/v", value: "2" }],
    });
    await core.deleteNamespacedConfigMap({ namespace: "w", name: "live" });
    await eventually(() => expect(w.events).toHaveLength(4));
    expect(w.events).toEqual([
      { type: "ADDED", name: "pre" },
      { type: "ADDED", name: "live", data: { v: "1" } },
      { type: "MODIFIED", name: "live", data: { v: "2" } },
      { type: "DELETED", name: "live", data: { v: "2" } },
    ]);
    w.controller.abort();
  });

  test("resumes from a resourceVersion with the events after it", async () => {
    const list = await core.listNamespacedConfigMap({ namespace: "w" });
    await core.createNamespacedConfigMap({ namespace: "w", body: { metadata: { name: "after" } } });
    const w = await watch("/api/v1/namespaces/w/configmaps", {
      resourceVersion: list.metadata!.resourceVersion!,
    });
    await eventually(() => expect(w.events).toEqual([{ type: "ADDED", name: "after" }]));
    w.controller.abort();
  });

  test("a resourceVersion older than the event log gets a 410 Expired ERROR event", async () => {
    const list = await core.listNamespacedConfigMap({ namespace: "w" });
    await core.createNamespacedConfigMap({
      namespace: "w",
      body: { metadata: { name: "compacted" } },
    });
    api.compactEvents();
    const events: { type: string; obj: { code?: number; reason?: string } }[] = [];
    await new Watch(api.kubeConfig()).watch(
      "/api/v1/namespaces/w/configmaps",
      { resourceVersion: list.metadata!.resourceVersion! },
      (type: string, obj: { code?: number; reason?: string }) => events.push({ type, obj }),
      () => undefined,
    );
    await eventually(() => expect(events).toHaveLength(1));
    expect(events[0]).toMatchObject({ type: "ERROR", obj: { code: 410, reason: "Expired" } });
  });

  test("with a label selector, objects entering and leaving the selection are ADDED and DELETED", async () => {
    const w = await watch("/api/v1/namespaces/w/configmaps", { labelSelector: "pick=yes" });
    await core.createNamespacedConfigMap({
      namespace: "w",
      body: { metadata: { name: "sel", labels: { pick: "no" } } },
    });
    await core.patchNamespacedConfigMap({
      namespace: "w",
      name: "sel",
      body: [{ op: "replace", path: "/metadata/labels/pick", value: "yes" }],
    });
    await core.patchNamespacedConfigMap({
      namespace: "w",
      name: "sel",
      body: [{ op: "add", path: "/data", value: { k: "v" } }],
    });
    await core.patchNamespacedConfigMap({
      namespace: "w",
      name: "sel",
      body: [{ op: "replace", path: "/metadata/labels/pick", value: "no" }],
    });
    await eventually(() =>
      expect(w.events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]),
    );
    w.controller.abort();
  });

  test("field selector on metadata.name watches one object; other namespaces are not seen", async () => {
    const w = await watch("/api/v1/namespaces/w/configmaps", {
      fieldSelector: "metadata.name=only",
    });
    await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "only" } },
    });
    await core.createNamespacedConfigMap({ namespace: "w", body: { metadata: { name: "other" } } });
    await core.createNamespacedConfigMap({ namespace: "w", body: { metadata: { name: "only" } } });
    await eventually(() => expect(w.events).toEqual([{ type: "ADDED", name: "only" }]));
    w.controller.abort();
  });

  test("timeoutSeconds ends the stream; closeWatches ends every stream", async () => {
    const timed = await watch("/api/v1/namespaces/w/configmaps", { timeoutSeconds: "1" });
    await eventually(() => expect(timed.ended()).toBeNull(), 3000);
    const open = await watch("/api/v1/namespaces/w/configmaps", {});
    api.closeWatches();
    await eventually(() => expect(open.ended()).toBeNull());
  });
});

describe("informer", () => {
  test("lists, then follows changes; resumes from its resourceVersion after the server closes the watch", async () => {
    await core.createNamespace({ body: { metadata: { name: "inf" } } });
    await core.createNamespacedConfigMap({
      namespace: "inf",
      body: { metadata: { name: "first" } },
    });
    const informer = makeInformer<V1ConfigMap>(
      api.kubeConfig(),
      "/api/v1/namespaces/inf/configmaps",
      () => core.listNamespacedConfigMap({ namespace: "inf" }),
    );
    const added: string[] = [];
    const updated: string[] = [];
    const deleted: string[] = [];
    informer.on("add", (o: KubernetesObject) => added.push(o.metadata!.name!));
    informer.on("update", (o: KubernetesObject) => updated.push(o.metadata!.name!));
    informer.on("delete", (o: KubernetesObject) => deleted.push(o.metadata!.name!));
    await informer.start();
    await eventually(() => expect(added).toEqual(["first"]));
    await core.createNamespacedConfigMap({
      namespace: "inf",
      body: { metadata: { name: "second" } },
    });
    await core.patchNamespacedConfigMap({
      namespace: "inf",
      name: "first",
      body: [{ op: "add", path: "/data", value: { a: "b" } }],
    });
    await eventually(() => expect(added).toEqual(["first", "second"]));
    await eventually(() => expect(updated).toEqual(["first"]));
    api.closeWatches();
    await core.deleteNamespacedConfigMap({ namespace: "inf", name: "second" });
    await eventually(() => expect(deleted).toEqual(["second"]));
    expect(informer.list("inf").map((o) => o.metadata?.name)).toEqual(["first"]);
    await informer.stop();
  });
});

import {
  AppsV1Api,
  CoreV1Api,
  type V1ConfigMap,
  type V1OwnerReference,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { deployment, eventually, failure } from "./helpers.js";

let api: KubeApi;
let core: CoreV1Api;
let apps: AppsV1Api;

beforeAll(async () => {
  api = await startKubeApi();
  core = api.kubeConfig().makeApiClient(CoreV1Api);
  apps = api.kubeConfig().makeApiClient(AppsV1Api);
});
afterAll(() => api.stop());

async function owner(name: string): Promise<V1OwnerReference> {
  const d = await apps.createNamespacedDeployment({ namespace: "default", body: deployment(name) });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    name,
    uid: d.metadata!.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

function dependent(name: string, owners: V1OwnerReference[]): Promise<V1ConfigMap> {
  return core.createNamespacedConfigMap({
    namespace: "default",
    body: { metadata: { name, ownerReferences: owners } },
  });
}

const exists = async (name: string) =>
  core.readNamespacedConfigMap({ namespace: "default", name }).then(
    () => true,
    () => false,
  );

describe("ownerReference garbage collection", () => {
  test("background (default): deleting the owner deletes its dependents, and theirs", async () => {
    const ref = await owner("bg");
    const child = await dependent("bg-child", [ref]);
    await dependent("bg-grandchild", [
      { apiVersion: "v1", kind: "ConfigMap", name: "bg-child", uid: child.metadata!.uid! },
    ]);
    await apps.deleteNamespacedDeployment({ namespace: "default", name: "bg" });
    await eventually(async () => expect(await exists("bg-child")).toBe(false));
    await eventually(async () => expect(await exists("bg-grandchild")).toBe(false));
  });

  test("foreground: dependents are gone when the delete returns", async () => {
    const ref = await owner("fg");
    await dependent("fg-child", [ref]);
    await apps.deleteNamespacedDeployment({
      namespace: "default",
      name: "fg",
      propagationPolicy: "Foreground",
    });
    expect(await exists("fg-child")).toBe(false);
  });

  test("orphan: dependents stay, without the owner reference", async () => {
    const ref = await owner("or");
    await dependent("or-child", [ref]);
    await apps.deleteNamespacedDeployment({
      namespace: "default",
      name: "or",
      propagationPolicy: "Orphan",
    });
    await new Promise((r) => setTimeout(r, 20));
    const child = await core.readNamespacedConfigMap({ namespace: "default", name: "or-child" });
    expect(child.metadata?.ownerReferences).toBeUndefined();
  });

  test("a dependent with another live owner stays", async () => {
    const a = await owner("multi-a");
    const b = await owner("multi-b");
    await dependent("multi-child", [a, { ...b, controller: false }]);
    await apps.deleteNamespacedDeployment({ namespace: "default", name: "multi-a" });
    await new Promise((r) => setTimeout(r, 20));
    expect(await exists("multi-child")).toBe(true);
  });

  test("an object whose owners do not exist is collected", async () => {
    await dependent("dangling", [
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: "ghost",
        uid: "00000000-0000-0000-0000-000000000000",
      },
    ]);
    await eventually(async () => expect(await exists("dangling")).toBe(false));
  });
});

describe("finalizers and namespaces", () => {
  test("an object with finalizers gets a deletionTimestamp and goes when they are removed", async () => {
    await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "fin", finalizers: ["example.com/hold"] } },
    });
    const deleting = await core.deleteNamespacedConfigMap({ namespace: "default", name: "fin" });
    expect(deleting).toBeDefined();
    const held = await core.readNamespacedConfigMap({ namespace: "default", name: "fin" });
    expect(held.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await core.patchNamespacedConfigMap({
      namespace: "default",
      name: "fin",
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
    expect(await exists("fin")).toBe(false);
  });

  test("deleting a namespace terminates it, deletes its contents, then the namespace", async () => {
    await core.createNamespace({ body: { metadata: { name: "doomed" } } });
    await core.createNamespacedConfigMap({
      namespace: "doomed",
      body: { metadata: { name: "inside" } },
    });
    const ns = await core.deleteNamespace({ name: "doomed" });
    expect(ns).toBeDefined();
    await eventually(async () =>
      expect((await failure(core.readNamespace({ name: "doomed" }))).code).toBe(404),
    );
    expect(
      (await failure(core.readNamespacedConfigMap({ namespace: "doomed", name: "inside" }))).code,
    ).toBe(404);
  });

  test("creating in a terminating namespace is 403 Forbidden", async () => {
    const slow = await startKubeApi({ namespaceDeletionDelayMs: 300 });
    try {
      const slowCore = slow.kubeConfig().makeApiClient(CoreV1Api);
      await slowCore.createNamespace({ body: { metadata: { name: "closing" } } });
      await slowCore.deleteNamespace({ name: "closing" });
      expect((await slowCore.readNamespace({ name: "closing" })).status?.phase).toBe("Terminating");
      const { code, status } = await failure(
        slowCore.createNamespacedConfigMap({
          namespace: "closing",
          body: { metadata: { name: "late" } },
        }),
      );
      expect(code).toBe(403);
      expect(status.message).toContain("because it is being terminated");
      await eventually(async () =>
        expect((await failure(slowCore.readNamespace({ name: "closing" }))).code).toBe(404),
      );
    } finally {
      await slow.stop();
    }
  });

  test("deletecollection by label selector", async () => {
    for (const name of ["dc-1", "dc-2", "dc-keep"]) {
      await core.createNamespacedConfigMap({
        namespace: "default",
        body: { metadata: { name, labels: { batch: name === "dc-keep" ? "keep" : "drop" } } },
      });
    }
    await core.deleteCollectionNamespacedConfigMap({
      namespace: "default",
      labelSelector: "batch=drop",
    });
    const left = await core.listNamespacedConfigMap({
      namespace: "default",
      labelSelector: "batch",
    });
    expect(left.items.map((i) => i.metadata?.name)).toEqual(["dc-keep"]);
  });
});

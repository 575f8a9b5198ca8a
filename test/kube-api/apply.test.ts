import {
  CoreV1Api,
  KubernetesObjectApi,
  type KubernetesObject,
  PatchStrategy,
  type V1ConfigMap,
  type V1Deployment,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { deployment, failure } from "./helpers.js";

let api: KubeApi;
let client: KubernetesObjectApi;
let core: CoreV1Api;

beforeAll(async () => {
  api = await startKubeApi();
  client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  core = api.kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(() => api.stop());

function apply<T extends KubernetesObject>(
  obj: T,
  manager = "mcpfleet",
  force = false,
): Promise<T> {
  return client.patch(obj, undefined, undefined, manager, force, PatchStrategy.ServerSideApply);
}

function configMap(
  name: string,
  data: Record<string, string>,
  labels?: Record<string, string>,
): V1ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "default", ...(labels ? { labels } : {}) },
    data,
  };
}

function managersOf(obj: KubernetesObject) {
  return (obj.metadata?.managedFields ?? []).map((m) => ({
    manager: m.manager,
    operation: m.operation,
    fields: m.fieldsV1 as unknown,
  }));
}

describe("server-side apply", () => {
  test("creates an absent object and records the manager's fields (FieldsV1, operation Apply)", async () => {
    const created = await apply(configMap("ssa", { a: "1", b: "2" }, { app: "x" }));
    expect(created.data).toEqual({ a: "1", b: "2" });
    expect(managersOf(created)).toEqual([
      {
        manager: "mcpfleet",
        operation: "Apply",
        fields: {
          "f:data": { "f:a": {}, "f:b": {} },
          "f:metadata": { "f:labels": { "f:app": {} } },
        },
      },
    ]);
    const entry = created.metadata?.managedFields?.[0];
    expect(entry?.apiVersion).toBe("v1");
    expect(entry?.fieldsType).toBe("FieldsV1");
  });

  test("re-applying the same configuration is a no-op: resourceVersion unchanged", async () => {
    const before = await core.readNamespacedConfigMap({ namespace: "default", name: "ssa" });
    const after = await apply(configMap("ssa", { a: "1", b: "2" }, { app: "x" }));
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
  });

  test("fields a manager stops applying are removed when nobody else owns them", async () => {
    const after = await apply(configMap("ssa", { a: "1" }));
    expect(after.data).toEqual({ a: "1" });
    expect(after.metadata?.labels).toBeUndefined();
    expect(managersOf(after)[0]?.fields).toEqual({ "f:data": { "f:a": {} } });
  });

  test("a field another manager owns with a different value is a 409 conflict naming field and manager", async () => {
    await apply(configMap("shared", { owner: "one", common: "same" }), "manager-one");
    const { code, status } = await failure(
      apply(configMap("shared", { owner: "two", common: "same" }), "manager-two"),
    );
    expect(code).toBe(409);
    expect(status.reason).toBe("Conflict");
    expect(status.message).toBe(
      'Apply failed with 1 conflict: conflict with "manager-one" using v1: .data.owner',
    );
    expect(status.details?.causes).toEqual([
      {
        reason: "FieldManagerConflict",
        message: 'conflict with "manager-one" using v1',
        field: ".data.owner",
      },
    ]);
  });

  test("the same value is shared ownership, not a conflict; a field stays while another manager still owns it", async () => {
    const both = await apply(configMap("shared", { common: "same", mine: "2" }), "manager-two");
    const owners = managersOf(both);
    expect(owners.map((o) => o.manager).sort()).toEqual(["manager-one", "manager-two"]);
    expect(owners.find((o) => o.manager === "manager-two")?.fields).toEqual({
      "f:data": { "f:common": {}, "f:mine": {} },
    });
    const after = await apply(configMap("shared", { owner: "one" }), "manager-one");
    expect(after.data).toEqual({ owner: "one", common: "same", mine: "2" });
  });

  test("force takes the field over from the other manager", async () => {
    const forced = await apply(
      configMap("shared", { owner: "two", common: "same", mine: "2" }),
      "manager-two",
      true,
    );
    expect(forced.data?.owner).toBe("two");
    const one = managersOf(forced).find((o) => o.manager === "manager-one");
    expect(one).toBeUndefined();
    const two = managersOf(forced).find((o) => o.manager === "manager-two");
    expect(two?.fields).toEqual({ "f:data": { "f:common": {}, "f:mine": {}, "f:owner": {} } });
  });

  test("associative lists merge by key: two managers each own their container", async () => {
    const base = deployment("lists");
    await apply(base, "deployer");
    const sidecar = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "lists", namespace: "default" },
      spec: { template: { spec: { containers: [{ name: "sidecar", image: "envoy:1" }] } } },
    };
    const merged = await apply(sidecar, "injector");
    expect(merged.spec?.template.spec?.containers.map((c) => c.name)).toEqual(["main", "sidecar"]);
    const injector = managersOf(merged).find((m) => m.manager === "injector");
    expect(injector?.fields).toEqual({
      "f:spec": {
        "f:template": {
          "f:spec": {
            "f:containers": { 'k:{"name":"sidecar"}': { ".": {}, "f:image": {}, "f:name": {} } },
          },
        },
      },
    });
    const conflict = await failure(
      apply(
        {
          ...sidecar,
          spec: { template: { spec: { containers: [{ name: "main", image: "nginx:2" }] } } },
        },
        "injector",
      ),
    );
    expect(conflict.status.details?.causes?.[0]?.field).toBe(
      '.spec.template.spec.containers[name="main"].image',
    );
    const dropped = await apply(deployment("lists"), "deployer");
    expect(dropped.spec?.template.spec?.containers.map((c) => c.name)).toEqual(["main", "sidecar"]);
    const injectorGone = await apply(
      { ...sidecar, spec: { template: { spec: { containers: [] } } } } as unknown as V1Deployment,
      "injector",
    );
    expect(injectorGone.spec?.template.spec?.containers.map((c) => c.name)).toEqual(["main"]);
  });

  test("an Update (replace) takes ownership of the fields it changes", async () => {
    const current = await core.readNamespacedConfigMap({ namespace: "default", name: "ssa" });
    const updated = await core.replaceNamespacedConfigMap({
      namespace: "default",
      name: "ssa",
      fieldManager: "editor",
      body: { ...current, data: { a: "edited" } },
    });
    const owners = managersOf(updated);
    expect(owners.find((o) => o.manager === "editor")).toEqual({
      manager: "editor",
      operation: "Update",
      fields: { "f:data": { "f:a": {} } },
    });
    expect(owners.find((o) => o.manager === "mcpfleet")).toBeUndefined();
    const conflict = await failure(apply(configMap("ssa", { a: "1" })));
    expect(conflict.status.message).toBe(
      'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a',
    );
    const again = await apply(configMap("ssa", { a: "1" }), "mcpfleet", true);
    expect(again.data?.a).toBe("1");
    expect(managersOf(again).find((o) => o.manager === "editor")).toBeUndefined();
  });

  test("an applied change to an immutable field is 422, as a replace would be", async () => {
    await apply(deployment("immutable"));
    const changed = deployment("immutable", "renamed");
    const { code, status } = await failure(apply(changed));
    expect(code).toBe(422);
    expect(status.details?.causes?.map((c) => c.field)).toEqual(["spec.selector"]);
    expect(
      api
        .objects({ apiVersion: "apps/v1", kind: "Deployment", namespace: "default" })
        .find((d) => d.metadata?.name === "immutable")?.metadata?.labels,
    ).toEqual({ app: "immutable" });
  });

  test("fields set by a plain create belong to its manager: applying other values conflicts", async () => {
    await core.createNamespacedConfigMap({
      namespace: "default",
      fieldManager: "kubectl-create",
      body: { metadata: { name: "created" }, data: { k: "manual" } },
    });
    const { status } = await failure(apply(configMap("created", { k: "gitops" })));
    expect(status.details?.causes).toEqual([
      {
        reason: "FieldManagerConflict",
        message: 'conflict with "kubectl-create" using v1',
        field: ".data.k",
      },
    ]);
    expect((await apply(configMap("created", { k: "gitops" }), "mcpfleet", true)).data).toEqual({
      k: "gitops",
    });
  });

  test("managedFields: [{}] in an update clears the recorded ownership", async () => {
    await apply(configMap("reset", { a: "1" }));
    const cleared = await client.patch(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "reset", namespace: "default", managedFields: [{}] },
      },
      undefined,
      undefined,
      "resetter",
      undefined,
      PatchStrategy.MergePatch,
    );
    expect(cleared.metadata?.managedFields).toBeUndefined();
    const reapplied = await apply(configMap("reset", { b: "2" }));
    expect(reapplied.data).toEqual({ a: "1", b: "2" });
  });

  test("status applied to the main resource is ignored; through /status it is kept", async () => {
    const d = await apply({ ...deployment("stat"), status: { readyReplicas: 3 } });
    expect(d.status).toBeUndefined();
    const res = await fetch(
      `${api.url}/apis/apps/v1/namespaces/default/deployments/stat/status?fieldManager=probe`,
      {
        method: "PATCH",
        headers: {
          Authorization: "Bearer kube-api-double-token",
          "Content-Type": "application/apply-patch+yaml",
        },
        body: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: stat\n  namespace: default\nstatus:\n  readyReplicas: 2\n",
      },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as V1Deployment;
    expect(body.status?.readyReplicas).toBe(2);
    expect(body.metadata?.managedFields?.find((m) => m.manager === "probe")?.subresource).toBe(
      "status",
    );
  });

  test("fieldManager is required; managedFields in the configuration are rejected", async () => {
    const res = await fetch(`${api.url}/api/v1/namespaces/default/configmaps/x`, {
      method: "PATCH",
      headers: {
        Authorization: "Bearer kube-api-double-token",
        "Content-Type": "application/apply-patch+yaml",
      },
      body: JSON.stringify(configMap("x", {})),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain(
      "fieldManager is required",
    );
  });

  test("dryRun=All returns the result without storing it", async () => {
    const res = await fetch(
      `${api.url}/api/v1/namespaces/default/configmaps/dry?fieldManager=m&dryRun=All`,
      {
        method: "PATCH",
        headers: {
          Authorization: "Bearer kube-api-double-token",
          "Content-Type": "application/apply-patch+yaml",
        },
        body: JSON.stringify(configMap("dry", { k: "v" })),
      },
    );
    expect(res.status).toBe(201);
    expect(((await res.json()) as V1ConfigMap).data).toEqual({ k: "v" });
    expect(
      (await failure(core.readNamespacedConfigMap({ namespace: "default", name: "dry" }))).code,
    ).toBe(404);
  });
});

describe("other patches", () => {
  test("merge patch: null removes, maps merge, lists replace", async () => {
    await apply(configMap("merge", { a: "1", b: "2" }));
    const patched = await client.patch(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "merge", namespace: "default", labels: { added: "yes" } },
        data: { a: null as unknown as string, c: "3" },
      },
      undefined,
      undefined,
      "patcher",
      undefined,
      PatchStrategy.MergePatch,
    );
    expect(patched.data).toEqual({ b: "2", c: "3" });
    expect(patched.metadata?.labels).toEqual({ added: "yes" });
  });

  test("JSON patch: add, replace, remove, test", async () => {
    const res = await fetch(`${api.url}/api/v1/namespaces/default/configmaps/merge`, {
      method: "PATCH",
      headers: {
        Authorization: "Bearer kube-api-double-token",
        "Content-Type": "application/json-patch+json",
      },
      body: JSON.stringify([
        { op: "test", path: "/data/b", value: "2" },
        { op: "replace", path: "/data/b", value: "two" },
        { op: "add", path: "/data/d", value: "4" },
        { op: "remove", path: "/data/c" },
      ]),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as V1ConfigMap).data).toEqual({ b: "two", d: "4" });
  });

  test("strategic merge patch merges containers by name (built-in kinds only)", async () => {
    await apply(deployment("smp"));
    const patched = await client.patch({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "smp", namespace: "default" },
      spec: { template: { spec: { containers: [{ name: "extra", image: "busybox" }] } } },
    } as V1Deployment);
    expect(patched.spec?.template.spec?.containers.map((c) => c.name)).toEqual(["main", "extra"]);
  });

  test("patching a missing object is 404", async () => {
    const { code } = await failure(
      client.patch(
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "absent", namespace: "default" },
          data: {},
        },
        undefined,
        undefined,
        "m",
        undefined,
        PatchStrategy.MergePatch,
      ),
    );
    expect(code).toBe(404);
  });
});

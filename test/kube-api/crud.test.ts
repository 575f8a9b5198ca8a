import {
  AppsV1Api,
  CoreV1Api,
  CoordinationV1Api,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { deployment, failure } from "./helpers.js";

let api: KubeApi;
let core: CoreV1Api;
let apps: AppsV1Api;

beforeAll(async () => {
  api = await startKubeApi();
  const kc = api.kubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
});
afterAll(() => api.stop());

describe("create, read, replace, delete", () => {
  test("create fills uid, creationTimestamp and resourceVersion; read returns the object", async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "one" }, data: { a: "1" } },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0);
    const read = await core.readNamespacedConfigMap({ namespace: "default", name: "one" });
    expect(read.data).toEqual({ a: "1" });
    expect(read.metadata?.uid).toBe(created.metadata?.uid);
  });

  test("a second create is 409 AlreadyExists with details", async () => {
    const { code, status } = await failure(
      core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "one" } } }),
    );
    expect(code).toBe(409);
    expect(status.reason).toBe("AlreadyExists");
    expect(status.message).toBe('configmaps "one" already exists');
    expect(status.details).toEqual({ name: "one", kind: "configmaps" });
  });

  test("read of a missing object is 404 NotFound; group-qualified for non-core kinds", async () => {
    const core404 = await failure(
      core.readNamespacedConfigMap({ namespace: "default", name: "missing" }),
    );
    expect(core404.code).toBe(404);
    expect(core404.status.reason).toBe("NotFound");
    expect(core404.status.message).toBe('configmaps "missing" not found');
    const apps404 = await failure(
      apps.readNamespacedDeployment({ namespace: "default", name: "missing" }),
    );
    expect(apps404.status.message).toBe('deployments.apps "missing" not found');
    expect(apps404.status.details).toMatchObject({
      name: "missing",
      group: "apps",
      kind: "deployments",
    });
  });

  test("replace with a stale resourceVersion is 409 Conflict; with the current one it succeeds", async () => {
    const current = await core.readNamespacedConfigMap({ namespace: "default", name: "one" });
    const updated = await core.replaceNamespacedConfigMap({
      namespace: "default",
      name: "one",
      body: { ...current, data: { a: "2" } },
    });
    expect(updated.data).toEqual({ a: "2" });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(
      Number(current.metadata?.resourceVersion),
    );
    const stale = await failure(
      core.replaceNamespacedConfigMap({
        namespace: "default",
        name: "one",
        body: { ...current, data: { a: "3" } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.status.reason).toBe("Conflict");
    expect(stale.status.message).toContain("the object has been modified");
  });

  test("replace of a missing object is 404; a name that differs from the URL is 400", async () => {
    expect(
      (
        await failure(
          core.replaceNamespacedConfigMap({
            namespace: "default",
            name: "nope",
            body: { metadata: { name: "nope" } },
          }),
        )
      ).code,
    ).toBe(404);
    const bad = await failure(
      core.replaceNamespacedConfigMap({
        namespace: "default",
        name: "one",
        body: { metadata: { name: "two" } },
      }),
    );
    expect(bad.code).toBe(400);
    expect(bad.status.reason).toBe("BadRequest");
  });

  test("delete returns a Success Status and the object is gone", async () => {
    const status = await core.deleteNamespacedConfigMap({ namespace: "default", name: "one" });
    expect(status.status).toBe("Success");
    expect(status.details?.name).toBe("one");
    expect(
      (await failure(core.readNamespacedConfigMap({ namespace: "default", name: "one" }))).code,
    ).toBe(404);
    expect(
      (await failure(core.deleteNamespacedConfigMap({ namespace: "default", name: "one" }))).code,
    ).toBe(404);
  });

  test("invalid names and labels are 422 Invalid with causes", async () => {
    const { code, status } = await failure(
      core.createNamespacedConfigMap({
        namespace: "default",
        body: { metadata: { name: "Bad_Name", labels: { ok: "not ok!" } } },
      }),
    );
    expect(code).toBe(422);
    expect(status.reason).toBe("Invalid");
    expect(status.message).toMatch(
      /^ConfigMap "Bad_Name" is invalid: \[metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    expect(status.details?.kind).toBe("ConfigMap");
    expect(status.details?.causes?.map((c) => c.field)).toEqual([
      "metadata.name",
      "metadata.labels",
    ]);
    expect(status.details?.causes?.[0]?.reason).toBe("FieldValueInvalid");
  });

  test("objects in a missing namespace are 404 for the namespace", async () => {
    const { code, status } = await failure(
      core.createNamespacedConfigMap({ namespace: "ghost", body: { metadata: { name: "x" } } }),
    );
    expect(code).toBe(404);
    expect(status.message).toBe('namespaces "ghost" not found');
  });

  test("generateName makes a unique name", async () => {
    const a = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { generateName: "gen-" } },
    });
    const b = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { generateName: "gen-" } },
    });
    expect(a.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(a.metadata?.name).not.toBe(b.metadata?.name);
  });

  test("cluster-scoped kinds: namespaces, cluster roles", async () => {
    const ns = await core.createNamespace({ body: { metadata: { name: "team-a" } } });
    expect(ns.status?.phase).toBe("Active");
    expect(ns.metadata?.namespace).toBeUndefined();
    const rbac = api.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({
      body: {
        metadata: { name: "reader" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
      },
    });
    const roles = await rbac.listClusterRole();
    expect(roles.items.map((r) => r.metadata?.name)).toContain("reader");
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toEqual(
      expect.arrayContaining(["default", "kube-system", "team-a"]),
    );
  });

  test("secrets: stringData becomes base64 data", async () => {
    const s = await core.createNamespacedSecret({
      namespace: "default",
      body: { metadata: { name: "creds" }, stringData: { token: "hunter2" } },
    });
    expect(s.data).toEqual({ token: Buffer.from("hunter2").toString("base64") });
    expect(s.stringData).toBeUndefined();
    expect(s.type).toBe("Opaque");
  });

  test("leases for leader election: optimistic concurrency on replace", async () => {
    const coordination = api.kubeConfig().makeApiClient(CoordinationV1Api);
    const lease = await coordination.createNamespacedLease({
      namespace: "default",
      body: {
        metadata: { name: "leader" },
        spec: { holderIdentity: "a", leaseDurationSeconds: 15 },
      },
    });
    await coordination.replaceNamespacedLease({
      namespace: "default",
      name: "leader",
      body: { ...lease, spec: { ...lease.spec, holderIdentity: "b" } },
    });
    const lost = await failure(
      coordination.replaceNamespacedLease({
        namespace: "default",
        name: "leader",
        body: { ...lease, spec: { ...lease.spec, holderIdentity: "c" } },
      }),
    );
    expect(lost.code).toBe(409);
    expect(
      (await coordination.readNamespacedLease({ namespace: "default", name: "leader" })).spec
        ?.holderIdentity,
    ).toBe("b");
  });
});

describe("list", () => {
  beforeAll(async () => {
    await core.createNamespace({ body: { metadata: { name: "lists" } } });
    const labels: Record<string, Record<string, string>> = {
      a: { app: "web", tier: "front" },
      b: { app: "web", tier: "back" },
      c: { app: "db" },
      d: {},
    };
    for (const [name, l] of Object.entries(labels)) {
      await core.createNamespacedConfigMap({
        namespace: "lists",
        body: { metadata: { name, labels: l } },
      });
    }
  });

  const names = async (labelSelector?: string, fieldSelector?: string) =>
    (
      await core.listNamespacedConfigMap({ namespace: "lists", labelSelector, fieldSelector })
    ).items.map((i) => i.metadata?.name);

  test("label selectors: =, ==, !=, in, notin, exists, !exists, and conjunctions", async () => {
    expect(await names("app=web")).toEqual(["a", "b"]);
    expect(await names("app==db")).toEqual(["c"]);
    expect(await names("app!=web")).toEqual(["c", "d"]);
    expect(await names("tier in (front, side)")).toEqual(["a"]);
    expect(await names("app notin (web)")).toEqual(["c", "d"]);
    expect(await names("tier")).toEqual(["a", "b"]);
    expect(await names("!tier")).toEqual(["c", "d"]);
    expect(await names("app=web,tier!=front")).toEqual(["b"]);
    expect(await names("app in (web,db),!tier")).toEqual(["c"]);
  });

  test("a malformed label selector is 400", async () => {
    const { code, status } = await failure(
      core.listNamespacedConfigMap({ namespace: "lists", labelSelector: "app in web" }),
    );
    expect(code).toBe(400);
    expect(status.reason).toBe("BadRequest");
  });

  test("field selectors on metadata.name and metadata.namespace; unsupported fields are 400", async () => {
    expect(await names(undefined, "metadata.name=b")).toEqual(["b"]);
    expect(await names(undefined, "metadata.name!=b")).toEqual(["a", "c", "d"]);
    const all = await core.listConfigMapForAllNamespaces({
      fieldSelector: "metadata.namespace=lists",
      labelSelector: "app=web",
    });
    expect(all.items.map((i) => i.metadata?.name)).toEqual(["a", "b"]);
    expect(
      (
        await failure(
          core.listNamespacedConfigMap({ namespace: "lists", fieldSelector: "data.x=1" }),
        )
      ).code,
    ).toBe(400);
  });

  test("built-in list items carry no apiVersion/kind; the list carries resourceVersion", async () => {
    const list = await core.listNamespacedConfigMap({ namespace: "lists" });
    expect(list.kind).toBe("ConfigMapList");
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThan(0);
    const raw = (await (
      await fetch(`${api.url}/api/v1/namespaces/lists/configmaps`, {
        headers: { Authorization: "Bearer kube-api-double-token" },
      })
    ).json()) as { items: Record<string, unknown>[] };
    expect(raw.items[0]).not.toHaveProperty("kind");
  });

  test("limit and continue page through the list", async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await core.listNamespacedConfigMap({
        namespace: "lists",
        limit: 3,
        _continue: token,
      });
      seen.push(...page.items.map((i) => i.metadata!.name!));
      token = page.metadata?._continue;
      if (token) expect(page.metadata?.remainingItemCount).toBe(1);
      pages++;
    } while (token);
    expect(pages).toBe(2);
    expect(seen).toEqual(["a", "b", "c", "d"]);
  });
});

describe("status subresource, generation, immutable fields", () => {
  test("main resource writes ignore status; /status writes change only status", async () => {
    const created = await apps.createNamespacedDeployment({
      namespace: "default",
      body: { ...deployment("web"), status: { readyReplicas: 5 } },
    });
    expect(created.status).toBeUndefined();
    expect(created.metadata?.generation).toBe(1);
    const withStatus = await apps.replaceNamespacedDeploymentStatus({
      namespace: "default",
      name: "web",
      body: {
        ...created,
        spec: { ...created.spec!, replicas: 9 },
        status: { readyReplicas: 1, replicas: 1, observedGeneration: 1 },
      },
    });
    expect(withStatus.status?.readyReplicas).toBe(1);
    expect(withStatus.spec?.replicas).toBe(1);
    expect(withStatus.metadata?.generation).toBe(1);
    const replaced = await apps.replaceNamespacedDeployment({
      namespace: "default",
      name: "web",
      body: { ...withStatus, status: { readyReplicas: 7 } },
    });
    expect(replaced.status?.readyReplicas).toBe(1);
    expect(replaced.metadata?.generation).toBe(1);
  });

  test("generation is bumped by spec changes only", async () => {
    const current = await apps.readNamespacedDeployment({ namespace: "default", name: "web" });
    const labelled = await apps.replaceNamespacedDeployment({
      namespace: "default",
      name: "web",
      body: { ...current, metadata: { ...current.metadata, labels: { app: "web", extra: "yes" } } },
    });
    expect(labelled.metadata?.generation).toBe(1);
    const scaled = await apps.replaceNamespacedDeployment({
      namespace: "default",
      name: "web",
      body: { ...labelled, spec: { ...labelled.spec!, replicas: 3 } },
    });
    expect(scaled.metadata?.generation).toBe(2);
  });

  test("a Deployment selector is immutable (422) and must match the template labels", async () => {
    const current = await apps.readNamespacedDeployment({ namespace: "default", name: "web" });
    const changed = {
      ...current,
      spec: {
        ...current.spec!,
        selector: { matchLabels: { app: "other" } },
        template: { ...current.spec!.template, metadata: { labels: { app: "other" } } },
      },
    };
    const { code, status } = await failure(
      apps.replaceNamespacedDeployment({ namespace: "default", name: "web", body: changed }),
    );
    expect(code).toBe(422);
    expect(status.details?.causes).toEqual([
      expect.objectContaining({
        field: "spec.selector",
        message: expect.stringContaining("field is immutable") as unknown,
      }),
    ]);
    const mismatch = await failure(
      apps.createNamespacedDeployment({
        namespace: "default",
        body: {
          ...deployment("m"),
          spec: { ...deployment("m").spec, selector: { matchLabels: { app: "x" } } },
        },
      }),
    );
    expect(mismatch.status.details?.causes?.[0]?.field).toBe("spec.template.metadata.labels");
  });

  test("a Service gets a clusterIP that cannot change", async () => {
    const svc = await core.createNamespacedService({
      namespace: "default",
      body: {
        metadata: { name: "web" },
        spec: { selector: { app: "web" }, ports: [{ port: 80 }] },
      },
    });
    expect(svc.spec?.clusterIP).toMatch(/^10\.96\./);
    expect(svc.spec?.ports?.[0]?.protocol).toBe("TCP");
    const { code, status } = await failure(
      core.replaceNamespacedService({
        namespace: "default",
        name: "web",
        body: { ...svc, spec: { ...svc.spec, clusterIP: "10.0.0.9" } },
      }),
    );
    expect(code).toBe(422);
    expect(status.details?.causes?.[0]?.field).toBe("spec.clusterIP");
  });

  test("a StatefulSet spec may change only in the allowed fields", async () => {
    const sts = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "db", namespace: "default" },
      spec: { ...deployment("db").spec, serviceName: "db" },
    };
    const created = await apps.createNamespacedStatefulSet({ namespace: "default", body: sts });
    await apps.replaceNamespacedStatefulSet({
      namespace: "default",
      name: "db",
      body: { ...created, spec: { ...created.spec!, replicas: 2 } },
    });
    const current = await apps.readNamespacedStatefulSet({ namespace: "default", name: "db" });
    const { code, status } = await failure(
      apps.replaceNamespacedStatefulSet({
        namespace: "default",
        name: "db",
        body: { ...current, spec: { ...current.spec!, serviceName: "other" } },
      }),
    );
    expect(code).toBe(422);
    expect(status.details?.causes?.[0]?.reason).toBe("FieldValueForbidden");
  });

  test("immutable ConfigMaps reject data changes", async () => {
    const cm = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "frozen" }, data: { a: "1" }, immutable: true },
    });
    const { code } = await failure(
      core.replaceNamespacedConfigMap({
        namespace: "default",
        name: "frozen",
        body: { ...cm, data: { a: "2" } },
      }),
    );
    expect(code).toBe(422);
  });
});

describe("generic client", () => {
  test("KubernetesObjectApi create/read/replace/list/delete through discovery", async () => {
    const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
    await client.create({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "runner", namespace: "default" },
    });
    const read = await client.read({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "runner", namespace: "default" },
    });
    expect(read.metadata?.uid).toBeDefined();
    const list = await client.list("v1", "ServiceAccount", "default");
    expect(list.items.map((i) => i.metadata?.name)).toContain("runner");
    await client.delete({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "runner", namespace: "default" },
    });
    expect(
      (
        await failure(
          client.read({
            apiVersion: "v1",
            kind: "ServiceAccount",
            metadata: { name: "runner", namespace: "default" },
          }),
        )
      ).code,
    ).toBe(404);
  });

  test("requests without the kubeconfig's token are 401", async () => {
    const res = await fetch(`${api.url}/api/v1/namespaces`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { reason: string }).reason).toBe("Unauthorized");
  });

  test("unknown resources are 404 and unsupported methods 405", async () => {
    const auth = { Authorization: "Bearer kube-api-double-token" };
    const unknown = await fetch(`${api.url}/apis/example.com/v1/widgets`, { headers: auth });
    expect(unknown.status).toBe(404);
    const post = await fetch(`${api.url}/api/v1/namespaces/default/configmaps/x`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(post.status).toBe(405);
    expect(((await post.json()) as { reason: string }).reason).toBe("MethodNotAllowed");
  });
});

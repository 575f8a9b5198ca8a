import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  type KubernetesObject,
  PatchStrategy,
} from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { eventually, failure, loadCrd } from "./helpers.js";

const auth = { Authorization: "Bearer kube-api-double-token" };
const GROUP = "toolhive.stacklok.dev";

async function discovery(
  api: KubeApi,
  path: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${api.url}${path}`, { headers: auth });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function mcpServer(
  name: string,
  spec: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): KubernetesObject & Record<string, unknown> {
  return {
    apiVersion: `${GROUP}/v1alpha1`,
    kind: "MCPServer",
    metadata: { name, namespace: "default" },
    spec,
    ...extra,
  };
}

describe("discovery", () => {
  let api: KubeApi;
  beforeAll(async () => {
    api = await startKubeApi();
  });
  afterAll(() => api.stop());

  test("/api, /api/v1, /apis and group versions list the built-in resources", async () => {
    expect((await discovery(api, "/api")).body).toMatchObject({
      kind: "APIVersions",
      versions: ["v1"],
    });
    const v1 = (await discovery(api, "/api/v1")).body as {
      groupVersion: string;
      resources: {
        name: string;
        namespaced: boolean;
        kind: string;
        verbs: string[];
        shortNames?: string[];
      }[];
    };
    expect(v1.groupVersion).toBe("v1");
    const names = v1.resources.map((r) => r.name);
    for (const r of [
      "namespaces",
      "namespaces/status",
      "configmaps",
      "secrets",
      "services",
      "serviceaccounts",
      "events",
      "pods",
      "pods/status",
    ])
      expect(names).toContain(r);
    expect(v1.resources.find((r) => r.name === "configmaps")).toMatchObject({
      namespaced: true,
      kind: "ConfigMap",
      shortNames: ["cm"],
      verbs: expect.arrayContaining(["get", "list", "watch", "patch"]) as unknown,
    });
    expect(v1.resources.find((r) => r.name === "namespaces")?.namespaced).toBe(false);
    const groups = (await discovery(api, "/apis")).body as {
      kind: string;
      groups: { name: string; preferredVersion: { groupVersion: string } }[];
    };
    expect(groups.kind).toBe("APIGroupList");
    expect(groups.groups.map((g) => g.name)).toEqual(
      expect.arrayContaining([
        "apps",
        "rbac.authorization.k8s.io",
        "coordination.k8s.io",
        "apiextensions.k8s.io",
        "events.k8s.io",
      ]),
    );
    const appsV1 = (await discovery(api, "/apis/apps/v1")).body as {
      resources: { name: string; verbs: string[] }[];
    };
    expect(appsV1.resources.map((r) => r.name)).toEqual([
      "deployments",
      "deployments/status",
      "statefulsets",
      "statefulsets/status",
    ]);
    expect(appsV1.resources[1]?.verbs).toEqual(["get", "patch", "update"]);
    expect((await discovery(api, "/apis/apps")).body).toMatchObject({
      kind: "APIGroup",
      name: "apps",
      preferredVersion: { groupVersion: "apps/v1" },
    });
    expect((await discovery(api, "/apis/example.com/v1")).status).toBe(404);
  });
});

describe("CustomResourceDefinitions", () => {
  let api: KubeApi;
  beforeAll(async () => {
    api = await startKubeApi({ establishDelayMs: 600 });
  });
  afterAll(() => api.stop());

  test("a CRD appears in discovery, and its resources are served, only once Established", async () => {
    const ext = api.kubeConfig().makeApiClient(ApiextensionsV1Api);
    const created = await ext.createCustomResourceDefinition({
      body: loadCrd("mcpgroup.yaml") as never,
    });
    expect(created.status?.conditions ?? []).toEqual([]);
    expect((await discovery(api, `/apis/${GROUP}/v1alpha1`)).status).toBe(404);
    const early = await fetch(`${api.url}/apis/${GROUP}/v1alpha1/namespaces/default/mcpgroups`, {
      headers: auth,
    });
    expect(early.status).toBe(404);
    const established = await eventually(async () => {
      const crd = await ext.readCustomResourceDefinition({
        name: "mcpgroups.toolhive.stacklok.dev",
      });
      const condition = crd.status?.conditions?.find((c) => c.type === "Established");
      expect(condition?.status).toBe("True");
      return crd;
    });
    expect(established.status?.acceptedNames?.kind).toBe("MCPGroup");
    expect(established.status?.storedVersions).toEqual(["v1alpha1"]);
    const doc = (await discovery(api, `/apis/${GROUP}/v1alpha1`)).body as {
      resources: { name: string; kind: string; namespaced: boolean }[];
    };
    expect(doc.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "mcpgroups", kind: "MCPGroup", namespaced: true }),
        expect.objectContaining({ name: "mcpgroups/status" }),
      ]),
    );
    const groups = (await discovery(api, "/apis")).body as {
      groups: { name: string; versions: { version: string }[] }[];
    };
    expect(groups.groups.find((g) => g.name === GROUP)?.versions.map((v) => v.version)).toEqual([
      "v1alpha1",
      "v1beta1",
    ]);
  });

  test("served versions convert by apiVersion; deleting the CRD deletes its resources and stops serving them", async () => {
    const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: "v1alpha1",
      namespace: "default",
      plural: "mcpgroups",
      body: {
        apiVersion: `${GROUP}/v1alpha1`,
        kind: "MCPGroup",
        metadata: { name: "eng" },
        spec: {},
      },
    });
    const asBeta = (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: "v1beta1",
      namespace: "default",
      plural: "mcpgroups",
      name: "eng",
    })) as KubernetesObject;
    expect(asBeta.apiVersion).toBe(`${GROUP}/v1beta1`);
    const ext = api.kubeConfig().makeApiClient(ApiextensionsV1Api);
    await ext.deleteCustomResourceDefinition({ name: "mcpgroups.toolhive.stacklok.dev" });
    await eventually(async () =>
      expect((await discovery(api, `/apis/${GROUP}/v1alpha1`)).status).toBe(404),
    );
    expect(api.objects({ kind: "MCPGroup" })).toEqual([]);
  });
});

describe("custom resource validation against the CRD schema and CEL rules", () => {
  let api: KubeApi;
  let client: KubernetesObjectApi;
  beforeAll(async () => {
    api = await startKubeApi({ crds: [loadCrd("mcpserver.yaml")] });
    client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  });
  afterAll(() => api.stop());

  const apply = (obj: KubernetesObject, query = "") =>
    client.patch(
      obj,
      undefined,
      query || undefined,
      "mcpfleet",
      true,
      PatchStrategy.ServerSideApply,
    ) as Promise<KubernetesObject & { spec: Record<string, unknown> }>;

  test("preinstalled CRDs are Established at start; a valid MCPServer is stored with defaults applied", async () => {
    const stored = await apply(
      mcpServer("time", {
        image: "docker.io/mcp/time:latest",
        permissionProfile: { name: "none" },
      }),
    );
    expect(stored.spec).toMatchObject({
      image: "docker.io/mcp/time:latest",
      transport: "stdio",
      proxyPort: 8080,
      proxyMode: "streamable-http",
      permissionProfile: { type: "builtin", name: "none" },
    });
    expect(stored.metadata?.generation).toBe(1);
    const owned = stored.metadata?.managedFields?.[0]?.fieldsV1 as Record<
      string,
      Record<string, unknown>
    >;
    expect(Object.keys(owned["f:spec"]!).sort()).toEqual(["f:image", "f:permissionProfile"]);
  });

  test("schema violations are 422 Invalid with one cause per field", async () => {
    const { code, status } = await failure(
      apply(mcpServer("bad", { transport: "carrier-pigeon", proxyPort: 70000 })),
    );
    expect(code).toBe(422);
    expect(status.reason).toBe("Invalid");
    expect(status.details).toMatchObject({ name: "bad", group: GROUP, kind: "MCPServer" });
    expect(status.message).toMatch(/^MCPServer\.toolhive\.stacklok\.dev "bad" is invalid: \[/);
    const causes = status.details?.causes ?? [];
    expect(causes).toEqual(
      expect.arrayContaining([
        { reason: "FieldValueRequired", message: "Required value", field: "spec.image" },
        {
          reason: "FieldValueNotSupported",
          message:
            'Unsupported value: "carrier-pigeon": supported values: "stdio", "streamable-http", "sse"',
          field: "spec.transport",
        },
        {
          reason: "FieldValueInvalid",
          message:
            "Invalid value: 70000: spec.proxyPort in body should be less than or equal to 65535",
          field: "spec.proxyPort",
        },
      ]),
    );
    expect(causes).toHaveLength(3);
  });

  test("CEL rules (x-kubernetes-validations) reject with the rule's message at its fieldPath", async () => {
    const { code, status } = await failure(
      apply(
        mcpServer("cel", {
          image: "x",
          permissionProfile: { type: "builtin", name: "everything", key: "k" },
        }),
      ),
    );
    expect(code).toBe(422);
    expect(status.details?.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        message:
          'Invalid value: "object": a builtin permission profile name must be one of none, network',
        field: "spec.permissionProfile.name",
      },
      {
        reason: "FieldValueInvalid",
        message: 'Invalid value: "object": key is only used with type configmap',
        field: "spec.permissionProfile.key",
      },
    ]);
  });

  test("list-type map items must have unique keys", async () => {
    const { status } = await failure(
      apply(
        mcpServer("dup", {
          image: "x",
          env: [
            { name: "A", value: "1" },
            { name: "A", value: "2" },
          ],
        }),
      ),
    );
    expect(status.details?.causes?.[0]).toMatchObject({
      reason: "FieldValueDuplicate",
      field: "spec.env[1]",
    });
  });

  test("unknown fields are pruned with a warning; fieldValidation=Strict rejects them", async () => {
    const res = await fetch(
      `${api.url}/apis/${GROUP}/v1alpha1/namespaces/default/mcpservers/pruned?fieldManager=m`,
      {
        method: "PATCH",
        headers: { ...auth, "Content-Type": "application/apply-patch+yaml" },
        body: JSON.stringify(mcpServer("pruned", { image: "x", bogus: true })),
      },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get("warning")).toBe('299 - "unknown field \\"spec.bogus\\""');
    expect(((await res.json()) as { spec: Record<string, unknown> }).spec).not.toHaveProperty(
      "bogus",
    );
    const strict = await fetch(
      `${api.url}/apis/${GROUP}/v1alpha1/namespaces/default/mcpservers/strict?fieldManager=m&fieldValidation=Strict`,
      {
        method: "PATCH",
        headers: { ...auth, "Content-Type": "application/apply-patch+yaml" },
        body: JSON.stringify(mcpServer("strict", { image: "x", bogus: true })),
      },
    );
    expect(strict.status).toBe(400);
    expect(((await strict.json()) as { message: string }).message).toContain(
      'unknown field "spec.bogus"',
    );
  });

  test("the status subresource of a custom resource; spec changes bump generation", async () => {
    const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    const status = (await custom.patchNamespacedCustomObjectStatus({
      group: GROUP,
      version: "v1alpha1",
      namespace: "default",
      plural: "mcpservers",
      name: "time",
      body: [{ op: "add", path: "/status", value: { phase: "Ready", observedGeneration: 1 } }],
    })) as { status: { phase: string } };
    expect(status.status.phase).toBe("Ready");
    const badStatus = await failure(
      custom.patchNamespacedCustomObjectStatus({
        group: GROUP,
        version: "v1alpha1",
        namespace: "default",
        plural: "mcpservers",
        name: "time",
        body: [{ op: "replace", path: "/status/phase", value: "Dancing" }],
      }),
    );
    expect(badStatus.code).toBe(422);
    const bumped = await apply(
      mcpServer("time", { image: "docker.io/mcp/time:2", permissionProfile: { name: "none" } }),
    );
    expect(bumped.metadata?.generation).toBe(2);
    expect((bumped as unknown as { status: { phase: string } }).status.phase).toBe("Ready");
  });

  test("merge patches on custom resources are validated too; strategic merge patch is 415", async () => {
    const merge = await failure(
      client.patch(
        mcpServer("time", { proxyPort: 0 }),
        undefined,
        undefined,
        "m",
        undefined,
        PatchStrategy.MergePatch,
      ),
    );
    expect(merge.code).toBe(422);
    expect(merge.status.details?.causes?.[0]?.field).toBe("spec.proxyPort");
    expect((await failure(client.patch(mcpServer("time", { proxyPort: 9000 })))).code).toBe(415);
  });

  // The API server applies defaults before it validates, so a default that a CEL rule forbids
  // would make documents invalid on a cluster; every example must be accepted as it stands.
  const DEFAULTS_BREAK_CEL: Record<string, string> = {};

  test("every example resource of the project is accepted with its CRD", async () => {
    const examples = join(import.meta.dirname, "../../examples/resources");
    const crdFiles = readdirSync(join(import.meta.dirname, "../../crds")).filter((f) =>
      f.endsWith(".yaml"),
    );
    const all = await startKubeApi({ crds: crdFiles.map((f) => loadCrd(f)) });
    try {
      const objects = KubernetesObjectApi.makeApiClient(all.kubeConfig());
      const outcome: Record<string, string> = {};
      for (const file of readdirSync(examples).filter((f) => f.endsWith(".yaml"))) {
        for (const doc of parseAllDocuments(readFileSync(join(examples, file), "utf8"))) {
          const obj = doc.toJS() as KubernetesObject;
          obj.metadata = { ...obj.metadata, namespace: "default" };
          try {
            await objects.patch(
              obj,
              undefined,
              undefined,
              "mcpfleet",
              true,
              PatchStrategy.ServerSideApply,
            );
            outcome[file] ??= "ok";
          } catch (err) {
            const body = (err as { body?: string }).body ?? "{}";
            outcome[file] = (JSON.parse(body) as { message?: string }).message ?? String(err);
          }
        }
      }
      expect(Object.keys(outcome).length).toBeGreaterThan(10);
      for (const [file, result] of Object.entries(outcome)) {
        if (DEFAULTS_BREAK_CEL[file] === undefined)
          expect({ file, result }).toEqual({ file, result: "ok" });
        else expect(result).toContain(DEFAULTS_BREAK_CEL[file]);
      }
    } finally {
      await all.stop();
    }
  });
});

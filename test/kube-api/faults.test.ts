import { CoreV1Api, KubernetesObjectApi, PatchStrategy, Watch } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { failure } from "./helpers.js";

let api: KubeApi;
let core: CoreV1Api;

beforeAll(async () => {
  api = await startKubeApi();
  core = api.kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(() => api.stop());

describe("request recording", () => {
  test("records method, path, content type, query and verb of each request", async () => {
    api.resetRequests();
    const client = KubernetesObjectApi.makeApiClient(api.kubeConfig());
    await client.patch(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "rec", namespace: "default" },
        data: { a: "1" },
      },
      undefined,
      undefined,
      "mcpfleet",
      true,
      PatchStrategy.ServerSideApply,
    );
    await core.listNamespacedConfigMap({ namespace: "default", labelSelector: "app=x" });
    expect(
      api.requests.map(({ method, path, contentType, query, verb, status }) => ({
        method,
        path,
        contentType,
        query,
        verb,
        status,
      })),
    ).toEqual([
      {
        method: "GET",
        path: "/api/v1",
        contentType: undefined,
        query: {},
        verb: "discovery",
        status: 200,
      },
      {
        method: "PATCH",
        path: "/api/v1/namespaces/default/configmaps/rec",
        contentType: "application/apply-patch+yaml",
        query: { fieldManager: "mcpfleet", force: "true" },
        verb: "apply",
        status: 201,
      },
      {
        method: "GET",
        path: "/api/v1/namespaces/default/configmaps",
        contentType: undefined,
        query: { labelSelector: "app=x" },
        verb: "list",
        status: 200,
      },
    ]);
    api.resetRequests();
    expect(api.requests).toEqual([]);
  });
});

describe("fault injection", () => {
  test("a 500 for the next matching request only", async () => {
    api.failNext({ verb: "create" }, 500);
    const { code, status } = await failure(
      core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "f1" } } }),
    );
    expect(code).toBe(500);
    expect(status.reason).toBe("InternalError");
    await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "f1" } },
    });
    expect(api.requests.filter((r) => r.injected).length).toBeGreaterThan(0);
  });

  test("409 Conflict twice, matched by path pattern, then success", async () => {
    api.failNext({ method: "PUT", path: /configmaps\/f1$/ }, 409, 2);
    const current = await core.readNamespacedConfigMap({ namespace: "default", name: "f1" });
    for (let i = 0; i < 2; i++) {
      const { code, status } = await failure(
        core.replaceNamespacedConfigMap({ namespace: "default", name: "f1", body: current }),
      );
      expect(code).toBe(409);
      expect(status.reason).toBe("Conflict");
    }
    await core.replaceNamespacedConfigMap({ namespace: "default", name: "f1", body: current });
  });

  test("429 TooManyRequests carries Retry-After", async () => {
    api.failNext((r) => r.verb === "get" && r.path.endsWith("/f1"), 429, 1, {
      retryAfterSeconds: 3,
    });
    const { code, status, headers } = await failure(
      core.readNamespacedConfigMap({ namespace: "default", name: "f1" }),
    );
    expect(code).toBe(429);
    expect(status.reason).toBe("TooManyRequests");
    expect(status.details?.retryAfterSeconds).toBe(3);
    expect(headers["retry-after"]).toBe("3");
  });

  test("status 0 cuts the connection", async () => {
    api.failNext({ verb: "get" }, 0);
    await expect(
      core.readNamespacedConfigMap({ namespace: "default", name: "f1" }),
    ).rejects.toThrow();
    const read = await core.readNamespacedConfigMap({ namespace: "default", name: "f1" });
    expect(read.metadata?.name).toBe("f1");
  });

  test("a failed watch request reports the status to the watch's done callback", async () => {
    api.failNext({ verb: "watch" }, 503);
    const err = await new Promise<unknown>((resolve) => {
      void new Watch(api.kubeConfig()).watch(
        "/api/v1/namespaces/default/configmaps",
        {},
        () => undefined,
        resolve,
      );
    });
    expect((err as { statusCode?: number }).statusCode).toBe(503);
  });

  test("clearFaults drops pending faults; setLatency delays responses", async () => {
    api.failNext({ verb: "list" }, 500, 5);
    api.clearFaults();
    await core.listNamespacedConfigMap({ namespace: "default" });
    api.setLatency(150);
    const started = Date.now();
    await core.listNamespacedConfigMap({ namespace: "default" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    api.setLatency(0);
  });
});

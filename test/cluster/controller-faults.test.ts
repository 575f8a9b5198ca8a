// Faults the real API server will not produce on demand, injected by the proxy in front of it:
// 500, 409 and 429 with Retry-After, cut connections, a request accepted and never answered, a
// controller stopped mid-apply, and a watch that drops. Each time the state converges: every
// object the repository renders is there, and nothing is left outside the inventory.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { APPLIED_BY } from "../../src/controller/cluster-plan.js";
import { KubeClient } from "../../src/infra/kube/client.js";
import { listKubeEntries, watchKube } from "../../src/registry/sources/kubernetes.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { type ApiProxy, startApiProxy } from "../support/cluster/proxy.js";
import { exampleRepo, gitCmd } from "../controller/helpers.js";
import { type Harness, harness, testNamespace, until } from "./controller-harness.js";
import { client, installCrds } from "./helpers.js";

let proxy: ApiProxy;
beforeAll(async () => {
  if (noCluster()) return;
  proxy = await startApiProxy(clusterKubeconfig()!);
  await installCrds(client());
});
afterAll(async () => {
  await proxy?.stop();
});
beforeEach(() => {
  proxy?.clearFaults();
  proxy?.resetRequests();
});

/** Every object in the namespace carrying our marker is in the inventory, and vice versa. */
async function expectConverged(h: Harness): Promise<void> {
  const inventory = await h.inventory();
  expect([...inventory.values()].filter((e) => e.hash === "")).toEqual([]);
  for (const e of inventory.values()) {
    if (e.namespace !== h.ns) continue;
    const live = await h.client.get({
      apiVersion: e.apiVersion,
      kind: e.kind,
      metadata: { name: e.name, namespace: e.namespace },
    });
    expect(live, `${e.kind} ${e.name} in the inventory`).toBeDefined();
  }
  for (const kind of [
    "Deployment",
    "Service",
    "ConfigMap",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "MCPServer",
  ]) {
    for (const o of await h.list(kind)) {
      if (o.metadata.annotations?.[APPLIED_BY] !== "mcpfleet") continue;
      const key = [...inventory.entries()].find(
        ([, e]) => e.kind === kind && e.name === o.metadata.name,
      );
      expect(key, `${kind} ${o.metadata.name} is in the inventory`).toBeDefined();
    }
  }
}

describe.skipIf(noCluster())("cluster target through a faulty connection", () => {
  it("retries 500s, 409s and 429s (with Retry-After) and converges", async () => {
    const repo = exampleRepo();
    const h = harness(proxy.kubeconfigPath, repo.dir, testNamespace(clusterKubeconfig()!));
    proxy.failNext({ verb: "apply", path: /\/deployments\// }, 500, 2);
    proxy.failNext({ verb: "apply", path: /\/services\// }, 409, 2, {
      message: "the object has been modified",
    });
    proxy.failNext({ verb: "apply", path: /\/mcpservers\// }, 429, 1, { retryAfterSeconds: 1 });
    expect((await h.reconciler.sync()).kind).toBe("applied");
    expect(proxy.requests.filter((r) => r.injected)).toHaveLength(5);
    // Each refused request was sent again and succeeded.
    for (const path of proxy.requests.filter((r) => r.injected).map((r) => r.path)) {
      expect(
        proxy.requests.some((r) => r.path === path && !r.injected && r.status < 300),
        path,
      ).toBe(true);
    }
    await expectConverged(h);
    h.close();
  }, 120_000);

  it("a connection accepted and never answered times out, is retried, and the apply completes", async () => {
    const repo = exampleRepo();
    const h = harness(proxy.kubeconfigPath, repo.dir, testNamespace(clusterKubeconfig()!), {
      requestTimeoutMs: 1_000,
    });
    proxy.hangNext({ verb: "apply", path: /\/deployments\/fetch$/ });
    proxy.failNext({ verb: "apply", path: /\/configmaps\// }, 0, 1);
    expect((await h.reconciler.sync()).kind).toBe("applied");
    const hung = proxy.requests.filter((r) => r.injected);
    expect(hung.map((r) => r.status)).toEqual([0, 0]);
    expect(await h.get("Deployment", "fetch")).toBeDefined();
    await expectConverged(h);
    h.close();
  }, 120_000);

  it("a controller stopped mid-apply, restarted on a newer revision, converges with nothing orphaned", async () => {
    const repo = exampleRepo();
    const ns = testNamespace(clusterKubeconfig()!);
    const h1 = harness(proxy.kubeconfigPath, repo.dir, ns, {
      backoff: { baseMs: 1, capMs: 2, maxAttempts: 2 },
    });
    // Every Deployment write fails: the run stops after the other workloads went out.
    proxy.failNext({ verb: "apply", path: /\/deployments\// }, 500, 1000);
    expect(await h1.reconciler.sync()).toMatchObject({ kind: "failed", stage: "apply" });
    expect(h1.status.lastError?.message).toMatch(new RegExp(`Deployment ${ns}/\\S+`));
    expect(await h1.get("Service", "mcp-fetch-proxy")).toBeDefined();
    expect(await h1.get("Deployment", "fetch")).toBeUndefined();
    const events = await h1.list("Event");
    expect(events.some((e) => String(e.message).includes("Deployment"))).toBe(true);
    h1.close();
    proxy.clearFaults();

    // The fetch server leaves the repository meanwhile; a new process picks up.
    rmSync(join(repo.dir, "fleet", "mcpserver-streamable-http.yaml"));
    gitCmd(repo.dir, "commit", "-q", "-am", "remove fetch");
    const h2 = harness(proxy.kubeconfigPath, repo.dir, ns);
    expect((await h2.reconciler.sync()).kind).toBe("applied");
    expect(await h2.get("Deployment", "github")).toBeDefined();
    // What the stopped run created for fetch was in the inventory: pruned, not orphaned.
    expect(await h2.get("Service", "mcp-fetch-proxy")).toBeUndefined();
    expect(await h2.get("MCPServer", "fetch")).toBeUndefined();
    await expectConverged(h2);
    h2.close();
  }, 120_000);
});

describe.skipIf(noCluster())("the registry's kubernetes source through a watch that drops", () => {
  it("notices a resource created while its watch was down", async () => {
    const c = client();
    const ns = testNamespace(clusterKubeconfig()!, "watch");
    await c.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    const kube = KubeClient.fromFile(proxy.kubeconfigPath);
    let changes = 0;
    const stop = watchKube(kube, [ns], () => changes++, 50);
    try {
      await until("the watches are open", () =>
        proxy.requests.filter((r) => r.verb === "watch" && r.status === 200).length >= 3
          ? true
          : undefined,
      );
      const seen = changes;
      // One watch per exported kind.
      expect(proxy.dropWatches()).toBe(3);
      await c.create({
        apiVersion: "toolhive.stacklok.dev/v1alpha1",
        kind: "MCPServer",
        metadata: {
          name: "dropped",
          namespace: ns,
          annotations: {
            "toolhive.stacklok.dev/registry-export": "true",
            "toolhive.stacklok.dev/registry-url": "https://mcp.example.com/dropped",
          },
        },
        spec: { image: "ghcr.io/example/server:1.0.0" },
      });
      await until("the source noticed", () => (changes > seen ? true : undefined), 20_000);
      const { entries } = await listKubeEntries(kube, [ns]);
      expect(entries.map((e) => e.name)).toEqual([`com.toolhive.k8s.${ns}/dropped`]);
    } finally {
      stop();
      kube.close();
    }
  }, 60_000);
});

// Drift correction without re-sending everything, against the real API server through the
// recording proxy: a restarted controller and a drift-correction cycle read the live objects a
// kind at a time and apply only what was changed by hand or deleted (and a restart writes no
// status that is already up to date); a changed desired object is applied as before.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { type ApiProxy, startApiProxy } from "../support/cluster/proxy.js";
import { commitDebugLogLevel, exampleRepo } from "../controller/helpers.js";
import { harness, testNamespace } from "./controller-harness.js";

let proxy: ApiProxy;
beforeAll(async () => {
  if (!noCluster()) proxy = await startApiProxy(clusterKubeconfig()!);
});
afterAll(async () => {
  await proxy?.stop();
});

const applies = () => proxy.requests.filter((r) => r.verb === "apply").map((r) => r.path);

describe.skipIf(noCluster())("cluster target on the API server: drift check", () => {
  it("a restart applies nothing when nothing drifted; a drift cycle puts back a field changed by hand and re-creates a deleted object", async () => {
    const repo = exampleRepo();
    const ns = testNamespace(clusterKubeconfig()!);
    let now = 1_000_000;
    const first = harness(proxy.kubeconfigPath, repo.dir, ns);
    expect((await first.reconciler.sync()).kind).toBe("applied");
    first.close();

    // A new process, the same revision: read, compared, nothing sent.
    const h = harness(proxy.kubeconfigPath, repo.dir, ns, {
      driftIntervalMs: 60_000,
      now: () => now,
    });
    proxy.resetRequests();
    const restart = await h.reconciler.sync();
    expect(restart).toMatchObject({ kind: "applied", result: { applied: 0, pruned: 0 } });
    expect(applies()).toEqual([]);
    // Nor a status already up to date: nothing at all is written.
    const written = proxy.requests.filter((r) => r.method !== "GET").map((r) => r.path);
    expect(written).toEqual([]);
    const lists = proxy.requests.filter((r) => r.verb === "list").length;
    const gets = proxy.requests.filter((r) => r.verb === "get").length;
    // One list per kind and namespace, not one read per object.
    expect(lists).toBeGreaterThan(0);
    const unchanged = restart.kind === "applied" ? restart.result.unchanged : 0;
    expect(lists + gets).toBeLessThan(unchanged);

    // By hand: a field of ours changed by another manager, and an object deleted.
    const config = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "fetch-runconfig", namespace: ns },
    };
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "mcp-fetch-proxy", namespace: ns },
    };
    const data = async () =>
      ((await h.client.get(config))?.data as Record<string, string>)["runconfig.json"];
    const rendered = await data();
    await h.client.mergePatch(
      config,
      { data: { "runconfig.json": "{}" } },
      { fieldManager: "kubectl-edit" },
    );
    expect(await h.client.delete(service)).toBe(true);

    now += 61_000;
    proxy.resetRequests();
    const drift = await h.reconciler.sync();
    expect(drift).toMatchObject({ kind: "applied", result: { applied: 2 } });
    expect(applies().sort()).toEqual(
      [
        `/api/v1/namespaces/${ns}/configmaps/fetch-runconfig`,
        `/api/v1/namespaces/${ns}/services/mcp-fetch-proxy`,
      ].sort(),
    );
    expect(await data()).toBe(rendered);
    expect(await h.client.get(service)).toBeDefined();

    // The next drift cycle finds nothing to send.
    now += 61_000;
    proxy.resetRequests();
    expect((await h.reconciler.sync()).kind).toBe("applied");
    expect(applies()).toEqual([]);

    // A changed desired object is applied, drift check or not.
    commitDebugLogLevel(repo.dir);
    proxy.resetRequests();
    expect((await h.reconciler.sync()).kind).toBe("applied");
    expect(applies()).toContain(
      `/apis/toolhive.stacklok.dev/v1alpha1/namespaces/${ns}/mcpservers/fetch`,
    );
    const server = await h.get("MCPServer", "fetch");
    expect(JSON.stringify(server?.spec)).toContain("debug");
    h.close();
  }, 180_000);
});

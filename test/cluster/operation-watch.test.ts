// How a running controller learns of a reconcile request, on the real API server behind the
// fault proxy: through a watch of its inventory, with the annotations read only when it wakes
// (a request answered with the fallback poll an hour away, and a handful of reads); and, when the
// watch is refused, by reading them every pollMs instead.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inventoryName } from "../../src/controller/inventory.js";
import { KubeClient } from "../../src/infra/kube/client.js";
import { OperationRequests } from "../../src/controller/operation-requests.js";
import { REQUESTED_AT_ANNOTATION } from "../../src/controller/operations.js";
import { silentLogger } from "../../src/controller/logger.js";
import { ControllerStatus } from "../../src/controller/status.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { type ApiProxy, startApiProxy } from "../support/cluster/proxy.js";
import { ensureNamespace, until } from "./helpers.js";
import { testNamespace } from "./controller-harness.js";

let proxy: ApiProxy;
let c: KubeClient;
beforeAll(async () => {
  if (noCluster()) return;
  proxy = await startApiProxy(clusterKubeconfig()!);
  c = KubeClient.fromFile(proxy.kubeconfigPath);
});
afterAll(async () => {
  c?.close();
  await proxy?.stop();
});

/** A namespace holding a controller's inventory, and a controller's reader of its annotations. */
async function started(pollMs: number) {
  const ns = testNamespace(clusterKubeconfig()!, "opwatch");
  await ensureNamespace(c, ns);
  const inventory = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: inventoryName("mcpfleet"), namespace: ns },
  };
  await c.apply(inventory, { fieldManager: "mcpfleet" });
  const syncs: string[] = [];
  const status = new ControllerStatus("branch main", "cluster");
  const operations = new OperationRequests({
    client: c,
    namespace: ns,
    fieldManager: "mcpfleet",
    status,
    log: silentLogger,
    pollMs,
  });
  operations.start(() => {
    syncs.push(status.lastHandledReconcileAt ?? "");
    return Promise.resolve(true);
  });
  const request = (at: string) =>
    c.apply(
      {
        ...inventory,
        metadata: { ...inventory.metadata, annotations: { [REQUESTED_AT_ANNOTATION]: at } },
      },
      { fieldManager: "mcpfleet-cli" },
    );
  const reads = () =>
    proxy.requests.filter(
      (r) =>
        r.verb === "get" &&
        r.path.endsWith(`/namespaces/${ns}/configmaps/${inventory.metadata.name}`),
    ).length;
  const watches = () =>
    proxy.requests.filter(
      (r) => r.verb === "watch" && r.path.endsWith(`/namespaces/${ns}/configmaps`),
    );
  return { ns, status, operations, syncs, request, reads, watches };
}

describe.skipIf(noCluster())("reconcile requests reach a running controller", () => {
  it("through a watch of its inventory: answered at once with polling an hour away", async () => {
    const s = await started(3_600_000);
    try {
      await until("a watch of the inventory is open", () =>
        s.watches().some((w) => w.status === 200),
      );
      await s.request("2026-11-25T10:00:00Z");
      await until(
        "the request is answered",
        () => s.status.lastHandledReconcileAt === "2026-11-25T10:00:00Z",
      );
      // A watch cut mid-stream (a restarted server) is opened again, not waited out.
      const opened = s.watches().length;
      expect(proxy.dropWatches()).toBeGreaterThan(0);
      await until("a new watch is open", () => s.watches().length > opened);
      await s.request("2026-11-25T10:05:00Z");
      await until(
        "the second is",
        () => s.status.lastHandledReconcileAt === "2026-11-25T10:05:00Z",
      );
      expect(s.syncs.length).toBe(2);
      // Reads only when woken: at start, per change (the requests, their recorded status) and per
      // watch opened again.
      expect(s.reads()).toBeLessThanOrEqual(10);
      const watched = s.watches();
      expect(
        watched.every(
          (w) => w.query.get("fieldSelector") === `metadata.name=${inventoryName("mcpfleet")}`,
        ),
      ).toBe(true);
    } finally {
      await s.operations.stop();
    }
  });

  it("with the watch refused: read every pollMs instead, and still answered", async () => {
    proxy.failNext({ verb: "watch" }, 403, 1_000, { message: "watch is not allowed" });
    try {
      const s = await started(200);
      try {
        await until("a refused watch", () => s.watches().some((w) => w.status === 403));
        const before = s.reads();
        await s.request("2026-11-25T11:00:00Z");
        await until(
          "the request is answered",
          () => s.status.lastHandledReconcileAt === "2026-11-25T11:00:00Z",
        );
        expect(s.watches().every((w) => w.status === 403)).toBe(true);
        await until("it keeps reading", () => s.reads() >= before + 3);
      } finally {
        await s.operations.stop();
      }
    } finally {
      proxy.clearFaults();
    }
  });
});

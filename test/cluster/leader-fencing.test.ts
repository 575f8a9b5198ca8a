// A leader that cannot renew stops applying before another replica may acquire the Lease: its
// leadership is bounded by its own clock since the last renewal that succeeded, whatever its
// hanging renewal request does. Faults come from a proxy in front of the real API server.
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { ClusterApplier } from "../../src/controller/cluster-applier.js";
import { KubeClient } from "../../src/infra/kube/client.js";
import { LeaderElector } from "../../src/controller/leader.js";
import { planRevision } from "../../src/controller/revision-plan.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { type ApiProxy, startApiProxy } from "../support/cluster/proxy.js";
import { client, namespace, until } from "./helpers.js";

const clients: KubeClient[] = [];
let proxy: ApiProxy | undefined;
afterAll(async () => {
  for (const c of clients) c.close();
  await proxy?.stop();
});

describe.skipIf(noCluster())("leadership is fenced in time", () => {
  it("a leader whose renewals hang stops leading before another replica acquires the Lease", async () => {
    const ns = await namespace(client(), "fencing");
    proxy = await startApiProxy(clusterKubeconfig()!);
    const viaProxy = KubeClient.fromFile(proxy.kubeconfigPath, { requestTimeoutMs: 60_000 });
    const direct = KubeClient.fromFile(clusterKubeconfig());
    clients.push(viaProxy, direct);
    const opts = { namespace: ns, name: `lease-${randomBytes(2).toString("hex")}` };
    const a = new LeaderElector(viaProxy, {
      ...opts,
      identity: "a",
      leaseDurationSeconds: 3,
      renewMs: 300,
    });
    a.start();
    await until("a leads", () => a.isLeader || undefined, 20_000);
    // From now on every request of a's is accepted and never answered.
    proxy.hangNext(() => true, 1_000_000);
    let aStopped = 0;
    const b = new LeaderElector(direct, {
      ...opts,
      identity: "b",
      leaseDurationSeconds: 3,
      renewMs: 300,
    });
    b.start();
    await until(
      "b leads",
      () => {
        if (aStopped === 0 && !a.isLeader) aStopped = Date.now();
        return b.isLeader || undefined;
      },
      30_000,
    );
    const bLeads = Date.now();
    expect(aStopped).toBeGreaterThan(0);
    expect(aStopped).toBeLessThan(bLeads);
    // An applier fenced by a's leadership refuses to write anything now.
    const applier = new ClusterApplier({
      client: direct,
      fieldManager: "fencing-test",
      prune: false,
      forceRecreate: false,
      namespace: ns,
      crds: false,
      mayWrite: () => a.isLeader,
    });
    await expect(
      applier.apply(
        planRevision([], {
          objects: [
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name: "must-not-exist", namespace: ns },
            },
          ],
          owners: new Map(),
        }),
        { commit: "0".repeat(40), ref: "main" },
      ),
    ).rejects.toMatchObject({ code: "ERR_NOT_LEADER" });
    expect(
      await direct.get({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "must-not-exist", namespace: ns },
      }),
    ).toBeUndefined();
    proxy.clearFaults();
    await b.stop({ release: true });
    void a.stop();
  }, 90_000);
});

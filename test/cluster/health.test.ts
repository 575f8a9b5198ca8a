// Waiting for the workloads a revision applied, on the real API server with its real Deployment
// and ReplicaSet controllers. There is no kubelet, so the test plays its part: it reports the Pods
// running and Ready through their status subresource, and the controllers roll the Deployment out
// from there. A rollout that completes makes the revision applied and its resource Ready; one that
// does not finish in time, or whose progress deadline passes, leaves the revision not applied,
// names the workload, and makes the resource Stalled with the reason.
import { beforeAll, describe, expect, it } from "vitest";
import type { KubeClient } from "../../src/infra/kube/client.js";
import type { SyncOutcome } from "../../src/controller/reconciler.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EXAMPLES, commitFiles, tmp } from "../controller/helpers.js";
import { makeRepo } from "../support/git-server.js";
import { harness, testNamespace } from "./controller-harness.js";
import { client, installCrds, until } from "./helpers.js";

const server = (logLevel: string) => `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: fetch
spec:
  image: ghcr.io/stackloklabs/gofetch/server:1.0.1
  transport: streamable-http
  proxyPort: 8080
  mcpPort: 8080
  env:
    - name: LOG_LEVEL
      value: ${logLevel}
`;

type Condition = { type: string; status: string; reason?: string; message?: string };
type ServerStatus = { phase?: string; message?: string; conditions?: Condition[] };

let admin: KubeClient;
beforeAll(async () => {
  if (noCluster()) return;
  admin = client();
  await installCrds(admin);
});

/** As a kubelet would: every Pod of `ns` not Ready yet becomes Running and Ready. */
async function podsReady(ns: string): Promise<void> {
  const pods = await admin.list("v1", "Pod", { namespace: ns });
  for (const pod of pods) {
    const conditions = (pod.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
    if (conditions.some((c) => c.type === "Ready" && c.status === "True")) continue;
    if (pod.metadata.deletionTimestamp !== undefined) continue;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    await admin
      .mergePatch(
        { apiVersion: "v1", kind: "Pod", metadata: { name: pod.metadata.name, namespace: ns } },
        {
          status: {
            phase: "Running",
            conditions: [
              { type: "PodScheduled", status: "True", lastTransitionTime: now },
              { type: "Ready", status: "True", lastTransitionTime: now },
              { type: "ContainersReady", status: "True", lastTransitionTime: now },
            ],
          },
        },
        { subresource: "status" },
      )
      .catch(() => undefined); // gone meanwhile: its ReplicaSet scaled down
  }
}

/** Runs a sync while playing the kubelet of the namespace until it ends. */
async function syncWithKubelet(sync: () => Promise<SyncOutcome>, ns: string): Promise<SyncOutcome> {
  let done = false;
  const kubelet = (async () => {
    while (!done) {
      await podsReady(ns);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    return await sync();
  } finally {
    done = true;
    await kubelet;
  }
}

const condition = (s: ServerStatus | undefined, type: string) =>
  s?.conditions?.find((c) => c.type === type);

describe.skipIf(noCluster())("waiting for the rollout of what a revision applied", () => {
  it("applied when the Deployment rolls out; not ready in time or past its deadline: Stalled, named, retried", async () => {
    const ns = testNamespace(clusterKubeconfig()!, "health");
    const repo = tmp("health-repo");
    makeRepo(repo, { "fleet/fetch.yaml": server("info") });
    // Long enough that a busy machine never ends the wait before the test writes the status.
    const h = harness(clusterKubeconfig()!, repo, ns, { waitTimeoutMs: 60_000, rolloutPollMs: 50 });
    const serverStatus = async () => (await h.get("MCPServer", "fetch"))?.status as ServerStatus;

    // 1. The Pods become Ready while the controller waits: the rollout completes.
    const first = await syncWithKubelet(() => h.reconciler.sync(), ns);
    expect(first, JSON.stringify(first)).toMatchObject({ kind: "applied" });
    let status = await serverStatus();
    expect(status.phase).toBe("Ready");
    expect(condition(status, "Ready")).toMatchObject({ status: "True" });
    expect(condition(status, "Stalled")).toMatchObject({ status: "False" });

    // 2. A change whose Pods never start: the wait ends, the revision is not applied.
    const second = commitFiles(repo, { "fleet/fetch.yaml": server("debug") }, "debug logs");
    const impatient = harness(clusterKubeconfig()!, repo, ns, {
      waitTimeoutMs: 300,
      rolloutPollMs: 50,
    });
    const timedOut = await impatient.reconciler.sync();
    impatient.close();
    expect(timedOut.kind).toBe("not-ready");
    if (timedOut.kind !== "not-ready") return;
    expect(timedOut.revision.commit).toBe(second);
    expect(timedOut.notReady.map((n) => `${n.object} ${n.reason}`)).toEqual([
      `Deployment ${ns}/fetch RolloutTimeout`,
    ]);
    expect(timedOut.notReady[0]?.message).not.toBe("");
    expect(impatient.status.lastAppliedRevision).toBeUndefined();
    expect(impatient.status.lastError).toMatchObject({ stage: "health", code: "ERR_NOT_READY" });
    status = await serverStatus();
    expect(status.phase).toBe("Pending");
    expect(condition(status, "Ready")).toMatchObject({ status: "False", reason: "RolloutTimeout" });
    expect(condition(status, "Stalled")?.status).toBe("True");
    expect(condition(status, "Stalled")?.reason).toBe("RolloutTimeout");
    expect(condition(status, "Stalled")?.message).toMatch(new RegExp(`^Deployment ${ns}/fetch: `));

    // 3. Its progress deadline passes (shortened by someone else's field manager): the Deployment
    // controller marks it, and the wait ends at once with that reason.
    await admin.mergePatch(
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "fetch", namespace: ns } },
      { spec: { progressDeadlineSeconds: 1 } },
      { fieldManager: "operator-on-call" },
    );
    const failed = await h.reconciler.sync();
    expect(failed.kind).toBe("not-ready");
    if (failed.kind !== "not-ready") return;
    expect(failed.notReady.map((n) => n.reason)).toEqual(["ProgressDeadlineExceeded"]);
    expect(h.status.lastError).toMatchObject({ stage: "health", code: "ERR_ROLLOUT_FAILED" });
    status = await serverStatus();
    expect(status.phase).toBe("Failed");
    expect(condition(status, "Stalled")).toMatchObject({
      status: "True",
      reason: "ProgressDeadlineExceeded",
    });

    // 4. The Pods start, and the Deployment controller sees the rollout complete (until it has,
    // its Progressing condition still says ProgressDeadlineExceeded, which ends a wait at once,
    // as `kubectl rollout status` does): the next sync of the same revision applies it.
    await until(
      "the Deployment rolled out past its deadline",
      async () => {
        await podsReady(ns);
        const d = await admin.get({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "fetch", namespace: ns },
        });
        const progressing = (
          d?.status as { conditions?: Condition[] } | undefined
        )?.conditions?.find((c) => c.type === "Progressing");
        return progressing?.reason === "NewReplicaSetAvailable";
      },
      60_000,
    );
    const recovered = await syncWithKubelet(() => h.reconciler.sync(), ns);
    expect(recovered.kind).toBe("applied");
    expect(h.status.lastAppliedRevision).toBe(second);
    status = await serverStatus();
    expect(status.phase).toBe("Ready");
    expect(condition(status, "Stalled")).toMatchObject({ status: "False" });
    h.close();
  }, 120_000);

  it("a StatefulSet counts once its replicas are ready on the current revision", async () => {
    // This control plane runs no StatefulSet controller: the test writes its status as that
    // controller would, first mid-rollout (an old revision still current), then done.
    const ns = testNamespace(clusterKubeconfig()!, "health-sts");
    const repo = tmp("health-sts-repo");
    makeRepo(repo, {
      "fleet/embeddings.yaml": readFileSync(
        join(EXAMPLES, "embeddingserver-embeddings.yaml"),
        "utf8",
      ),
    });
    const h = harness(clusterKubeconfig()!, repo, ns, { waitTimeoutMs: 60_000, rolloutPollMs: 50 });
    let settled = false;
    const syncing = h.reconciler.sync().finally(() => (settled = true));
    let sts;
    for (;;) {
      sts = (await h.list("StatefulSet"))[0];
      if (sts !== undefined) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const ref = { apiVersion: "apps/v1", kind: "StatefulSet", metadata: sts.metadata };
    const base = {
      observedGeneration: sts.metadata.generation,
      replicas: 2,
      readyReplicas: 2,
      updatedReplicas: 2,
      updateRevision: "embeddings-2",
    };
    await admin.mergePatch(
      ref,
      { status: { ...base, currentRevision: "embeddings-1" } },
      {
        subresource: "status",
      },
    );
    await new Promise((r) => setTimeout(r, 300)); // a few polls see it mid-rollout
    expect(settled).toBe(false);
    await admin.mergePatch(
      ref,
      { status: { ...base, currentRevision: "embeddings-2" } },
      {
        subresource: "status",
      },
    );
    const outcome = await syncing;
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: "applied" });
    const server = (await h.get("EmbeddingServer", "embeddings"))?.status as ServerStatus;
    expect(condition(server, "Stalled")).toMatchObject({ status: "False" });
    expect(condition(server, "Ready")).toMatchObject({ status: "True" });
    h.close();
  }, 90_000);
});

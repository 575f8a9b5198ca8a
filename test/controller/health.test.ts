// Rollout state of Deployments and StatefulSets as `kubectl rollout status` reads it.
import { describe, expect, it } from "vitest";
import { rolloutState, workloadName } from "../../src/controller/health.js";
import type { LiveObject } from "../../src/infra/kube/client.js";

const workload = (
  kind: "Deployment" | "StatefulSet",
  spec: Record<string, unknown>,
  status: Record<string, unknown>,
  generation = 2,
): LiveObject => ({
  apiVersion: "apps/v1",
  kind,
  metadata: { name: "w", namespace: "n", generation },
  spec,
  status,
});

describe("rolloutState of a Deployment", () => {
  const done = { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 };
  it("is done once the latest generation is observed and every replica is updated and available", () => {
    expect(rolloutState(workload("Deployment", { replicas: 2 }, done))).toEqual({
      done: true,
      message: "2 replica(s) available",
    });
  });
  it.each([
    [{ ...done, observedGeneration: 1 }, /generation 2 not observed yet/],
    [{ ...done, updatedReplicas: 1, replicas: 2 }, /1 of 2 replicas updated/],
    [{ ...done, replicas: 3 }, /1 old replicas pending termination/],
    [{ ...done, availableReplicas: 1 }, /1 of 2 replicas available/],
    [{}, /not observed/],
  ])("is progressing while %o", (status, message) => {
    const s = rolloutState(workload("Deployment", { replicas: 2 }, status));
    expect(s.done).toBe(false);
    expect(s.failed).toBeUndefined();
    expect(s.message).toMatch(message);
  });
  it("has failed when the progress deadline passed", () => {
    const s = rolloutState(
      workload(
        "Deployment",
        {},
        {
          observedGeneration: 2,
          conditions: [
            {
              type: "Progressing",
              status: "False",
              reason: "ProgressDeadlineExceeded",
              message: 'ReplicaSet "w-1" has timed out progressing.',
            },
          ],
        },
      ),
    );
    expect(s).toEqual({
      done: false,
      failed: "ProgressDeadlineExceeded",
      message: 'ReplicaSet "w-1" has timed out progressing.',
    });
  });
  it("counts one replica when spec.replicas is absent, and none when it is 0", () => {
    expect(rolloutState(workload("Deployment", {}, { observedGeneration: 2 })).done).toBe(false);
    expect(
      rolloutState(workload("Deployment", { replicas: 0 }, { observedGeneration: 2 })).done,
    ).toBe(true);
  });
});

describe("rolloutState of a StatefulSet", () => {
  const ready = { observedGeneration: 2, replicas: 3, readyReplicas: 3, updatedReplicas: 3 };
  it("waits for ready replicas and for the update revision to be current", () => {
    const spec = { replicas: 3 };
    expect(
      rolloutState(workload("StatefulSet", spec, { ...ready, readyReplicas: 2 })).message,
    ).toBe("2 of 3 replicas ready");
    const updating = { ...ready, currentRevision: "w-1", updateRevision: "w-2" };
    expect(rolloutState(workload("StatefulSet", spec, updating)).done).toBe(false);
    const current = { ...ready, currentRevision: "w-2", updateRevision: "w-2" };
    expect(rolloutState(workload("StatefulSet", spec, current)).done).toBe(true);
  });
  it("with a partition, only the replicas above it need the new revision", () => {
    const spec = {
      replicas: 3,
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 2 } },
    };
    const status = { ...ready, updatedReplicas: 0, currentRevision: "a", updateRevision: "b" };
    expect(rolloutState(workload("StatefulSet", spec, status)).message).toBe(
      "0 of 1 replicas updated",
    );
    expect(
      rolloutState(workload("StatefulSet", spec, { ...status, updatedReplicas: 1 })).done,
    ).toBe(true);
  });
  it("OnDelete is done when the replicas are ready", () => {
    const spec = { replicas: 3, updateStrategy: { type: "OnDelete" } };
    const status = { ...ready, currentRevision: "a", updateRevision: "b" };
    expect(rolloutState(workload("StatefulSet", spec, status)).done).toBe(true);
  });
});

it("workloadName reads an object key", () => {
  expect(workloadName("apps/Deployment/team-a/fetch")).toBe("Deployment team-a/fetch");
});

// How `mcpfleet status` reads a resource's readiness from its live object, and lays the report
// out for a person.
import { describe, expect, it } from "vitest";
import { statusText } from "../../src/cli/status.js";
import type { LiveObject } from "../../src/infra/kube/client.js";
import { readinessOf, type StatusReport } from "../../src/controller/status-report.js";

const entry = {
  apiVersion: "toolhive.stacklok.dev/v1alpha1",
  kind: "MCPServer",
  namespace: "team-a",
  name: "fetch",
  hash: "h",
};

function live(generation: number, status: unknown): LiveObject {
  return {
    apiVersion: entry.apiVersion,
    kind: entry.kind,
    metadata: { name: entry.name, namespace: entry.namespace, generation },
    status,
  };
}

const id = {
  apiVersion: entry.apiVersion,
  kind: entry.kind,
  namespace: "team-a",
  name: "fetch",
};

describe("readinessOf", () => {
  it("takes the Ready condition and the phase", () => {
    const ready = { type: "Ready", status: "True", reason: "Ready", message: "1 replica(s) ready" };
    expect(readinessOf(entry, live(2, { phase: "Ready", conditions: [ready] }))).toEqual({
      ...id,
      ready: "True",
      reason: "Ready",
      message: "1 replica(s) ready",
      phase: "Ready",
    });
  });

  it("says Unknown for a condition about an older generation, or none at all", () => {
    const old = { type: "Ready", status: "True", observedGeneration: 1 };
    expect(readinessOf(entry, live(2, { conditions: [old] }))).toMatchObject({
      ready: "Unknown",
      reason: "Progressing",
    });
    expect(readinessOf(entry, live(2, undefined))).toMatchObject({
      ready: "Unknown",
      reason: "NoStatus",
    });
  });

  it("says False, NotFound, for an object the inventory lists and the cluster lacks", () => {
    expect(readinessOf(entry, undefined)).toEqual({
      ...id,
      ready: "False",
      reason: "NotFound",
      message: "not in the cluster",
    });
  });
});

describe("statusText", () => {
  const report: StatusReport = {
    inventory: "mcpfleet-inventory",
    namespace: "mcpfleet-system",
    ref: "branch main",
    suspended: true,
    ready: false,
    lastAppliedRevision: "a".repeat(40),
    lastAppliedAt: "2026-01-02T03:04:05.000Z",
    lastAttemptedRevision: "b".repeat(40),
    lastError: {
      stage: "validate",
      code: "ERR_INVALID_RESOURCES",
      message: "revision bbbbbbbbbbbb is invalid",
      revision: "b".repeat(40),
      at: "2026-01-02T03:05:00.000Z",
    },
    reconcileRequestedAt: "2026-01-02T03:06:00.000Z",
    lastHandledReconcileAt: "2026-01-02T03:00:00.000Z",
    objects: 3,
    resources: [{ ...id, ready: "False", reason: "NotFound", message: "not in the cluster" }],
  };

  it("is a summary, then a table whose columns line up", () => {
    expect(statusText(report)).toEqual([
      "controller  mcpfleet-inventory in namespace mcpfleet-system",
      "ref         branch main",
      "suspended   True",
      "ready       False",
      `applied     ${"a".repeat(40)} at 2026-01-02T03:04:05.000Z`,
      `attempted   ${"b".repeat(40)}`,
      "last error  validate ERR_INVALID_RESOURCES (revision bbbbbbbbbbbb, 2026-01-02T03:05:00.000Z): revision bbbbbbbbbbbb is invalid",
      "reconcile   requested 2026-01-02T03:06:00.000Z, pending: suspended",
      "objects     3",
      "",
      "KIND       NAMESPACE  NAME   READY  PHASE  STALLED  MESSAGE",
      "MCPServer  team-a     fetch  False  -      -        not in the cluster",
    ]);
  });

  it("says so when no custom resource was applied", () => {
    expect(statusText({ ...report, resources: [] }).slice(-2)).toEqual([
      "",
      "No custom resources applied.",
    ]);
  });
});

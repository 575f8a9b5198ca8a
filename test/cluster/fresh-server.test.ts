// The controller's first apply to an API server that has never seen our CRDs: a control plane of
// this file's own (the shared one has them installed by every other test). Custom resources are
// served only once their CRD is Established, so an apply that did not wait would get 404s.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findClusterBinaries } from "../support/cluster/binaries.js";
import { clusterContext } from "../support/cluster/context.js";
import { type ControlPlane, startControlPlane } from "../support/cluster/control-plane.js";
import { type ApiProxy, startApiProxy } from "../support/cluster/proxy.js";
import { exampleRepo } from "../controller/helpers.js";
import { harness } from "./controller-harness.js";

// Needs the binaries, so only where this run started its own control plane.
const local = clusterContext().kind === "local";
let plane: ControlPlane;
let proxy: ApiProxy;

beforeAll(async () => {
  if (!local) return;
  const bins = findClusterBinaries();
  if ("missing" in bins) throw new Error(bins.missing);
  plane = await startControlPlane(bins, { controllerManager: false });
  proxy = await startApiProxy(plane.kubeconfig);
});
afterAll(async () => {
  await proxy?.stop();
  await plane?.stop();
});

describe.skipIf(!local)("first apply to a fresh API server", () => {
  it("waits for every CRD to be Established before the first custom resource", async () => {
    const repo = exampleRepo();
    const h = harness(proxy.kubeconfigPath, repo.dir, "fresh");
    const outcome = await h.reconciler.sync();
    expect(outcome.kind).toBe("applied");
    const crdApplies = proxy.requests.filter(
      (r) => r.verb === "apply" && r.path.includes("/customresourcedefinitions/"),
    );
    // Created here, not found installed.
    expect(crdApplies.map((r) => r.status)).toEqual(crdApplies.map(() => 201));
    expect(crdApplies).toHaveLength(12);
    const crs = proxy.requests.filter(
      (r) => r.verb === "apply" && r.path.startsWith("/apis/toolhive.stacklok.dev/"),
    );
    expect(crs.length).toBeGreaterThan(20);
    // Every custom resource went through at the first attempt: none was sent before its kind
    // was served.
    expect(crs.filter((r) => r.status >= 300)).toEqual([]);
    const firstCr = proxy.requests.indexOf(crs[0]!);
    const readBack = proxy.requests
      .slice(0, firstCr)
      .filter((r) => r.verb === "get" && r.path.includes("/customresourcedefinitions/"));
    expect(new Set(readBack.map((r) => r.path)).size).toBe(12);
    h.close();
  }, 120_000);
});

// The one plan of a revision, as the cluster target applies it on the real API server: its dry
// run reports exactly the plan's objects and writes nothing; its apply leaves exactly those
// objects, each carrying our marker; the image policy's plan leaves out exactly the refused
// server's workloads. Each test in a namespace of its own.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { objectName } from "../../src/controller/applier.js";
import { ClusterApplier } from "../../src/controller/cluster-applier.js";
import { APPLIED_BY, MANAGED_BY_LABEL, clusterPlan } from "../../src/controller/cluster-plan.js";
import { type ImageVerdict, withholdRefused } from "../../src/controller/image-policy.js";
import type { KubeClient } from "../../src/infra/kube/client.js";
import { renderPaths } from "../../src/controller/pipeline.js";
import type { RevisionPlan } from "../../src/controller/revision-plan.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { EXAMPLES } from "../controller/helpers.js";
import { testNamespace } from "./controller-harness.js";
import { client, installCrds } from "./helpers.js";

const FIELD_MANAGER = "mcpfleet-plan";
const revision = { commit: "c".repeat(40), ref: "main" };
const FILES = ["mcpserver-sse.yaml", "mcpserver-streamable-http.yaml", "mcpgroup-engineering.yaml"];

let c: KubeClient;
beforeAll(async () => {
  if (noCluster()) return;
  c = client();
  await installCrds(c);
});
afterAll(() => c?.close());

/** The examples' plan with every resource in a fresh namespace. */
async function planIn(): Promise<{ ns: string; plan: RevisionPlan }> {
  const ns = testNamespace(clusterKubeconfig()!, "plan");
  const rendered = await renderPaths(
    FILES.map((f) => join(EXAMPLES, f)),
    EXAMPLES,
    { namespace: ns },
  );
  if (!rendered.ok) throw new Error(rendered.errors.join("\n"));
  return { ns, plan: rendered.plan };
}

function applier(ns: string): ClusterApplier {
  return new ClusterApplier({
    client: c,
    fieldManager: FIELD_MANAGER,
    prune: true,
    forceRecreate: false,
    namespace: ns,
    // Our CRDs are the suite's; this plan's objects are the namespace and what lives in it.
    crds: false,
    backoff: { baseMs: 5, capMs: 50 },
  });
}

/** The keys of the plan's objects present on the server, each checked for our marker. */
async function liveKeys(plan: RevisionPlan): Promise<Set<string>> {
  const found = new Set<string>();
  for (const p of clusterPlan(plan, { fieldManager: FIELD_MANAGER, crds: false }).objects) {
    const live = await c.get(p.object);
    if (live === undefined) continue;
    expect(live.metadata.annotations?.[APPLIED_BY], p.key).toBe(FIELD_MANAGER);
    expect(live.metadata.labels?.[MANAGED_BY_LABEL], p.key).toBe("mcpfleet");
    found.add(p.key);
  }
  return found;
}

describe.skipIf(noCluster())("the revision plan on the API server", () => {
  it("the dry run reports exactly the plan's objects and writes none of them", async () => {
    const { ns, plan } = await planIn();
    const sent = clusterPlan(plan, { fieldManager: FIELD_MANAGER, crds: false });
    // The namespace exists (a dry run cannot create what its objects live in).
    await c.apply(
      { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
      { fieldManager: "test" },
    );
    const result = await applier(ns).apply(plan, revision, { dryRun: true });
    expect(new Set(result.changes.map((ch) => ch.object))).toEqual(
      new Set(sent.objects.map((p) => objectName(p.object))),
    );
    const workloads = sent.objects.filter((p) => p.stage === "workloads");
    expect(workloads.length).toBeGreaterThan(0);
    for (const p of workloads) expect(await c.get(p.object), p.key).toBeUndefined();
  });

  it("the apply leaves exactly the plan's objects, each marked", async () => {
    const { ns, plan } = await planIn();
    const result = await applier(ns).apply(plan, revision);
    const sent = clusterPlan(plan, { fieldManager: FIELD_MANAGER, crds: false });
    expect(result.applied + result.unchanged).toBe(sent.objects.length);
    expect(await liveKeys(plan)).toEqual(sent.keys);
  });

  it("the image policy's plan leaves out exactly the refused server's workloads", async () => {
    const { ns, plan } = await planIn();
    const servers = plan.objects.filter((p) => p.object.kind === "MCPServer").map((p) => p.key);
    const [refused, admitted] = servers;
    const verdict = (allowed: boolean): ImageVerdict => ({
      allowed,
      image: "img",
      reason: allowed ? "ImageListed" : "ImageNotListed",
      message: "m",
    });
    const { admitted: kept, withheld } = withholdRefused(
      plan,
      new Map([
        [refused!, verdict(false)],
        [admitted!, verdict(true)],
      ]),
    );
    expect(withheld.length).toBeGreaterThan(0);
    await applier(ns).apply(kept, revision);
    const live = await liveKeys(plan);
    const refusedWorkloads = plan.objects.filter((p) => p.owner === refused).map((p) => p.key);
    expect(refusedWorkloads.filter((k) => live.has(k))).toEqual([]);
    // The refused resource itself is applied (its status carries the verdict), as is the rest.
    expect(live.has(refused!)).toBe(true);
    expect(plan.objects.filter((p) => p.owner === admitted).every((p) => live.has(p.key))).toBe(
      true,
    );
    expect(live).toEqual(clusterPlan(kept, { fieldManager: FIELD_MANAGER, crds: false }).keys);
  });
});

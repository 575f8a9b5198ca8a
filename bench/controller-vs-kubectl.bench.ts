// The cluster target against `kubectl apply --server-side` on a revision of many custom resources
// (BENCH_OBJECTS MCPToolConfigs, default 10,000, in ten namespaces), each on its own fresh
// control plane of the same run (etcd, kube-apiserver, kube-controller-manager):
// - controller-vs-kubectl-first-apply-10k: render and first apply of the revision's objects (and
//   the inventory), as `controller --once` does it, against kubectl applying the same rendered
//   objects (CRDs and Namespaces first, then the rest, as one file each); target ratio <= 1.2.
// - controller-first-sync-10k: the same sync with the resources' status writes that follow the
//   apply (one request per custom resource, as their operator would write them), against kubectl.
// - controller-noop-resync-10k: a new applier (a restart) applying the same revision again, drift
//   check and status comparison included, as a share of the whole first sync, which it repeats
//   without the writes (target <= 0.1), with its request counts.
// - controller-drift-resync-10k: the same after one object was changed by hand (one apply).
// Without the binaries (`make cluster-tools`) it says so and measures nothing.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { ClusterApplier } from "../src/controller/cluster-applier.js";
import { clusterPlan } from "../src/controller/cluster-plan.js";
import { renderFiles } from "../src/controller/pipeline.js";
import { KubeClient } from "../src/infra/kube/client.js";
import { findClusterBinaries } from "../test/support/cluster/binaries.js";
import { type ControlPlane, startControlPlane } from "../test/support/cluster/control-plane.js";

const bins = findClusterBinaries();
if ("missing" in bins) {
  console.log(`bench: controller-vs-kubectl SKIPPED: ${bins.missing}`);
  process.exit(process.env.REQUIRE_CLUSTER === "1" ? 1 : 0);
}

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 10_000);
const NAMESPACES = 10;
const label = OBJECTS % 1000 === 0 ? `${OBJECTS / 1000}k` : String(OBJECTS);

function files(): { name: string; text: string }[] {
  return Array.from({ length: NAMESPACES }, (_, n) => {
    const docs: string[] = [];
    for (let i = n; i < OBJECTS; i += NAMESPACES) {
      docs.push(
        stringify({
          apiVersion: "toolhive.stacklok.dev/v1alpha1",
          kind: "MCPToolConfig",
          metadata: { name: `tools-${i}`, namespace: `team-${n}` },
          spec: { toolsFilter: [`get_${i}`, `list_${i}`] },
        }),
      );
    }
    return { name: `fleet/team-${n}.yaml`, text: docs.join("---\n") };
  });
}

const revision = (commit: string) => ({ commit: commit.repeat(40), ref: "branch main" });

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-bench-vs-kubectl-"));
let plane: ControlPlane | undefined;
try {
  // The revision's files as the controller reads them from Git, written once, outside the timings.
  const texts = files();
  const rendered = await renderFiles(texts);
  if (!rendered.ok) throw new Error(rendered.errors.join("\n"));
  const plan = clusterPlan(rendered.plan, { fieldManager: "mcpfleet" });
  const objects = plan.objects.length;

  // kubectl: one request per object, one after another.
  plane = await startControlPlane(bins);
  const early = plan.objects.filter((p) => p.stage === "crds" || p.stage === "namespaces");
  const rest = plan.objects.filter((p) => p.stage !== "crds" && p.stage !== "namespaces");
  const earlyFile = join(dir, "early.yaml");
  const restFile = join(dir, "rest.yaml");
  writeFileSync(earlyFile, early.map((p) => stringify(p.object)).join("---\n"));
  writeFileSync(restFile, rest.map((p) => stringify(p.object)).join("---\n"));
  const kubectl = (...args: string[]) => {
    const r = spawnSync(bins.path("kubectl"), ["--kubeconfig", plane!.kubeconfig, ...args], {
      encoding: "utf8",
      maxBuffer: 256 << 20,
    });
    if (r.status !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.stderr}`);
  };
  let t = performance.now();
  kubectl("apply", "--server-side", "--field-manager=kubectl-bench", "-f", earlyFile);
  kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all");
  kubectl("apply", "--server-side", "--field-manager=kubectl-bench", "-f", restFile);
  const kubectlMs = performance.now() - t;
  await plane.stop();
  plane = undefined;

  // The controller, on a fresh control plane of its own.
  plane = await startControlPlane(bins);
  const applierOn = (client: KubeClient) =>
    new ClusterApplier({
      client,
      fieldManager: "mcpfleet",
      prune: true,
      forceRecreate: false,
      namespace: "mcpfleet-system",
    });
  let client = KubeClient.fromFile(plane.kubeconfig);
  t = performance.now();
  const again = await renderFiles(texts);
  if (!again.ok) throw new Error(again.errors.join("\n"));
  const first = await applierOn(client).apply(again.plan, revision("a"));
  const syncMs = performance.now() - t;
  // What kubectl does (render, send every object, record the inventory), without the status
  // writes that follow, which kubectl has no part in.
  const firstMs = syncMs - (first.timings?.status ?? 0) - (first.timings?.rollout ?? 0);
  const firstCounts = { writes: client.writes, reads: client.reads };
  client.close();

  // A restart: a new client and applier, the same revision.
  const resync = async () => {
    const c = KubeClient.fromFile(plane!.kubeconfig);
    const start = performance.now();
    const r = await renderFiles(texts);
    if (!r.ok) throw new Error(r.errors.join("\n"));
    const result = await applierOn(c).apply(r.plan, revision("a"), { resend: true });
    const ms = performance.now() - start;
    c.close();
    return { ms, result, writes: c.writes, reads: c.reads };
  };
  const noop = await resync();

  client = KubeClient.fromFile(plane.kubeconfig);
  await client.mergePatch(
    {
      apiVersion: "toolhive.stacklok.dev/v1alpha1",
      kind: "MCPToolConfig",
      metadata: { name: "tools-0", namespace: "team-0" },
    },
    { spec: { toolsFilter: ["changed_by_hand"] } },
    { fieldManager: "kubectl-edit" },
  );
  client.close();
  const drift = await resync();

  console.log(
    `bench: controller-vs-kubectl-first-apply-${label} ${(firstMs / 1000).toFixed(2)} s ratio=${(firstMs / kubectlMs).toFixed(2)} (controller render + apply + inventory / kubectl apply --server-side ${(kubectlMs / 1000).toFixed(2)} s of the same ${objects} objects, each on a fresh control plane, target <= 1.2; controller: ${first.applied} applied, ${firstCounts.writes} write + ${firstCounts.reads} read requests)`,
  );
  console.log(
    `bench: controller-first-sync-${label} ${(syncMs / 1000).toFixed(2)} s ratio=${(syncMs / kubectlMs).toFixed(2)} (the whole first sync / kubectl apply: the apply above, then ${first.statuses ?? 0} resource statuses written in ${((first.timings?.status ?? 0) / 1000).toFixed(2)} s, a request each, which kubectl does not write)`,
  );
  console.log(
    `bench: controller-noop-resync-${label} ${(noop.ms / 1000).toFixed(2)} s ratio=${(noop.ms / syncMs).toFixed(3)} (restart + drift check of the unchanged revision, statuses compared / the whole first sync, target <= 0.1; ${noop.result.applied} applied, ${noop.writes} write + ${noop.reads} read requests)`,
  );
  console.log(
    `bench: controller-drift-resync-${label} ${(drift.ms / 1000).toFixed(2)} s ratio=${(drift.ms / syncMs).toFixed(3)} (restart + drift check after one object changed by hand / the whole first sync; ${drift.result.applied} applied, ${drift.writes} write + ${drift.reads} read requests)`,
  );
} finally {
  await plane?.stop();
  rmSync(dir, { recursive: true, force: true });
}

// The cluster target on the repository of 1,000 custom resources (bench/controller-repo.ts)
// against a real kube-apiserver and etcd (the control plane the cluster tests use, started here
// without kube-controller-manager so that only our requests load it): the first full apply, then
// a no-op poll (a commit that changes nothing rendered), its time as a share of the first apply's
// (target <= 0.05) and the write requests it made, counted on the wire by the test proxy
// (target 0). Without the binaries (`make cluster-tools`) it says so and measures nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ClusterApplier } from "../src/controller/cluster-applier.js";
import { GitSource } from "../src/infra/git/source.js";
import { KubeClient } from "../src/infra/kube/client.js";
import { Reconciler } from "../src/controller/reconciler.js";
import { ControllerStatus } from "../src/controller/status.js";
import { findClusterBinaries } from "../test/support/cluster/binaries.js";
import { startControlPlane } from "../test/support/cluster/control-plane.js";
import { startApiProxy } from "../test/support/cluster/proxy.js";
import { commitFiles, makeRepo } from "../test/support/git-server.js";
import { RESOURCES, repository } from "./controller-repo.js";

const bins = findClusterBinaries();
if ("missing" in bins) {
  console.log(`bench: controller-cluster SKIPPED: ${bins.missing}`);
  process.exit(process.env.REQUIRE_CLUSTER === "1" ? 1 : 0);
}

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-bench-controller-cluster-"));
const plane = await startControlPlane(bins, { controllerManager: false });
const proxy = await startApiProxy(plane.kubeconfig);
try {
  const work = join(dir, "repo");
  makeRepo(work, repository());
  const client = KubeClient.fromFile(proxy.kubeconfigPath);
  const source = new GitSource({
    url: pathToFileURL(work).href,
    ref: { branch: "main" },
    path: "fleet",
    cacheDir: join(dir, "cache"),
  });
  const applier = new ClusterApplier({
    client,
    fieldManager: "mcpfleet",
    prune: true,
    forceRecreate: false,
    namespace: "mcpfleet-system",
  });
  const status = new ControllerStatus(source.refName, applier.target);
  const reconciler = new Reconciler({ source, applier, status });

  let t = performance.now();
  const first = await reconciler.sync();
  const firstMs = performance.now() - t;
  if (first.kind !== "applied") throw new Error(`first apply: ${JSON.stringify(first)}`);
  const firstWrites = proxy.writes();

  commitFiles(work, { "README.md": "fleet, documented\n" }, "docs only");
  proxy.resetRequests();
  t = performance.now();
  const noop = await reconciler.sync();
  const noopMs = performance.now() - t;
  if (noop.kind !== "applied") throw new Error(`no-op poll: ${JSON.stringify(noop)}`);
  const noopWrites = proxy.writes();
  const noopReads = proxy.requests.length - noopWrites;

  console.log(
    `bench: controller-cluster-first-apply ${(firstMs / 1000).toFixed(2)} s ratio=1.00 (${RESOURCES} custom resources, ${first.result.applied} objects applied to kube-apiserver with ${firstWrites} write requests; control plane up in ${(plane.startMs / 1000).toFixed(1)} s)`,
  );
  console.log(
    `bench: controller-cluster-noop-poll ${(noopMs / 1000).toFixed(3)} s ratio=${(noopMs / firstMs).toFixed(3)} (no-op poll / first apply against kube-apiserver, target <= 0.05; ${noopReads} read requests)`,
  );
  console.log(
    `bench: controller-cluster-noop-writes ${noopWrites} requests ratio=${(noopWrites / Math.max(1, firstWrites)).toFixed(3)} (write requests of the no-op poll / of the first apply, on the wire, target 0)`,
  );
  client.close();
} finally {
  await proxy.stop();
  await plane.stop();
  rmSync(dir, { recursive: true, force: true });
}

// vitest global setup: one control plane for every cluster test (test/cluster/) of a run.
// MCPFLEET_E2E_KUBECONFIG (`make test-e2e KUBECONFIG=...`) points the same tests at another
// cluster instead. Without binaries the cluster tests skip with one line saying why, unless
// REQUIRE_CLUSTER=1 (CI), which makes that a failure.
import { relative } from "node:path";
import type { TestProject } from "vitest/node";
import { REPO_ROOT, findClusterBinaries } from "./binaries.js";
import type { ClusterContext } from "./context.js";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

let plane: ControlPlane | undefined;

const SUBCOMMANDS = new Set(["run", "watch", "dev", "related", "bench", "list"]);

/** True when the files this run selected include a cluster test. */
async function runIncludesClusterTests(project: TestProject): Promise<boolean> {
  const all = (await project.globTestFiles()).testFiles.map((f) => relative(REPO_ROOT, f));
  // vitest's filters are the command line's words, after its subcommand, that name part of a
  // test file's path (option values do not).
  const words = process.argv.slice(2).filter((a) => !a.startsWith("-"));
  if (SUBCOMMANDS.has(words[0] ?? "")) words.shift();
  const filters = words.filter((a) => all.some((f) => f.includes(a)));
  const selected =
    filters.length === 0 ? all : all.filter((f) => filters.some((a) => f.includes(a)));
  return selected.some((f) => f.startsWith("test/cluster/"));
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const provide = (ctx: ClusterContext): void => project.provide("cluster", ctx);
  const external = process.env.MCPFLEET_E2E_KUBECONFIG;
  if (external !== undefined && external !== "") {
    provide({ kubeconfig: external, kind: "external" });
    return async () => {};
  }
  // CI always starts it, so that a filter this misreads can never skip cluster tests there.
  if (process.env.REQUIRE_CLUSTER !== "1" && !(await runIncludesClusterTests(project))) {
    provide({ kind: "none", reason: "no cluster test selected" });
    return async () => {};
  }
  const bins = findClusterBinaries();
  if ("missing" in bins) {
    const msg = `cluster tests SKIPPED: ${bins.missing}`;
    if (process.env.REQUIRE_CLUSTER === "1") throw new Error(`REQUIRE_CLUSTER=1: ${msg}`);
    console.warn(msg);
    provide({ kind: "none", reason: bins.missing });
    return async () => {};
  }
  plane = await startControlPlane(bins);
  console.log(
    `cluster: etcd + kube-apiserver + kube-controller-manager from ${bins.dir}, ` +
      `ready at ${plane.server} in ${(plane.startMs / 1000).toFixed(1)}s`,
  );
  provide({
    kind: "local",
    kubeconfig: plane.kubeconfig,
    binDir: bins.dir,
    caCert: plane.pki.caCert,
    servingCert: plane.pki.servingCert,
    servingKey: plane.pki.servingKey,
  });
  return async () => {
    await plane?.stop();
  };
}

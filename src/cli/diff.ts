// `mcpfleet diff PATH...`: what `mcpfleet apply` would change against the live cluster, as a
// unified diff per object (server-populated and defaulted fields ignored). Exit codes as kubectl
// diff and flux diff have them, so that a pipeline can tell "changes" from "broken": 0 no
// changes, 1 changes, 2 any error (usage, invalid files, kubeconfig, cluster).
import { McpfleetError } from "../errors.js";
import { explainKubeError } from "../infra/kube/explain-error.js";
import { clusterPlan } from "../controller/cluster-plan.js";
import { diffPlan } from "../controller/diff.js";
import { InventoryStore } from "../controller/inventory.js";
import { renderPaths } from "../controller/pipeline.js";
import { clusterClient, controllerNamespace } from "../controller/targets.js";
import { usageError } from "./args.js";
import { reportFailure } from "./failure.js";
import { CLUSTER_OPTIONS, parseClusterCommand } from "./cluster-options.js";

const USAGE = `Usage: mcpfleet diff [-f] PATH... [options]

Shows what mcpfleet apply would change in the cluster: for each object, a unified diff of its
live state against its state after a server-side dry-run apply; new objects whole, and with
--prune the objects that would be deleted. The files are validated before the cluster is
contacted.

Exit status (as kubectl diff and flux diff): 0 no changes, 1 changes, 2 an error: usage, invalid
files, the kubeconfig, the cluster.

${CLUSTER_OPTIONS}`;

export async function runDiff(
  argv: string[],
  io: { out: (l: string) => void; err: (l: string) => void } = {
    out: (l) => void process.stdout.write(l),
    err: (l) => void process.stderr.write(`${l}\n`),
  },
): Promise<number> {
  const config = parseClusterCommand("diff", argv, USAGE);
  if (config === undefined) return 0;
  if (config.dryRun !== "none" || config.output !== "text" || config.waitTimeoutMs !== undefined) {
    throw usageError(
      "diff",
      "--dry-run, -o and --wait-timeout are apply's options; diff never writes",
    );
  }
  // The files first: invalid input is reported as such, whatever the state of the kubeconfig.
  const rendered = await renderPaths(config.paths, process.cwd(), {
    namespace: config.namespace,
  });
  for (const w of rendered.warnings) io.err(w);
  if (!rendered.ok) {
    for (const e of rendered.errors) io.err(e);
    throw new McpfleetError(
      "ERR_INVALID_RESOURCES",
      `${rendered.errors.length} errors; nothing to diff`,
    );
  }
  const client = clusterClient({
    ...(config.kubeconfig !== undefined ? { kubeconfig: config.kubeconfig } : {}),
    ...(config.context !== undefined ? { context: config.context } : {}),
    fieldManager: config.fieldManager,
    prune: config.prune,
    forceRecreate: false,
  });
  try {
    // What apply would send of the pipeline's plan.
    const plan = clusterPlan(rendered.plan, { fieldManager: config.fieldManager });
    const inventory = new InventoryStore(client, {
      name: `${config.fieldManager}-inventory`,
      namespace: controllerNamespace(client, config.controllerNamespace),
      fieldManager: config.fieldManager,
    });
    const diffs = await diffPlan(client, plan, {
      fieldManager: config.fieldManager,
      prune: config.prune,
      inventory,
    });
    for (const d of diffs) io.out(d.diff);
    const count = (a: string) => diffs.filter((d) => d.action === a).length;
    io.err(
      diffs.length === 0
        ? "no changes"
        : `${count("create")} to create, ${count("change")} to change, ${count("delete")} to delete`,
    );
    return diffs.length === 0 ? 0 : 1;
  } catch (err) {
    throw explainKubeError(err, client) ?? err;
  } finally {
    client.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  try {
    return await runDiff(argv);
  } catch (err) {
    // 1 means "there are changes", so every failure exits 2 or more.
    return Math.max(reportFailure(err), 2);
  }
}

// `mcpfleet diff PATH...`: what `mcpfleet apply` would change against the live cluster, as a
// unified diff per object (server-populated and defaulted fields ignored). Exit 1 when there are
// changes, 0 when none, 2 on usage errors or invalid files.
import { McpfleetError } from "../errors.js";
import { explainKubeError } from "../controller/kube-errors.js";
import { clusterPlan } from "../controller/cluster-plan.js";
import { diffPlan } from "../controller/diff.js";
import { InventoryStore } from "../controller/inventory.js";
import { renderPaths } from "../controller/pipeline.js";
import { clusterClient, controllerNamespace } from "../controller/targets.js";
import { usageError } from "./args.js";
import { CLUSTER_OPTIONS, parseClusterCommand } from "./cluster-options.js";

const USAGE = `Usage: mcpfleet diff [-f] PATH... [options]

Shows what mcpfleet apply would change in the cluster: for each object, a unified diff of its
live state against its state after a server-side dry-run apply; new objects whole, and with
--prune the objects that would be deleted. Exit 0 no changes, 1 changes, 2 usage or invalid files.

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
  const client = clusterClient({
    ...(config.kubeconfig !== undefined ? { kubeconfig: config.kubeconfig } : {}),
    ...(config.context !== undefined ? { context: config.context } : {}),
    fieldManager: config.fieldManager,
    prune: config.prune,
    forceRecreate: false,
  });
  try {
    const rendered = await renderPaths(config.paths, process.cwd(), {
      namespace: config.namespace,
    });
    if (!rendered.ok) {
      for (const e of rendered.errors) io.err(e);
      throw new McpfleetError(
        "ERR_INVALID_RESOURCES",
        `${rendered.errors.length} errors; nothing to diff`,
      );
    }
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
    if (err instanceof McpfleetError && err.code === "ERR_INVALID_RESOURCES") {
      console.error(`mcpfleet: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

// `mcpfleet apply PATH...`: the controller's pipeline once, from local files: validate (nothing
// is applied when any file is invalid), synthesize, server-side apply with the inventory, prune.
import { McpfleetError } from "../errors.js";
import { renderPaths } from "../controller/pipeline.js";
import { createApplier } from "../controller/targets.js";
import { CLUSTER_OPTIONS, parseClusterCommand } from "../controller/command-options.js";

const USAGE = `Usage: mcpfleet apply PATH... [options]

Validates the resources in the files and directories given, synthesizes them and applies the
result to the cluster with server-side apply, as mcpfleet controller does for a revision.
Nothing is applied when any file is invalid. Exit 0 applied, 1 invalid or failed, 2 usage.

      --dry-run                server-side dry run: report what would change, write nothing
      --force-recreate         delete and recreate objects whose immutable fields changed
${CLUSTER_OPTIONS}`;

export async function runApply(
  argv: string[],
  io: { out: (l: string) => void; err: (l: string) => void } = {
    out: (l) => void process.stdout.write(`${l}\n`),
    err: (l) => void process.stderr.write(`${l}\n`),
  },
): Promise<number> {
  const config = parseClusterCommand("apply", argv, USAGE);
  if (config === undefined) return 0;
  const applier = createApplier(
    { kind: "cluster" },
    {
      ...(config.kubeconfig !== undefined ? { kubeconfig: config.kubeconfig } : {}),
      fieldManager: config.fieldManager,
      prune: config.prune,
      forceRecreate: config.forceRecreate,
      ...(config.controllerNamespace !== undefined
        ? { namespace: config.controllerNamespace }
        : {}),
    },
    { onChange: (c) => io.out(`${c.object} ${c.action}${config.dryRun ? " (dry run)" : ""}`) },
  );
  const rendered = await renderPaths(config.paths, process.cwd(), { namespace: config.namespace });
  for (const w of rendered.warnings) io.err(w);
  if (!rendered.ok) {
    for (const e of rendered.errors) io.err(e);
    io.err(`${rendered.errors.length} errors; nothing was applied`);
    return 1;
  }
  try {
    const result = await applier.apply(
      rendered.objects,
      { commit: "local", ref: config.paths.join(" ") },
      { dryRun: config.dryRun, resources: rendered.loaded, owners: rendered.owners },
    );
    io.out(
      `${config.dryRun ? "would apply" : "applied"}: ${result.applied} changed, ${result.unchanged} unchanged, ${result.pruned} pruned`,
    );
    return 0;
  } catch (err) {
    if (err instanceof McpfleetError) {
      io.err(`apply failed: ${err.message} (${err.code})`);
      return 1;
    }
    throw err;
  } finally {
    (applier as { close?: () => void }).close?.();
  }
}

export function main(argv: string[]): Promise<number> {
  return runApply(argv);
}

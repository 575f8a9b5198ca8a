// `mcpfleet apply -f PATH...`: the controller's pipeline once, from local files: validate (nothing
// is applied when any file is invalid), synthesize, server-side apply with the inventory, prune.
import { renderPaths } from "../controller/pipeline.js";
import { planWorkloads } from "../controller/revision-plan.js";
import { explainKubeError } from "../infra/kube/explain-error.js";
import type { KubeClient } from "../infra/kube/client.js";
import { clusterClient, createApplier } from "../controller/targets.js";
import { objectName } from "../controller/applier.js";
import { CLUSTER_OPTIONS, parseClusterCommand } from "./cluster-options.js";
import { progressLine } from "./progress.js";
import { retryLine } from "./retry-log.js";
import type { RetryInfo } from "../controller/backoff.js";
import { type Io, stdio } from "./io.js";

const USAGE = `Usage: mcpfleet apply [-f] PATH... [options]

Validates the resources in the files and directories given, synthesizes them and applies the
result to the cluster with server-side apply, as mcpfleet controller does for a revision.
Nothing is applied when any file is invalid. Exit 0 applied, 1 invalid or failed, 2 usage.

      --dry-run=none|client|server
                               client: validate and render, print what would be applied, talk
                               to no server; server (also a bare --dry-run): the API server runs
                               every admission step and reports what would change; writes nothing
      --force-recreate         delete and recreate objects whose immutable fields changed
      --wait-timeout DURATION  then wait this long for the Deployments and StatefulSets to roll
                               out (as kubectl rollout status); not rolled out in time: exit 1
  -o, --output text|json       text lines (default), or one JSON document of every change
${CLUSTER_OPTIONS}`;

export async function runApply(argv: string[], io: Io = stdio): Promise<number> {
  const config = parseClusterCommand("apply", argv, USAGE);
  if (config === undefined) return 0;
  const json = config.output === "json";
  const progress = progressLine();
  progress.update(`apply: validating ${config.paths.join(" ")}…`);
  const rendered = await renderPaths(config.paths, process.cwd(), { namespace: config.namespace });
  progress.done();
  for (const w of rendered.warnings) io.err(w);
  if (!rendered.ok) {
    for (const e of rendered.errors) io.err(e);
    io.err(`${rendered.errors.length} errors; nothing was applied`);
    return 1;
  }
  if (config.dryRun === "client") {
    const names = planWorkloads(rendered.plan).map((o) => objectName(o));
    if (json) io.out(JSON.stringify({ dryRun: "client", objects: names }, null, 2));
    else for (const n of names) io.out(`${n} (dry run, client)`);
    io.err(`would apply ${names.length} object(s); the cluster was not contacted`);
    return 0;
  }
  const cluster = {
    ...(config.kubeconfig !== undefined ? { kubeconfig: config.kubeconfig } : {}),
    ...(config.context !== undefined ? { context: config.context } : {}),
    fieldManager: config.fieldManager,
    prune: config.prune,
    forceRecreate: config.forceRecreate,
    ...(config.controllerNamespace !== undefined ? { namespace: config.controllerNamespace } : {}),
    ...(config.waitTimeoutMs !== undefined ? { waitTimeoutMs: config.waitTimeoutMs } : {}),
  };
  const client: KubeClient = clusterClient(cluster);
  const dryRun = config.dryRun === "server";
  let written = 0;
  const applier = createApplier({ kind: "cluster" }, cluster, {
    client,
    onChange: (c) => {
      progress.update(`apply: ${++written} object(s) written…`);
      if (!json) {
        progress.done();
        io.out(`${c.object} ${c.action}${dryRun ? " (server dry run)" : ""}`);
      }
    },
    onImageRefused: (server, v) => {
      progress.done();
      io.err(`${server}: workloads not applied: ${v.message} (${v.reason})`);
    },
    // A person is waiting: give up on an unreachable server within a few seconds, not a minute.
    backoff: {
      capMs: 1_000,
      ...(config.verbose ? { onRetry: (r: RetryInfo) => io.err(retryLine(r)) } : {}),
    },
  });
  try {
    const result = await applier.apply(
      rendered.plan,
      { commit: "local", ref: config.paths.join(" ") },
      { dryRun },
    );
    progress.done();
    const totals = `${result.applied} changed, ${result.unchanged} unchanged, ${result.pruned} pruned`;
    const summary = `${dryRun ? "would apply" : "applied"}: ${totals}`;
    if (json) {
      io.out(JSON.stringify({ dryRun: config.dryRun, ...result }, null, 2));
      io.err(summary);
    } else io.out(summary);
    const notReady = result.notReady ?? [];
    for (const n of notReady) io.err(`${n.object} not rolled out: ${n.message} (${n.reason})`);
    if (notReady.length > 0) {
      io.err(`${notReady.length} workload(s) did not roll out within --wait-timeout`);
      return 1;
    }
    return 0;
  } catch (err) {
    progress.done();
    throw explainKubeError(err, client) ?? err;
  } finally {
    client.close();
  }
}

export function main(argv: string[]): Promise<number> {
  return runApply(argv);
}

// Command-line options `mcpfleet apply` and `mcpfleet diff` share, with kubectl's habits: files
// by -f/--filename or as arguments, --kubeconfig, --context, -n, --dry-run=none|client|server.
import type { ControllerObject } from "../controller/operations.js";
import { parseInterval } from "../controller/schedule.js";
import { clusterClient, controllerNamespace } from "../controller/targets.js";
import { parseCommandArgs, usageError } from "./args.js";

export type DryRun = "none" | "client" | "server";
const DRY_RUNS: readonly DryRun[] = ["none", "client", "server"];

export interface ClusterCommandConfig {
  paths: string[];
  kubeconfig?: string;
  context?: string;
  fieldManager: string;
  prune: boolean;
  forceRecreate: boolean;
  dryRun: DryRun;
  namespace: string;
  controllerNamespace?: string;
  output: "text" | "json";
  /** -v: show each retry of an API request. */
  verbose: boolean;
  /** --wait-timeout: how long apply waits for Deployments and StatefulSets to roll out (ms). */
  waitTimeoutMs?: number;
}

/**
 * A bare `--dry-run` (kubectl's old form) means a server-side dry run, as it always did here;
 * rewritten before parsing so that it does not swallow the next argument as its value.
 */
function bareDryRun(argv: readonly string[]): string[] {
  return argv.map((a) => (a === "--dry-run" ? "--dry-run=server" : a));
}

/** The flags naming a cluster and a controller's inventory, the same in every cluster command. */
export const CONNECTION_ARGS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  "field-manager": { type: "string", default: "mcpfleet" },
  "controller-namespace": { type: "string" },
} as const;

/** The controller that the connection flags name, with a client of its cluster. */
export function connectController(
  command: string,
  values: {
    kubeconfig?: string | undefined;
    context?: string | undefined;
    "field-manager": string;
    "controller-namespace"?: string | undefined;
  },
): ControllerObject {
  for (const flag of ["kubeconfig", "context", "field-manager", "controller-namespace"] as const) {
    if (values[flag] === "") throw usageError(command, `--${flag} must not be empty`);
  }
  const client = clusterClient({
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    fieldManager: values["field-manager"],
    prune: false,
    forceRecreate: false,
  });
  return {
    client,
    namespace: controllerNamespace(client, values["controller-namespace"]),
    fieldManager: values["field-manager"],
  };
}

export const CONNECTION_OPTIONS = `      --kubeconfig FILE        cluster credentials (default: in-cluster or $KUBECONFIG)
      --context NAME           the kubeconfig context to use (default: its current context)
      --controller-namespace NS
                               the controller's namespace (default: $POD_NAMESPACE, else the
                               kubeconfig context's)
      --field-manager NAME     the controller's --field-manager, which names its inventory
                               ConfigMap NAME-inventory (default mcpfleet)`;

export function parseClusterCommand(
  command: string,
  argv: string[],
  usage: string,
): ClusterCommandConfig | undefined {
  const parsed = parseCommandArgs(command, {
    args: bareDryRun(argv),
    allowPositionals: true,
    strict: true,
    options: {
      filename: { type: "string", short: "f", multiple: true },
      recursive: { type: "boolean", short: "R", default: false },
      ...CONNECTION_ARGS,
      prune: { type: "boolean", default: false },
      "force-recreate": { type: "boolean", default: false },
      "dry-run": { type: "string", default: "none" },
      namespace: { type: "string", short: "n", default: "default" },
      output: { type: "string", short: "o", default: "text" },
      verbose: { type: "boolean", short: "v", default: false },
      "wait-timeout": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const v = parsed.values;
  if (v.help) {
    console.log(usage);
    return undefined;
  }
  const paths = [...(v.filename ?? []), ...parsed.positionals];
  if (paths.length === 0) throw usageError(command, "give the files to read: -f PATH or PATH");
  if (paths.includes("")) throw usageError(command, "a file name must not be empty");
  for (const flag of ["field-manager", "namespace", "context", "kubeconfig"] as const) {
    if (v[flag] === "") throw usageError(command, `--${flag} must not be empty`);
  }
  const dryRun = v["dry-run"] as DryRun;
  if (!DRY_RUNS.includes(dryRun)) {
    throw usageError(command, `--dry-run must be none, client or server, not "${v["dry-run"]}"`);
  }
  if (v.output !== "text" && v.output !== "json") {
    throw usageError(command, `-o must be text or json, not "${v.output}"`);
  }
  let waitTimeoutMs: number | undefined;
  if (v["wait-timeout"] !== undefined && v["wait-timeout"] !== "0") {
    try {
      waitTimeoutMs = parseInterval(v["wait-timeout"], "--wait-timeout");
    } catch (err) {
      throw usageError(command, (err as Error).message);
    }
  }
  return {
    paths,
    ...(v.kubeconfig !== undefined ? { kubeconfig: v.kubeconfig } : {}),
    ...(v.context !== undefined ? { context: v.context } : {}),
    fieldManager: v["field-manager"],
    prune: v.prune,
    forceRecreate: v["force-recreate"],
    dryRun,
    namespace: v.namespace,
    ...(v["controller-namespace"] !== undefined
      ? { controllerNamespace: v["controller-namespace"] }
      : {}),
    output: v.output,
    verbose: v.verbose,
    ...(waitTimeoutMs !== undefined ? { waitTimeoutMs } : {}),
  };
}

export const CLUSTER_OPTIONS = `Files:
  -f, --filename PATH          a file or directory to read (repeatable; same as giving PATH)
  -R, --recursive              accepted for kubectl habit: directories are always read recursively
Cluster:
      --kubeconfig FILE        cluster credentials (default: in-cluster or $KUBECONFIG)
      --context NAME           the kubeconfig context to use (default: its current context)
      --field-manager NAME     server-side apply field manager (default mcpfleet)
      --prune                  delete objects applied before that the paths no longer render
      --controller-namespace NS
                               namespace of the inventory (default: $POD_NAMESPACE, else the
                               kubeconfig context's); use the controller's to share its inventory
  -n, --namespace NS           namespace of resources whose metadata has none (default "default")
  -v, --verbose                show each retried API request
  -h, --help                   show this help`;

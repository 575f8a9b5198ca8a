// Command-line options `mcpfleet apply` and `mcpfleet diff` share: the paths to load and the cluster target.
import { McpfleetError } from "../errors.js";
import { parseCommandArgs } from "../cli/args.js";

export interface ClusterCommandConfig {
  paths: string[];
  kubeconfig?: string;
  fieldManager: string;
  prune: boolean;
  forceRecreate: boolean;
  dryRun: boolean;
  namespace: string;
  controllerNamespace?: string;
}

export function parseClusterCommand(
  command: string,
  argv: string[],
  usage: string,
): ClusterCommandConfig | undefined {
  const parsed = parseCommandArgs(command, {
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      kubeconfig: { type: "string" },
      "field-manager": { type: "string", default: "mcpfleet" },
      prune: { type: "boolean", default: false },
      "force-recreate": { type: "boolean", default: false },
      "dry-run": { type: "boolean", default: false },
      namespace: { type: "string", short: "n", default: "default" },
      "controller-namespace": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const v = parsed.values;
  if (v.help) {
    console.log(usage);
    return undefined;
  }
  if (parsed.positionals.length === 0) {
    throw new McpfleetError(
      "ERR_USAGE",
      `${command}: give at least one PATH; see mcpfleet ${command} --help`,
    );
  }
  if (v["field-manager"] === "" || v.namespace === "") {
    throw new McpfleetError(
      "ERR_USAGE",
      `${command}: --field-manager and --namespace must not be empty`,
    );
  }
  return {
    paths: parsed.positionals,
    ...(v.kubeconfig !== undefined ? { kubeconfig: v.kubeconfig } : {}),
    fieldManager: v["field-manager"],
    prune: v.prune,
    forceRecreate: v["force-recreate"],
    dryRun: v["dry-run"],
    namespace: v.namespace,
    ...(v["controller-namespace"] !== undefined
      ? { controllerNamespace: v["controller-namespace"] }
      : {}),
  };
}

export const CLUSTER_OPTIONS = `Cluster:
      --kubeconfig FILE        cluster credentials (default: in-cluster or $KUBECONFIG)
      --field-manager NAME     server-side apply field manager (default mcpfleet)
      --prune                  delete objects applied before that the paths no longer render
      --controller-namespace NS
                               namespace of the inventory (default: $POD_NAMESPACE, else the
                               kubeconfig context's); use the controller's to share its inventory
  -n, --namespace NS           namespace of resources whose metadata has none (default "default")
  -h, --help                   show this help`;

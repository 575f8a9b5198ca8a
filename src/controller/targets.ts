// Where a sync's objects go, from `--target`: `dir:PATH` writes manifests (render-target.ts);
// `cluster` applies them to a Kubernetes API server with server-side apply (cluster-applier.ts).
// This is the one place that chooses an Applier.
import { isMcpfleetError, McpfleetError } from "../errors.js";
import type { Applier } from "./applier.js";
import type { BackoffOptions } from "./backoff.js";
import { ClusterApplier } from "./cluster-applier.js";
import { type ImageVerdict, withImagePolicy } from "./image-policy.js";
import { type ServiceAccountRef, impersonating } from "./impersonation.js";
import { namespaceCheck } from "./tenancy.js";
import type { AdmissionCheck } from "./admission.js";
import type { ObjectChange } from "./applier.js";
import { KubeClient } from "../infra/kube/client.js";
import { DirTarget } from "./render-target.js";

export type TargetSpec = { kind: "cluster" } | { kind: "dir"; path: string };

/** Settings the cluster target needs (server-side apply and its field manager). */
export interface ClusterTargetOptions {
  kubeconfig?: string;
  /** kubeconfig context to use instead of its current one. */
  context?: string;
  fieldManager: string;
  prune: boolean;
  forceRecreate: boolean;
  /** Namespace of the inventory and the leader Lease (default: $POD_NAMESPACE, else the context's). */
  namespace?: string;
  /** Where a revision may write, and as whom (the controller: see tenancy.ts). */
  tenancy?: {
    /** --namespace-allow globs. */
    allow: readonly string[];
    /** --target-namespace. */
    target?: string;
    /** -n when given: the operator named it, so it is allowed even when protected. */
    defaultNamespace?: string;
    serviceAccount?: ServiceAccountRef;
  };
  /** After applying, wait this long for the Deployments and StatefulSets to roll out (ms). */
  waitTimeoutMs?: number;
}

export function parseTarget(text: string): TargetSpec {
  if (text === "cluster") return { kind: "cluster" };
  if (text.startsWith("dir:") && text.length > 4) return { kind: "dir", path: text.slice(4) };
  throw new McpfleetError("ERR_USAGE", `--target must be cluster or dir:PATH, not ${text}`);
}

/** The controller's own namespace: the option, else $POD_NAMESPACE, else the kubeconfig's. */
export function controllerNamespace(client: KubeClient, explicit?: string): string {
  if (explicit !== undefined && explicit !== "") return explicit;
  const pod = process.env.POD_NAMESPACE;
  return pod !== undefined && pod !== "" ? pod : client.defaultNamespace();
}

export function clusterClient(cluster: ClusterTargetOptions): KubeClient {
  try {
    return KubeClient.fromFile(
      cluster.kubeconfig,
      cluster.context !== undefined ? { context: cluster.context } : {},
    );
  } catch (err) {
    const file = cluster.kubeconfig ?? process.env.KUBECONFIG ?? "~/.kube/config";
    const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
    const reason = missing
      ? "no such file (give --kubeconfig FILE or set KUBECONFIG)"
      : (err as Error).message;
    // A context the file lacks is a mistake on the command line; a missing or broken file is not.
    const code = isMcpfleetError(err) ? err.code : "ERR_IO";
    throw new McpfleetError(code, `cannot load the kubeconfig ${file}: ${reason}`);
  }
}

/**
 * The admission checks of the tenancy options, the same whatever the target: a revision a
 * cluster would refuse is not written to a directory either.
 */
export function admissionChecks(cluster: ClusterTargetOptions): AdmissionCheck[] {
  const tenancy = cluster.tenancy;
  if (tenancy === undefined) return [];
  // The controller's namespace is protected when it is known to be one: given, or the Pod's.
  const own = cluster.namespace ?? process.env.POD_NAMESPACE;
  return [
    namespaceCheck({
      allow: tenancy.allow,
      ...(tenancy.defaultNamespace !== undefined ? { named: [tenancy.defaultNamespace] } : {}),
      ...(tenancy.target !== undefined ? { target: tenancy.target } : {}),
      ...(own !== undefined && own !== "" ? { own } : {}),
    }),
  ];
}

export function createApplier(
  spec: TargetSpec,
  cluster: ClusterTargetOptions,
  hooks: {
    onChange?: (c: ObjectChange) => void;
    stopping?: () => boolean;
    /** Asked before every write (leader election: false once leadership ended). */
    mayWrite?: () => boolean;
    client?: KubeClient;
    /** What the run reads: a dir target may not be or hold one of these. */
    inputs?: readonly string[];
    /** Retry policy of API requests (a one-shot command gives up sooner; `-v` shows retries). */
    backoff?: Partial<BackoffOptions>;
    /** An MCPServer whose workloads enforceServers withholds (image-policy.ts). */
    onImageRefused?: (server: string, verdict: ImageVerdict) => void;
  } = {},
): Applier {
  if (spec.kind === "dir") return new DirTarget(spec.path, { inputs: hooks.inputs ?? [] });
  const client = hooks.client ?? clusterClient(cluster);
  const sa = cluster.tenancy?.serviceAccount;
  // enforceServers: workloads of MCPServers whose image no registry lists are withheld.
  return withImagePolicy(
    client,
    cluster.fieldManager,
    new ClusterApplier({
      client,
      ...(sa !== undefined ? { writer: impersonating(client, sa), namespaces: false } : {}),
      ...(cluster.waitTimeoutMs !== undefined ? { waitTimeoutMs: cluster.waitTimeoutMs } : {}),
      fieldManager: cluster.fieldManager,
      prune: cluster.prune,
      forceRecreate: cluster.forceRecreate,
      namespace: controllerNamespace(client, cluster.namespace),
      ...(hooks.onChange !== undefined ? { onChange: hooks.onChange } : {}),
      ...(hooks.stopping !== undefined ? { stopping: hooks.stopping } : {}),
      ...(hooks.mayWrite !== undefined ? { mayWrite: hooks.mayWrite } : {}),
      ...(hooks.backoff !== undefined ? { backoff: hooks.backoff } : {}),
    }),
    hooks.onImageRefused,
  );
}

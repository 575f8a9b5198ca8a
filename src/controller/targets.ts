// Where a sync's objects go, from `--target`: `dir:PATH` writes manifests (render-target.ts);
// `cluster` applies them to a Kubernetes API server with server-side apply (cluster-applier.ts).
// This is the one place that chooses an Applier.
import { McpfleetError } from "../errors.js";
import type { Applier } from "./applier.js";
import { ClusterApplier } from "./cluster-applier.js";
import type { ObjectChange } from "./applier.js";
import { KubeClient } from "./kube-client.js";
import { DirTarget } from "./render-target.js";

export type TargetSpec = { kind: "cluster" } | { kind: "dir"; path: string };

/** Settings the cluster target needs (server-side apply and its field manager). */
export interface ClusterTargetOptions {
  kubeconfig?: string;
  fieldManager: string;
  prune: boolean;
  forceRecreate: boolean;
  /** Namespace of the inventory and the leader Lease (default: $POD_NAMESPACE, else the context's). */
  namespace?: string;
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
    return KubeClient.fromFile(cluster.kubeconfig);
  } catch (err) {
    throw new McpfleetError(
      "ERR_USAGE",
      `cannot load the kubeconfig${cluster.kubeconfig !== undefined ? ` ${cluster.kubeconfig}` : ""}: ${(err as Error).message}`,
    );
  }
}

export function createApplier(
  spec: TargetSpec,
  cluster: ClusterTargetOptions,
  hooks: {
    onChange?: (c: ObjectChange) => void;
    stopping?: () => boolean;
    client?: KubeClient;
  } = {},
): Applier {
  if (spec.kind === "dir") return new DirTarget(spec.path);
  const client = hooks.client ?? clusterClient(cluster);
  return new ClusterApplier({
    client,
    fieldManager: cluster.fieldManager,
    prune: cluster.prune,
    forceRecreate: cluster.forceRecreate,
    namespace: controllerNamespace(client, cluster.namespace),
    ...(hooks.onChange !== undefined ? { onChange: hooks.onChange } : {}),
    ...(hooks.stopping !== undefined ? { stopping: hooks.stopping } : {}),
  });
}

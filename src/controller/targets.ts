// Where a sync's objects go, from `--target`: `dir:PATH` writes manifests (render-target.ts);
// `cluster` applies them to a Kubernetes API server with server-side apply, a target this build
// does not provide yet. This is the one place that chooses an Applier.
import { McpfleetError } from "../errors.js";
import type { Applier } from "./applier.js";
import { DirTarget } from "./render-target.js";

export type TargetSpec = { kind: "cluster" } | { kind: "dir"; path: string };

/** Settings the cluster target needs (server-side apply and its field manager). */
export interface ClusterTargetOptions {
  kubeconfig?: string;
  fieldManager: string;
  prune: boolean;
  forceRecreate: boolean;
}

export function parseTarget(text: string): TargetSpec {
  if (text === "cluster") return { kind: "cluster" };
  if (text.startsWith("dir:") && text.length > 4) return { kind: "dir", path: text.slice(4) };
  throw new McpfleetError("ERR_USAGE", `--target must be cluster or dir:PATH, not ${text}`);
}

export function createApplier(spec: TargetSpec, cluster: ClusterTargetOptions): Applier {
  if (spec.kind === "dir") return new DirTarget(spec.path);
  void cluster;
  throw new McpfleetError(
    "ERR_NOT_IMPLEMENTED",
    "--target cluster is not available yet: this build cannot apply to a Kubernetes API server; use --target dir:PATH to render manifests",
  );
}

// What the global setup hands to cluster tests (vitest's provide/inject), and the helpers those
// tests share to read it.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { findClusterBinaries } from "./binaries.js";

export type ClusterContext =
  | {
      /** The control plane this run started (test/support/cluster/control-plane.ts). */
      kind: "local";
      kubeconfig: string;
      binDir: string;
      caCert: string;
      servingCert: string;
      servingKey: string;
    }
  | { kind: "external"; kubeconfig: string }
  | { kind: "none"; reason: string };

declare module "vitest" {
  export interface ProvidedContext {
    cluster: ClusterContext;
  }
}

export function clusterContext(): ClusterContext {
  return inject("cluster");
}

/** The kubeconfig of the cluster under test, or undefined when the cluster tests skip. */
export function clusterKubeconfig(): string | undefined {
  const ctx = clusterContext();
  return ctx.kind === "none" ? undefined : ctx.kubeconfig;
}

/** True when the cluster tests of this file cannot run (the global setup said why, once). */
export function noCluster(): boolean {
  return clusterContext().kind === "none";
}

/** kubectl: the one built with the control plane, else the machine's. */
export function kubectlPath(): string {
  const ctx = clusterContext();
  if (ctx.kind === "local") return join(ctx.binDir, "kubectl");
  const bins = findClusterBinaries();
  if (!("missing" in bins)) return bins.path("kubectl");
  return existsSync("/usr/bin/kubectl") ? "/usr/bin/kubectl" : "kubectl";
}

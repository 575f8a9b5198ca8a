// Shared set-up of the cluster-target tests: an API server (the in-repo double, or a real
// cluster when MCPFLEET_E2E_KUBECONFIG is set: `make test-e2e KUBECONFIG=...`), a repository of
// the example resources and a reconciler applying it with the cluster target.
import { pathToFileURL } from "node:url";
import {
  ClusterApplier,
  type ClusterApplierOptions,
} from "../../src/controller/cluster-applier.js";
import { GitSource } from "../../src/controller/git-source.js";
import { KubeClient } from "../../src/controller/kube-client.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import { ControllerStatus } from "../../src/controller/status.js";
import { afterEach, beforeEach } from "vitest";
import { type KObject, type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { tmp } from "./helpers.js";

export const E2E_KUBECONFIG = process.env.MCPFLEET_E2E_KUBECONFIG;

/** The API double; tests that inspect requests or inject faults need it (skipped on a real cluster). */
export async function startApi(): Promise<KubeApi> {
  return startKubeApi();
}

/**
 * A fresh API double for each test of the calling file, stopped after it: `use` receives each
 * one (the file keeps it in a variable of its own).
 */
export function apiForEachTest(use: (api: KubeApi) => void): void {
  let current: KubeApi | undefined;
  beforeEach(async () => {
    current = await startApi();
    use(current);
  });
  afterEach(async () => {
    await current?.stop();
  });
}

/** The object of `kind` named `name` in `namespace`, as the API holds it. */
export function namedObject(
  api: KubeApi,
  kind: string,
  name: string,
  namespace = "default",
): KObject | undefined {
  return api.objects({ kind, namespace }).find((o) => o.metadata?.name === name);
}

export interface Harness {
  client: KubeClient;
  applier: ClusterApplier;
  status: ControllerStatus;
  reconciler: Reconciler;
  source: GitSource;
}

export function harness(
  kubeconfig: string,
  repoUrl: string,
  opts: Partial<ClusterApplierOptions> & {
    driftIntervalMs?: number;
    now?: () => number;
    path?: string;
  } = {},
): Harness {
  const client = KubeClient.fromFile(kubeconfig);
  const source = new GitSource({
    url: repoUrl.startsWith("/") ? pathToFileURL(repoUrl).href : repoUrl,
    ref: { branch: "main" },
    path: opts.path ?? "fleet",
    cacheDir: tmp("cache"),
  });
  const applier = new ClusterApplier({
    client,
    fieldManager: "mcpfleet",
    prune: true,
    forceRecreate: false,
    namespace: "mcpfleet-system",
    backoff: { baseMs: 5, capMs: 50 },
    ...opts,
  });
  const status = new ControllerStatus(source.refName, applier.target);
  const reconciler = new Reconciler({
    source,
    applier,
    status,
    ...(opts.driftIntervalMs !== undefined ? { driftIntervalMs: opts.driftIntervalMs } : {}),
    ...(opts.now !== undefined ? { now: opts.now } : {}),
  });
  return { client, applier, status, reconciler, source };
}

/** Write requests the double received (apply, create, update, patch, delete). */
export function writes(api: KubeApi): number {
  return api.requests.filter((r) => r.method !== "GET").length;
}

/**
 * Controller arguments for the `fleet` folder of `repo`'s main branch, applied with pruning to
 * the cluster of `kubeconfig`: what the process tests share before their own options.
 */
export function clusterControllerArgs(repo: string, kubeconfig: string): string[] {
  return [
    "--repo",
    repo,
    "--branch",
    "main",
    "--path",
    "fleet",
    "--target",
    "cluster",
    "--kubeconfig",
    kubeconfig,
    "--prune",
  ];
}

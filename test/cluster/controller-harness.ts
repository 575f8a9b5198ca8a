// The controller's cluster target against the real API server: a namespace per test (resources,
// workloads, inventory and Lease all live in it, so tests of several files share one server),
// a reconciler built as `mcpfleet controller` builds it, and lookups of live objects.
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { afterAll } from "vitest";
import {
  ClusterApplier,
  type ClusterApplierOptions,
} from "../../src/controller/cluster-applier.js";
import type { AdmissionCheck } from "../../src/controller/admission.js";
import { parseControllerArgs, runController } from "../../src/cli/controller.js";
import { GitSource } from "../../src/infra/git/source.js";
import { InventoryStore, type InventoryEntry } from "../../src/controller/inventory.js";
import { KubeClient, type LiveObject } from "../../src/infra/kube/client.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import { ControllerStatus } from "../../src/controller/status.js";
import { tmp } from "../controller/helpers.js";

import { until } from "./helpers.js";

export { until };

export const GROUP_VERSION = "toolhive.stacklok.dev/v1alpha1";

const API_VERSIONS: Record<string, string> = {
  Deployment: "apps/v1",
  StatefulSet: "apps/v1",
  ReplicaSet: "apps/v1",
  Role: "rbac.authorization.k8s.io/v1",
  RoleBinding: "rbac.authorization.k8s.io/v1",
  Lease: "coordination.k8s.io/v1",
  Pod: "v1",
  Service: "v1",
  ServiceAccount: "v1",
  ConfigMap: "v1",
  Secret: "v1",
  Event: "v1",
  Namespace: "v1",
};

export const apiVersionOf = (kind: string): string => API_VERSIONS[kind] ?? GROUP_VERSION;

const namespaces: { client: KubeClient; name: string }[] = [];
afterAll(async () => {
  for (const { client, name } of namespaces.splice(0)) {
    await client.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    client.close();
  }
});

/**
 * A fresh namespace name for one test; the controller creates it (with its inventory) and it is
 * deleted when the file is done.
 */
export function testNamespace(kubeconfig: string, prefix = "e2e"): string {
  const name = `${prefix}-${randomBytes(4).toString("hex")}`;
  namespaces.push({ client: KubeClient.fromFile(kubeconfig), name });
  return name;
}

export interface Harness {
  client: KubeClient;
  applier: ClusterApplier;
  status: ControllerStatus;
  reconciler: Reconciler;
  source: GitSource;
  ns: string;
  /** The live object of `kind` named `name` in the test's namespace. */
  get(kind: string, name: string): Promise<LiveObject | undefined>;
  list(kind: string): Promise<LiveObject[]>;
  inventory(): Promise<Map<string, InventoryEntry>>;
  close(): void;
}

export function harness(
  kubeconfig: string,
  repoDir: string,
  ns: string,
  opts: Partial<ClusterApplierOptions> & {
    driftIntervalMs?: number;
    now?: () => number;
    requestTimeoutMs?: number;
    /** Admission checks of the revision plan (the reconciler's, whatever the target). */
    admission?: readonly AdmissionCheck[];
  } = {},
): Harness {
  const client = KubeClient.fromFile(kubeconfig, {
    ...(opts.requestTimeoutMs !== undefined ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
  });
  const source = new GitSource({
    url: pathToFileURL(repoDir).href,
    ref: { branch: "main" },
    path: "fleet",
    cacheDir: tmp("cache"),
  });
  const applier = new ClusterApplier({
    client,
    fieldManager: "mcpfleet",
    prune: true,
    forceRecreate: false,
    namespace: ns,
    backoff: { baseMs: 5, capMs: 50 },
    ...opts,
  });
  const status = new ControllerStatus(source.refName, applier.target);
  const reconciler = new Reconciler({
    source,
    applier,
    status,
    namespace: ns,
    ...(opts.driftIntervalMs !== undefined ? { driftIntervalMs: opts.driftIntervalMs } : {}),
    ...(opts.now !== undefined ? { now: opts.now } : {}),
    ...(opts.admission !== undefined ? { admission: opts.admission } : {}),
  });
  const ref = (kind: string, name: string) => ({
    apiVersion: apiVersionOf(kind),
    kind,
    metadata: { name, namespace: ns },
  });
  return {
    client,
    applier,
    status,
    reconciler,
    source,
    ns,
    get: (kind, name) => client.get(ref(kind, name)),
    list: (kind) => client.list(apiVersionOf(kind), kind, { namespace: ns }),
    async inventory() {
      const inv = new InventoryStore(client, {
        name: "mcpfleet-inventory",
        namespace: ns,
        fieldManager: "mcpfleet",
      });
      return (await inv.read())?.entries ?? new Map();
    },
    close: () => client.close(),
  };
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

/**
 * `mcpfleet controller --once` for the `fleet` folder of `repo`'s main branch (a local path), as a
 * CronJob runs it: a new controller each time, resources and inventory in `ns`. Returns the exit
 * code and every line it printed.
 */
export async function controllerOnce(
  repo: string,
  kubeconfig: string,
  ns: string,
  cacheDir: string,
): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const args = ["--once", "--repo", pathToFileURL(repo).href, "--branch", "main"];
  args.push("--path", "fleet", "--kubeconfig", kubeconfig, "-n", ns);
  args.push("--controller-namespace", ns, "--cache-dir", cacheDir);
  const code = await runController(parseControllerArgs(args)!, {
    stdout: (l) => lines.push(l),
    stderr: (l) => lines.push(l),
  });
  return { code, lines };
}

/**
 * Plays the kubelet this control plane lacks: waits for the Deployment controller to create the
 * pod whose name starts with `prefix`, reports it Ready, and waits until the Deployment counts
 * it. What stands behind the report is the test's to show (a pod it really runs, or none).
 */
export async function reportPodReady(h: Harness, deployment: string): Promise<void> {
  const pod = await until(`the Deployment controller created ${deployment}'s pod`, async () =>
    (await h.list("Pod")).find((p) => p.metadata.name.startsWith(`${deployment}-`)),
  );
  const now = new Date().toISOString();
  await h.client.mergePatch(
    { apiVersion: "v1", kind: "Pod", metadata: { name: pod.metadata.name, namespace: h.ns } },
    {
      status: {
        phase: "Running",
        conditions: [
          { type: "Ready", status: "True", lastTransitionTime: now },
          { type: "ContainersReady", status: "True", lastTransitionTime: now },
        ],
      },
    },
    { subresource: "status", fieldManager: "kubelet-stand-in" },
  );
  await until(`${deployment} reports a ready replica`, async () => {
    const d = await h.get("Deployment", deployment);
    return ((d?.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0) >= 1;
  });
}

// The install bundle (`dist/install/`): our CRDs and the controller's Namespace, ServiceAccount,
// least-privilege RBAC and Deployment, so that `kubectl apply -f dist/install/` installs mcpfleet.
import { restrictedContainer, restrictedPod } from "./security.js";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { installedFiles } from "../assets.js";
import { projectVersion } from "../project.js";
import { API_GROUP } from "../schema/kinds.js";
import type { KubeObject } from "./model.js";
import { MCPFLEET_IMAGE_REPOSITORY } from "./options.js";
import { sortObjects } from "./render.js";
import { VMCP_READS } from "./constructs/vmcp/names.js";

export const INSTALL_NAMESPACE = "mcpfleet-system";
export const CONTROLLER_NAME = "mcpfleet-controller";
export const CONTROLLER_PORT = 8080;

export interface InstallOptions {
  /** Controller image; default `ghcr.io/mcpfleet/mcpfleet:<package version>`. */
  image?: string;
  /** Namespace of the controller; default `mcpfleet-system`. */
  namespace?: string;
  /** Replicas of the controller (leader election keeps one active); default 1. */
  replicas?: number;
  /**
   * Git repository the controller follows. Absent: read from key `repo` of the ConfigMap
   * `mcpfleet-controller` in the controller's namespace, which the user creates.
   */
  repo?: string;
  /** Branch to follow; absent means the remote's HEAD. */
  branch?: string;
  /** Directory of the repository holding the resources; absent means the whole repository. */
  path?: string;
  /** Secret (key `token`) holding an access token for the repository, mounted as a file. */
  tokenSecret?: string;
  /**
   * Secret holding an SSH deploy key (key `identity`) and the server's host keys (key
   * `known_hosts`), the layout `flux create secret git` writes, for ssh:// and user@host:path.
   */
  sshSecret?: string;
  /**
   * ServiceAccount the controller writes the revision as (impersonation); the bundle grants the
   * controller `impersonate` on that one account, in its namespace, and nothing more.
   */
  serviceAccount?: { namespace: string; name: string };
  /** Further controller flags (`--interval=5m`, `--webhook-secret-file=...`, ...). */
  extraArgs?: string[];
}

/** ConfigMap the controller reads its repository from when the bundle does not name one. */
export const CONTROLLER_CONFIGMAP = CONTROLLER_NAME;
const CACHE_DIR = "/var/lib/mcpfleet";
const TOKEN_DIR = "/etc/mcpfleet/git";
const SSH_DIR = "/etc/mcpfleet/git-ssh";

/** The controller's command line: follow the repository, apply to this cluster, prune. */
export function controllerArgs(options: InstallOptions = {}): string[] {
  return [
    "controller",
    `--repo=${options.repo ?? "$(MCPFLEET_REPO)"}`,
    ...(options.branch !== undefined ? [`--branch=${options.branch}`] : []),
    ...(options.path !== undefined ? [`--path=${options.path}`] : []),
    ...(options.tokenSecret !== undefined ? [`--token-file=${TOKEN_DIR}/token`] : []),
    ...(options.sshSecret !== undefined
      ? [`--ssh-key-file=${SSH_DIR}/identity`, `--known-hosts-file=${SSH_DIR}/known_hosts`]
      : []),
    "--target=cluster",
    "--prune",
    `--cache-dir=${CACHE_DIR}`,
    `--listen=:${CONTROLLER_PORT}`,
    ...(options.serviceAccount !== undefined
      ? [`--service-account=${options.serviceAccount.namespace}/${options.serviceAccount.name}`]
      : []),
    ...(options.extraArgs ?? []),
  ];
}

/** The controller image of this release. */
export function defaultControllerImage(): string {
  return `${MCPFLEET_IMAGE_REPOSITORY}:${projectVersion()}`;
}

const crdCache = new Map<string, KubeObject[]>();

/** The generated CRDs (crds/*.yaml), sorted by file name. Parsed once per directory. */
export function crdObjects(dir?: string): KubeObject[] {
  let crds = crdCache.get(dir ?? "");
  if (crds === undefined) {
    crds =
      dir === undefined
        ? installedFiles("crds", ".yaml")
            .filter((f) => !f.path.includes("/"))
            .map((f) => parse(f.text) as KubeObject)
        : readdirSync(dir)
            .filter((f) => f.endsWith(".yaml"))
            .sort()
            .map((f) => parse(readFileSync(join(dir, f), "utf8")) as KubeObject);
    crdCache.set(dir ?? "", crds);
  }
  return structuredClone(crds);
}

/** Plural resource names of our kinds, from the CRDs. */
function ownPlurals(crds: KubeObject[]): string[] {
  return crds
    .map((c) => (c.spec as { names?: { plural?: string } } | undefined)?.names?.plural)
    .filter((p): p is string => p !== undefined)
    .sort();
}

const WRITE = ["get", "list", "watch", "create", "update", "patch", "delete"];
const READ = ["get", "list", "watch"];
/**
 * What server-side apply and prune need: apply is a patch that creates what is missing, the drift
 * check lists what was applied a kind at a time, prune reads an object's marker before deleting
 * it. The controller never watches or replaces what it applies (a real API server showed those
 * permissions unused).
 */
const APPLY = ["get", "list", "create", "patch", "delete"];

/**
 * What the controller may do, cluster-wide: apply and prune our kinds and the workload objects
 * synth renders, patch status of our kinds, list the workloads status is computed from, and its
 * Lease, inventory and Events. Kubernetes refuses to let anyone grant permissions they lack, so
 * it also holds what the Roles it renders grant (workloads reading our kinds, the proxy runner
 * managing StatefulSets and Services, pods, logs, attach). Secrets: the virtual
 * servers' HMAC secrets (created once) and what the remote proxy's Role may read.
 */
export function controllerRules(crds: KubeObject[]): {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}[] {
  const plurals = ownPlurals(crds);
  // What the virtual servers' Roles let them read (a superset of the registry API's).
  const readByWorkloads = VMCP_READS.filter((p) => plurals.includes(p));
  return [
    { apiGroups: [API_GROUP], resources: plurals, verbs: APPLY },
    { apiGroups: [API_GROUP], resources: readByWorkloads, verbs: ["list", "watch"] },
    { apiGroups: [API_GROUP], resources: plurals.map((p) => `${p}/status`), verbs: ["patch"] },
    {
      apiGroups: [API_GROUP],
      resources: ["virtualmcpservers/status"],
      verbs: ["get", "update"],
    },
    {
      apiGroups: ["apiextensions.k8s.io"],
      resources: ["customresourcedefinitions"],
      verbs: ["get", "create", "patch"],
    },
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "create", "patch"] },
    { apiGroups: [""], resources: ["configmaps"], verbs: [...APPLY, "watch"] },
    // Only the HMAC secrets, created once and never changed or pruned.
    { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "list", "watch"] },
    { apiGroups: [""], resources: ["serviceaccounts"], verbs: APPLY },
    { apiGroups: [""], resources: ["services"], verbs: WRITE },
    { apiGroups: ["apps"], resources: ["deployments"], verbs: APPLY },
    { apiGroups: ["apps"], resources: ["statefulsets"], verbs: WRITE },
    {
      apiGroups: ["rbac.authorization.k8s.io"],
      resources: ["roles", "rolebindings"],
      verbs: APPLY,
    },
    { apiGroups: [""], resources: ["pods"], verbs: READ },
    { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
    { apiGroups: [""], resources: ["pods/attach"], verbs: ["create", "get"] },
    // Its own leader-election Lease.
    {
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      verbs: ["get", "create", "update"],
    },
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  ];
}

/**
 * A Role and RoleBinding in the tenant's namespace letting the controller act as that one
 * ServiceAccount. The namespace is the platform's to create, as in Flux's multi-tenancy.
 */
function impersonationGrant(
  account: InstallOptions["serviceAccount"],
  clusterName: string,
  namespace: string,
  labels: Record<string, string>,
): KubeObject[] {
  if (account === undefined) return [];
  const metadata = { name: `${clusterName}-impersonate`, namespace: account.namespace, labels };
  return [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata,
      rules: [
        {
          apiGroups: [""],
          resources: ["serviceaccounts"],
          verbs: ["impersonate"],
          resourceNames: [account.name],
        },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: metadata.name },
      subjects: [{ kind: "ServiceAccount", name: CONTROLLER_NAME, namespace }],
    },
  ];
}

/** The controller's environment: the repository from its ConfigMap when the bundle names none. */
function controllerEnv(options: InstallOptions): Record<string, unknown>[] {
  return [
    ...(options.repo === undefined
      ? [
          {
            name: "MCPFLEET_REPO",
            valueFrom: { configMapKeyRef: { name: CONTROLLER_CONFIGMAP, key: "repo" } },
          },
        ]
      : []),
    {
      name: "POD_NAMESPACE",
      valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
    },
    {
      name: "POD_NAME",
      valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } },
    },
  ];
}

/** The controller's container: its work directory and /tmp writable, git credentials read-only. */
function controllerContainer(options: InstallOptions, image: string): Record<string, unknown> {
  return {
    name: "controller",
    image,
    args: controllerArgs(options),
    env: controllerEnv(options),
    ports: [{ name: "http", containerPort: CONTROLLER_PORT, protocol: "TCP" }],
    livenessProbe: {
      httpGet: { path: "/healthz", port: "http" },
      initialDelaySeconds: 10,
      periodSeconds: 20,
    },
    readinessProbe: {
      httpGet: { path: "/readyz", port: "http" },
      initialDelaySeconds: 5,
      periodSeconds: 10,
    },
    resources: {
      requests: { cpu: "100m", memory: "256Mi" },
      limits: { memory: "1Gi" },
    },
    securityContext: restrictedContainer(),
    volumeMounts: [
      { name: "work", mountPath: CACHE_DIR },
      { name: "tmp", mountPath: "/tmp" },
      ...(options.tokenSecret !== undefined
        ? [{ name: "git-token", mountPath: TOKEN_DIR, readOnly: true }]
        : []),
      ...(options.sshSecret !== undefined
        ? [{ name: "git-ssh", mountPath: SSH_DIR, readOnly: true }]
        : []),
    ],
  };
}

/** The volumes behind the container's mounts; the git credentials come from the named Secrets. */
function controllerVolumes(options: InstallOptions): Record<string, unknown>[] {
  return [
    { name: "work", emptyDir: {} },
    { name: "tmp", emptyDir: {} },
    ...(options.tokenSecret !== undefined
      ? [
          {
            name: "git-token",
            secret: { secretName: options.tokenSecret, items: [{ key: "token", path: "token" }] },
          },
        ]
      : []),
    ...(options.sshSecret !== undefined
      ? [
          {
            name: "git-ssh",
            secret: {
              secretName: options.sshSecret,
              items: [
                { key: "identity", path: "identity" },
                { key: "known_hosts", path: "known_hosts" },
              ],
            },
          },
        ]
      : []),
  ];
}

/** Labels of every object of the bundle (a new object each call: callers may add to them). */
function controllerLabels(): Record<string, string> {
  return {
    "app.kubernetes.io/name": "mcpfleet",
    "app.kubernetes.io/component": "controller",
    "app.kubernetes.io/instance": CONTROLLER_NAME,
    "app.kubernetes.io/managed-by": "mcpfleet",
  };
}

/** The controller's Service and Deployment in `namespace`. */
function controllerWorkload(
  options: InstallOptions,
  namespace: string,
  labels: Record<string, string>,
): KubeObject[] {
  const selector = {
    "app.kubernetes.io/name": "mcpfleet",
    "app.kubernetes.io/component": "controller",
  };
  const image = options.image ?? defaultControllerImage();
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: CONTROLLER_NAME, namespace, labels },
      spec: {
        selector: selector,
        ports: [{ name: "http", port: CONTROLLER_PORT, targetPort: "http", protocol: "TCP" }],
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: CONTROLLER_NAME, namespace, labels },
      spec: {
        replicas: options.replicas ?? 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: CONTROLLER_NAME,
            securityContext: restrictedPod({ runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 }),
            containers: [controllerContainer(options, image)],
            volumes: controllerVolumes(options),
          },
        },
      },
    },
  ];
}

/** Every object of the install bundle, in apply order (Namespace and CRDs first). */
export function installObjects(options: InstallOptions = {}): KubeObject[] {
  const namespace = options.namespace ?? INSTALL_NAMESPACE;
  // Cluster-scoped names carry the namespace when it is not the default, so that two
  // controllers (two teams, two paths of one repository) can share a cluster.
  const clusterName =
    namespace === INSTALL_NAMESPACE ? CONTROLLER_NAME : `${CONTROLLER_NAME}-${namespace}`;
  const crds = crdObjects();
  const labels = controllerLabels();
  const objects: KubeObject[] = [
    ...crds,
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels } },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: CONTROLLER_NAME, namespace, labels },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: clusterName, labels },
      rules: controllerRules(crds),
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: clusterName, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterName },
      subjects: [{ kind: "ServiceAccount", name: CONTROLLER_NAME, namespace }],
    },
    ...impersonationGrant(options.serviceAccount, clusterName, namespace, labels),
    ...controllerWorkload(options, namespace, labels),
  ];
  return sortObjects(objects);
}

/**
 * The bundle as files of `dist/install/`: `kubectl apply -f` reads a directory in file-name
 * order, so the CRDs come first and the controller (with its Namespace first) after them.
 */
export function installFiles(options: InstallOptions = {}): Map<string, KubeObject[]> {
  const objects = installObjects(options);
  return new Map([
    ["00-crds.yaml", objects.filter((o) => o.kind === "CustomResourceDefinition")],
    ["01-controller.yaml", objects.filter((o) => o.kind !== "CustomResourceDefinition")],
  ]);
}

// The part MCPServer and MCPRemoteProxy render alike: the run-config ConfigMap, the proxy
// runner's pod (checksum of the run-config on it, so a config change rolls the pods), resource
// overrides, and the Deployment and Service around it.
import type { Construct } from "constructs";
import type * as T from "../../../generated/types.js";
import type { SynthContext } from "../context.js";
import { contentHash, prettyJson } from "../hash.js";
import type { Resource } from "../model.js";
import { configMapLabels, selectorLabels, workloadLabels } from "../labels.js";
import {
  type Container,
  type EnvVar,
  type PodTemplate,
  type Probe,
  applyResourceOverrides,
  compact,
} from "../pod.js";
import type { PodExtras } from "../pod-extras.js";
import { DEFAULT_PROXY_PORT, RUNCONFIG_CHECKSUM, RUNCONFIG_DIR, RUNCONFIG_KEY } from "../runner.js";
import { restrictedContainer, restrictedPod } from "../security.js";
import { emit } from "./common.js";

/** The proxy runner's container in the pods of MCPServer and MCPRemoteProxy. */
export const RUNNER_CONTAINER = "toolhive";

type Metadata = { labels?: Record<string, string>; annotations?: Record<string, string> };

/** The reference operator's annotation of a rendered config file's checksum on its ConfigMap. */
export const CONTENT_CHECKSUM = "toolhive.stacklok.dev/content-checksum";

/**
 * The runner's environment: its home and configuration directory on the only writable path the
 * read-only root file system leaves (/tmp), the Kubernetes runtime, JSON logs, and secrets read
 * from `TOOLHIVE_SECRET_<name>` variables (the run-config names `<name>,target=<field>`).
 */
export function runnerEnv(extras: PodExtras): EnvVar[] {
  return [
    { name: "XDG_CONFIG_HOME", value: "/tmp" },
    { name: "HOME", value: "/tmp" },
    { name: "TOOLHIVE_RUNTIME", value: "kubernetes" },
    { name: "UNSTRUCTURED_LOGS", value: "false" },
    ...(extras.env.some((e) => e.name.startsWith("TOOLHIVE_SECRET_"))
      ? [{ name: "TOOLHIVE_SECRETS_PROVIDER", value: "environment" }]
      : []),
    ...extras.env,
  ];
}

/**
 * Probes of the runner's `/health`: a start-up probe gives it 90 s to create the MCP server's
 * workload before liveness counts; `readyDelay` is the reference's (5 s for an MCPServer, 15 s
 * for a remote proxy, which first reaches the remote server).
 */
export function runnerProbes(
  readyDelay: number,
): Pick<Container, "startupProbe" | "livenessProbe" | "readinessProbe"> {
  const get = { httpGet: { path: "/health", port: "http" } };
  const probe = (p: Omit<Probe, "httpGet">): Probe => ({ ...get, ...p });
  return {
    startupProbe: probe({ periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 18 }),
    livenessProbe: probe({
      initialDelaySeconds: 30,
      periodSeconds: 10,
      timeoutSeconds: 5,
      failureThreshold: 3,
    }),
    readinessProbe: probe({
      initialDelaySeconds: readyDelay,
      periodSeconds: 5,
      timeoutSeconds: 3,
      failureThreshold: 3,
    }),
  };
}

/**
 * Why a runner workload renders nothing: OIDC settings kept in a ConfigMap cannot be read at
 * synthesis, and the runner has no file path for them; rather than a server without the client
 * authentication asked for, none (docs/synth.md, "The run-config").
 */
export function runnerNotRendered(r: Resource<"MCPServer" | "MCPRemoteProxy">): string | undefined {
  return r.spec.oidcConfig?.type === "configMap"
    ? "oidcConfig of type configMap cannot be rendered into the run-config; use oidcConfigRef"
    : undefined;
}

/** Reports that a runner workload renders nothing, and why, when it does not; true then. */
export function refuseUnrenderable(
  r: Resource<"MCPServer" | "MCPRemoteProxy">,
  context: SynthContext,
): boolean {
  const why = runnerNotRendered(r);
  if (why === undefined) return false;
  context.issues.for(r).error("SYNTH_NOT_RENDERED", `renders nothing: ${why}`, "/spec/oidcConfig");
  return true;
}

export interface RunnerWorkload {
  /** The `app` label of the kind: the workload's labels and selector are made from it. */
  app: string;
  names: { deployment: string; service: string; runconfig: string };
  /** The reference operator's run-config ConfigMap owner label: `mcp-server`, `mcp-remote-proxy`. */
  ownerKey: string;
  /** The run-config, written sorted and indented to the ConfigMap. */
  config: Record<string, unknown>;
  extras: PodExtras;
  /** The runner container's image, arguments and resources. */
  image: string;
  args: string[];
  resources: Container["resources"];
  /** Seconds before the first readiness probe (see runnerProbes). */
  readyDelay: number;
  serviceAccountName: string;
  /** Omitted when unset, so that an autoscaler owns the replica count. */
  replicas?: number;
}

/** Image pull secrets named in resourceOverrides.proxyDeployment, for the runner's account. */
export function proxyPullSecrets(overrides: T.ResourceOverrides | undefined): { name: string }[] {
  return (overrides?.proxyDeployment?.imagePullSecrets ?? [])
    .filter((s): s is { name: string } => s.name !== undefined)
    .map((s) => ({ name: s.name }));
}

/** The runner container: its run-config mounted read-only beside the pod's extra mounts. */
function runnerContainer(w: RunnerWorkload, proxyPort: number): Container {
  return {
    ...compact<Container>({
      name: RUNNER_CONTAINER,
      image: w.image,
      imagePullPolicy: "IfNotPresent",
      args: w.args,
      ports: [{ name: "http", containerPort: proxyPort, protocol: "TCP" }],
      env: runnerEnv(w.extras),
      resources: w.resources,
      ...runnerProbes(w.readyDelay),
    }),
    securityContext: restrictedContainer({ privileged: false }),
    volumeMounts: [
      { name: "runconfig", mountPath: RUNCONFIG_DIR, readOnly: true },
      ...w.extras.mounts,
    ],
  };
}

/** The runner's pod template, annotated with the run-config's hash so a change rolls the pods. */
function runnerPodTemplate(
  w: RunnerWorkload,
  labels: Record<string, string>,
  runconfig: string,
  runner: Container,
): PodTemplate {
  return {
    metadata: {
      labels: { ...labels },
      annotations: { [RUNCONFIG_CHECKSUM]: contentHash(runconfig) },
    },
    spec: {
      serviceAccountName: w.serviceAccountName,
      terminationGracePeriodSeconds: 30,
      securityContext: restrictedPod(),
      containers: [runner],
      volumes: [
        { name: "runconfig", configMap: { name: w.names.runconfig } },
        ...(w.extras.volumes as never[]),
      ],
    },
  };
}

export function emitRunnerWorkload(
  scope: Construct,
  r: Resource<"MCPServer" | "MCPRemoteProxy">,
  w: RunnerWorkload,
): void {
  const labels = workloadLabels(w.app, r.metadata.name);
  const selector = selectorLabels(w.app, r.metadata.name);
  const proxyPort = r.spec.proxyPort ?? DEFAULT_PROXY_PORT;
  const runconfig = prettyJson(w.config);
  emit(scope, r, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: w.names.runconfig,
      labels: { ...labels, ...configMapLabels("run-config", w.ownerKey, r.metadata.name) },
      annotations: { [CONTENT_CHECKSUM]: contentHash(runconfig) },
    },
    data: { [RUNCONFIG_KEY]: runconfig },
  });
  const template = runnerPodTemplate(w, labels, runconfig, runnerContainer(w, proxyPort));
  const deploymentMeta: Metadata = { labels: { ...labels } };
  const serviceMeta: Metadata = { labels: { ...labels } };
  applyResourceOverrides(
    {
      deployment: deploymentMeta,
      podTemplate: template,
      service: serviceMeta,
      proxyContainer: RUNNER_CONTAINER,
    },
    r.spec.resourceOverrides,
  );
  emit(scope, r, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: w.names.deployment, ...deploymentMeta },
    spec: compact({ replicas: w.replicas, selector: { matchLabels: selector }, template }),
  });
  emit(scope, r, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: w.names.service, ...serviceMeta },
    spec: {
      type: "ClusterIP",
      selector: selector,
      ports: [{ name: "http", port: proxyPort, targetPort: proxyPort, protocol: "TCP" }],
      sessionAffinity: r.spec.sessionAffinity ?? "ClientIP",
    },
  });
}

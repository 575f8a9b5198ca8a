// The part MCPServer and MCPRemoteProxy render alike: the run-config ConfigMap, the proxy
// runner's pod (checksum of the run-config on it, so a config change rolls the pods), resource
// overrides, and the Deployment and Service around it.
import type { Construct } from "constructs";
import type * as T from "../../../generated/types.js";
import { contentHash } from "../hash.js";
import type { Resource } from "../model.js";
import { type Container, type PodTemplate, applyResourceOverrides, compact } from "../pod.js";
import { type PodExtras, RUNCONFIG_CHECKSUM, RUNCONFIG_DIR, RUNCONFIG_KEY } from "../runner.js";
import { emit } from "./common.js";
import { RUNNER_CONTAINER } from "./mcpserver.js";

type Metadata = { labels?: Record<string, string>; annotations?: Record<string, string> };

export interface RunnerWorkload {
  names: { deployment: string; service: string; runconfig: string };
  labels: Record<string, string>;
  selector: Record<string, string>;
  /** The runner container without its run-config mount, which is added here. */
  runner: Container;
  /** The run-config as written to the ConfigMap. */
  runconfig: string;
  extras: PodExtras;
  serviceAccountName: string;
  proxyPort: number;
  sessionAffinity: string | undefined;
  resourceOverrides: T.ResourceOverrides | undefined;
  /** Omitted when unset, so that an autoscaler owns the replica count. */
  replicas?: number;
}

/** Image pull secrets named in resourceOverrides.proxyDeployment, for the runner's account. */
export function proxyPullSecrets(overrides: T.ResourceOverrides | undefined): { name: string }[] {
  return (overrides?.proxyDeployment?.imagePullSecrets ?? [])
    .filter((s): s is { name: string } => s.name !== undefined)
    .map((s) => ({ name: s.name }));
}

export function emitRunnerWorkload(scope: Construct, r: Resource, w: RunnerWorkload): void {
  emit(scope, r, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: w.names.runconfig, labels: w.labels },
    data: { [RUNCONFIG_KEY]: w.runconfig },
  });
  const runner: Container = {
    ...w.runner,
    volumeMounts: [
      { name: "runconfig", mountPath: RUNCONFIG_DIR, readOnly: true },
      ...w.extras.mounts,
    ],
  };
  const template: PodTemplate = {
    metadata: {
      labels: { ...w.labels },
      annotations: { [RUNCONFIG_CHECKSUM]: contentHash(w.runconfig) },
    },
    spec: {
      serviceAccountName: w.serviceAccountName,
      containers: [runner],
      volumes: [
        { name: "runconfig", configMap: { name: w.names.runconfig } },
        ...(w.extras.volumes as never[]),
      ],
    },
  };
  const deploymentMeta: Metadata = { labels: { ...w.labels } };
  const serviceMeta: Metadata = { labels: { ...w.labels } };
  applyResourceOverrides(
    {
      deployment: deploymentMeta,
      podTemplate: template,
      service: serviceMeta,
      proxyContainer: RUNNER_CONTAINER,
    },
    w.resourceOverrides,
  );
  emit(scope, r, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: w.names.deployment, ...deploymentMeta },
    spec: compact({ replicas: w.replicas, selector: { matchLabels: w.selector }, template }),
  });
  emit(scope, r, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: w.names.service, ...serviceMeta },
    spec: {
      type: "ClusterIP",
      selector: w.selector,
      ports: [{ name: "http", port: w.proxyPort, targetPort: "http", protocol: "TCP" }],
      sessionAffinity: w.sessionAffinity ?? "ClientIP",
    },
  });
}

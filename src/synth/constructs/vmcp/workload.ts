// VirtualMCPServer: ConfigMap `<n>-vmcp-config`, Deployment `<n>` (container `vmcp`), Service
// `vmcp-<n>`, ServiceAccount (unless one is named), Role and RoleBinding `<n>-vmcp`. The HMAC
// Secret `<n>-hmac-secret` is referenced, never rendered (docs/synth-workloads.md).
import type { Construct } from "constructs";
import { API_GROUP } from "../../../schema/kinds.js";
import { type KindRenderer, resolvedKey } from "../../context.js";
import { contentHash } from "../../hash.js";
import { configMapLabels, selectorLabels, workloadLabels } from "../../labels.js";
import type { Resource } from "../../model.js";
import {
  applyResourceOverrides,
  type Container,
  mergePodTemplate,
  type PodTemplate,
} from "../../pod.js";
import { RUNCONFIG_CHECKSUM } from "../../runner.js";
import { restrictedContainer, restrictedPod } from "../../security.js";
import { emit, emitRbac, READ_VERBS } from "../common.js";
import { CONTENT_CHECKSUM } from "../runner-workload.js";
import { resolveVmcpMembers } from "./backends.js";
import { buildVmcpConfig, type VmcpBuild, vmcpConfigYaml } from "./config.js";
import {
  CONFIG_CHECKSUM_ANNOTATION,
  VMCP_CONFIG_DIR,
  VMCP_CONTAINER,
  VMCP_ENV_PREFIX,
  VMCP_HMAC_SECRET_KEY,
  VMCP_PORT,
  VMCP_READS,
  vmcpConfigMapName,
  vmcpDeploymentName,
  vmcpHmacSecretName,
  vmcpRbacName,
  vmcpServiceName,
} from "./names.js";
import type { ContainerEnv } from "./secret-env.js";

/** The reference operator's default resources of the vmcp container. */
const VMCP_RESOURCES: NonNullable<Container["resources"]> = {
  requests: { cpu: "100m", memory: "128Mi" },
  limits: { cpu: "500m", memory: "512Mi" },
};
const APP = "virtualmcpserver";

type Volume = NonNullable<NonNullable<PodTemplate["spec"]>["volumes"]>[number];
type Metadata = { labels?: Record<string, string>; annotations?: Record<string, string> };

/** The ServiceAccount the pods run as: the one named in the spec, else `<n>-vmcp`. */
function serviceAccountOf(resource: Resource<"VirtualMCPServer">): string {
  const named = resource.spec.serviceAccount;
  return named !== undefined && named !== "" ? named : vmcpRbacName(resource.metadata.name);
}

/** Reads our kinds (it discovers its backends), writes its own status, records Events. */
function emitVmcpRbac(
  scope: Construct,
  resource: Resource<"VirtualMCPServer">,
  labels: Record<string, string>,
): void {
  const rbacName = vmcpRbacName(resource.metadata.name);
  const serviceAccount = serviceAccountOf(resource);
  const pullSecrets = (resource.spec.resourceOverrides?.proxyDeployment?.imagePullSecrets ?? [])
    .filter((s): s is { name: string } => s.name !== undefined)
    .map((s) => ({ name: s.name }));
  emitRbac(
    scope,
    resource,
    rbacName,
    labels,
    [
      { apiGroups: [API_GROUP], resources: [...VMCP_READS], verbs: READ_VERBS },
      {
        apiGroups: [API_GROUP],
        resources: ["virtualmcpservers/status"],
        verbs: ["get", "update", "patch"],
      },
      { apiGroups: [""], resources: ["services", "configmaps"], verbs: READ_VERBS },
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    ],
    {
      ...(serviceAccount !== rbacName ? { serviceAccount } : {}),
      ...(pullSecrets.length > 0 ? { imagePullSecrets: pullSecrets } : {}),
    },
  );
}

/**
 * The config volume: a plain ConfigMap volume, as the reference operator mounts it, unless CA
 * bundles must sit beside config.yaml (a ConfigMap volume cannot hold other mounts inside it).
 */
function configVolume(configMapName: string, build: VmcpBuild): Volume {
  if (build.files.length === 0) return { name: "vmcp-config", configMap: { name: configMapName } };
  return {
    name: "vmcp-config",
    projected: {
      sources: [
        {
          configMap: {
            name: configMapName,
            items: [{ key: "config.yaml", path: "config.yaml" }],
          },
        },
        ...build.files.map((f) => ({
          configMap: { name: f.configMap, items: [{ key: f.key, path: f.path }] },
        })),
      ],
    },
  };
}

function vmcpContainer(
  resource: Resource<"VirtualMCPServer">,
  build: VmcpBuild,
  image: string,
): Container {
  const name = resource.metadata.name;
  const env: ContainerEnv[] = [
    { name: "VMCP_NAME", value: name },
    { name: "VMCP_NAMESPACE", value: resource.metadata.namespace },
    {
      name: "POD_NAMESPACE",
      valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
    },
    {
      name: `${VMCP_ENV_PREFIX}_SESSION_HMAC_SECRET`,
      valueFrom: { secretKeyRef: { name: vmcpHmacSecretName(name), key: VMCP_HMAC_SECRET_KEY } },
    },
    ...build.env,
  ];
  return {
    name: VMCP_CONTAINER,
    image,
    imagePullPolicy: "IfNotPresent",
    args: [
      "serve",
      `--config=${VMCP_CONFIG_DIR}/config.yaml`,
      "--host=0.0.0.0",
      `--port=${VMCP_PORT}`,
    ],
    ports: [{ name: "http", containerPort: VMCP_PORT, protocol: "TCP" }],
    env,
    resources: (resource.spec.resources as Container["resources"] | undefined) ?? VMCP_RESOURCES,
    volumeMounts: [{ name: "vmcp-config", mountPath: VMCP_CONFIG_DIR, readOnly: true }],
    livenessProbe: {
      httpGet: { path: "/health", port: "http" },
      initialDelaySeconds: 30,
      periodSeconds: 10,
      timeoutSeconds: 5,
      failureThreshold: 3,
    },
    readinessProbe: {
      httpGet: { path: "/readyz", port: "http" },
      initialDelaySeconds: 15,
      periodSeconds: 5,
      timeoutSeconds: 3,
      failureThreshold: 3,
    },
    securityContext: restrictedContainer(),
  };
}

/** The pod template, with the config's checksum (a change rolls the pods) and spec.podTemplateSpec merged in. */
function vmcpPodTemplate(
  resource: Resource<"VirtualMCPServer">,
  container: Container,
  volume: Volume,
  labels: Record<string, string>,
  configYaml: string,
): PodTemplate {
  const base: PodTemplate = {
    metadata: {
      labels,
      annotations: {
        [CONFIG_CHECKSUM_ANNOTATION]: contentHash(configYaml),
        [RUNCONFIG_CHECKSUM]: contentHash(configYaml),
      },
    },
    spec: {
      serviceAccountName: serviceAccountOf(resource),
      terminationGracePeriodSeconds: 30,
      securityContext: restrictedPod(),
      containers: [container],
      volumes: [volume],
    },
  };
  return mergePodTemplate(base, resource.spec.podTemplateSpec, VMCP_CONTAINER);
}

/** The Deployment and the Service in front of it, with spec.resourceOverrides applied. */
function emitDeploymentAndService(
  scope: Construct,
  resource: Resource<"VirtualMCPServer">,
  podTemplate: PodTemplate,
  labels: Record<string, string>,
): void {
  const spec = resource.spec;
  const name = resource.metadata.name;
  const selector = selectorLabels(APP, name);
  const deploymentMeta: Metadata = { labels: { ...labels } };
  const serviceMeta: Metadata = { labels: { ...labels } };
  applyResourceOverrides(
    {
      deployment: deploymentMeta,
      podTemplate,
      service: serviceMeta,
      proxyContainer: VMCP_CONTAINER,
    },
    spec.resourceOverrides,
  );
  emit(scope, resource, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: vmcpDeploymentName(name), ...deploymentMeta },
    spec: {
      ...(spec.replicas !== undefined ? { replicas: spec.replicas } : {}),
      selector: { matchLabels: selector },
      template: podTemplate,
    },
  });
  emit(scope, resource, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: vmcpServiceName(name), ...serviceMeta },
    spec: {
      type: spec.serviceType ?? "ClusterIP",
      selector,
      // Sessions live in one replica's memory unless Redis holds them.
      sessionAffinity: "ClientIP",
      ports: [{ name: "http", port: VMCP_PORT, targetPort: VMCP_PORT, protocol: "TCP" }],
    },
  });
}

/** Renders a VirtualMCPServer; renders nothing (and reports why) when its build fails. */
export const renderVirtualMCPServer: KindRenderer<"VirtualMCPServer"> = (
  scope,
  resource,
  context,
) => {
  const members = resolveVmcpMembers(resource, context.resources);
  context.resolved.vmcpMembers.set(resolvedKey(resource), members);
  const report = context.issues.for(resource);
  const build = buildVmcpConfig(resource, context.resources, report, members);
  if (build === undefined) return;
  const name = resource.metadata.name;
  const labels = workloadLabels(APP, name);
  const configYaml = vmcpConfigYaml(build.config);
  const configMapName = vmcpConfigMapName(name);
  emit(scope, resource, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: configMapName,
      labels: { ...labels, ...configMapLabels("vmcp-config", "virtual-mcp-server", name) },
      annotations: { [CONTENT_CHECKSUM]: contentHash(configYaml) },
    },
    data: { "config.yaml": configYaml },
  });
  emitVmcpRbac(scope, resource, labels);
  const container = vmcpContainer(resource, build, context.options.vmcpImage);
  const volume = configVolume(configMapName, build);
  const podTemplate = vmcpPodTemplate(resource, container, volume, labels, configYaml);
  emitDeploymentAndService(scope, resource, podTemplate, labels);
};

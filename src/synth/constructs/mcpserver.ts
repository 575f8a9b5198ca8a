// MCPServer: the proxy-runner Deployment `<n>` (container `toolhive`), Service `mcp-<n>-proxy`,
// the runner's ServiceAccount, Role and RoleBinding `<n>-proxy-runner`, the MCP server's own
// ServiceAccount `<n>-sa` when spec.serviceAccount is empty, and ConfigMap `<n>-runconfig`.
// The MCP server pod itself is created by the runner from the pod template patch it is given:
// container `mcp` with the server's secrets, resources and volumes, merged with
// spec.podTemplateSpec.
import type * as T from "../../../generated/types.js";
import type { KindRenderer } from "../context.js";
import { stableStringify } from "../hash.js";
import { workloadLabels } from "../labels.js";
import type { Resource } from "../model.js";
import { dnsLabel, dnsSubdomain } from "../names.js";
import {
  type Container,
  type PodTemplate,
  compact,
  kubeResources,
  mergePodTemplate,
  secretRefsEnv,
} from "../pod.js";
import {
  DEFAULT_PROXY_PORT,
  type Lookup,
  proxyRunConfig,
  resolveAuth,
  resolveScaling,
} from "../runner.js";
import { type KubeVolume, type KubeVolumeMount, PodExtras } from "../pod-extras.js";
import { ALL_VERBS, READ_VERBS, emit, emitRbac, serviceHost } from "./common.js";
import { emitRunnerWorkload, proxyPullSecrets, refuseUnrenderable } from "./runner-workload.js";

export const MCPSERVER_APP = "mcpserver";
export const MCP_CONTAINER = "mcp";

/** Default resources of the proxy-runner container (the MCP server's are spec.resources). */
export const RUNNER_RESOURCES: NonNullable<Container["resources"]> = {
  requests: { cpu: "50m", memory: "64Mi" },
  limits: { cpu: "500m", memory: "512Mi" },
};

/** Names of the objects rendered for MCPServer `name`. */
export function mcpServerNames(name: string): {
  deployment: string;
  service: string;
  runner: string;
  serviceAccount: string;
  runconfig: string;
} {
  return {
    deployment: dnsLabel(name),
    service: dnsLabel(`mcp-${name}-proxy`),
    runner: dnsSubdomain(`${name}-proxy-runner`),
    serviceAccount: dnsSubdomain(`${name}-sa`),
    runconfig: dnsSubdomain(`${name}-runconfig`),
  };
}

/** The protocol clients speak to the proxy: proxyMode for stdio servers, else the transport. */
export function clientProtocol(spec: T.MCPServerSpec): "sse" | "streamable-http" {
  const transport = spec.transport ?? "stdio";
  return transport === "stdio" ? (spec.proxyMode ?? "streamable-http") : transport;
}

/** The in-cluster URL of an MCP proxy Service. */
export function proxyUrl(
  service: string,
  namespace: string,
  port: number,
  protocol: "sse" | "streamable-http",
  name: string,
): string {
  const base = `http://${serviceHost(service, namespace)}:${port}`;
  return protocol === "sse" ? `${base}/sse#${name}` : `${base}/mcp`;
}

export function mcpServerUrl(r: Resource<"MCPServer">): string {
  return proxyUrl(
    mcpServerNames(r.metadata.name).service,
    r.metadata.namespace,
    r.spec.proxyPort ?? DEFAULT_PROXY_PORT,
    clientProtocol(r.spec),
    r.metadata.name,
  );
}

/** Replica count as written: unset stays unset (an autoscaler owns it); stdio caps at 1. */
export function cappedReplicas(value: number | undefined, stdio: boolean): number | undefined {
  if (value === undefined) return undefined;
  return stdio ? Math.min(value, 1) : value;
}

/**
 * Volumes of the MCP server pod and their mounts in the `mcp` container. A volume in the
 * reference operator's form (`hostPath` as a string, `mountPath`, `readOnly`) becomes a hostPath
 * volume mounted there; a Kubernetes volume is mounted at `/mnt/<name>` unless the user's
 * podTemplateSpec mounts it itself.
 */
function serverVolumes(
  volumes: T.Volume[] | undefined,
  userMounted: Set<string>,
): { volumes: KubeVolume[]; mounts: KubeVolumeMount[] } {
  const out = { volumes: [] as KubeVolume[], mounts: [] as KubeVolumeMount[] };
  for (const v of volumes ?? []) {
    const { mountPath, readOnly, hostPath, ...rest } = v as T.Volume & {
      mountPath?: unknown;
      readOnly?: unknown;
      hostPath?: unknown;
    };
    const volume: KubeVolume = { ...rest, name: v.name };
    if (typeof hostPath === "string") volume.hostPath = { path: hostPath };
    else if (hostPath !== undefined) volume.hostPath = hostPath;
    out.volumes.push(volume);
    if (typeof mountPath === "string") {
      out.mounts.push({ name: v.name, mountPath, readOnly: readOnly === true });
    } else if (!userMounted.has(v.name)) {
      out.mounts.push({ name: v.name, mountPath: `/mnt/${v.name}` });
    }
  }
  return out;
}

function userMountedVolumes(user: T.PodTemplateSpec | undefined): Set<string> {
  const spec = (user as { spec?: { containers?: Container[] } } | undefined)?.spec;
  const mcp = spec?.containers?.find((c) => c.name === MCP_CONTAINER);
  return new Set((mcp?.volumeMounts ?? []).map((m) => m.name));
}

/** The pod template the runner applies to the MCP server pod (`--k8s-pod-patch`). */
export function mcpPodPatch(r: Resource<"MCPServer">): PodTemplate {
  const spec = r.spec;
  const names = mcpServerNames(r.metadata.name);
  const vols = serverVolumes(spec.volumes, userMountedVolumes(spec.podTemplateSpec));
  const env = secretRefsEnv(spec.secrets);
  const container: Container = compact({
    name: MCP_CONTAINER,
    env: env.length > 0 ? env : undefined,
    resources: kubeResources(spec.resources),
    volumeMounts: vols.mounts.length > 0 ? vols.mounts : undefined,
  });
  const base: PodTemplate = {
    spec: compact({
      serviceAccountName:
        spec.serviceAccount !== undefined && spec.serviceAccount !== ""
          ? spec.serviceAccount
          : names.serviceAccount,
      containers: [container],
      volumes: vols.volumes.length > 0 ? (vols.volumes as never) : undefined,
    }),
  };
  return mergePodTemplate(base, spec.podTemplateSpec, MCP_CONTAINER);
}

/**
 * Volumes written in the reference operator's form (`hostPath` as a string, `mountPath`), as the
 * runner's `host:container[:ro]` bind specifications.
 */
function bindVolumes(volumes: T.Volume[] | undefined): string[] | undefined {
  const out: string[] = [];
  for (const v of volumes ?? []) {
    const { hostPath, mountPath, readOnly } = v as {
      hostPath?: unknown;
      mountPath?: unknown;
      readOnly?: unknown;
    };
    if (typeof hostPath === "string" && typeof mountPath === "string")
      out.push(`${hostPath}:${mountPath}${readOnly === true ? ":ro" : ""}`);
  }
  return out.length > 0 ? out : undefined;
}

/**
 * The runner's whole configuration for an MCPServer, and what its container needs for it. Only
 * keys the runner reads (tools/runtime checks every rendered file against its decoder). The pod
 * patch travels in `--k8s-pod-patch`, and `spec.secrets` only in it: listed in the run-config,
 * the runner would ask a secrets provider for them and stop.
 */
export function mcpServerRunConfig(
  r: Resource<"MCPServer">,
  lookup: Lookup,
): { config: Record<string, unknown>; extras: PodExtras; podPatch: string } {
  const spec = r.spec;
  const name = r.metadata.name;
  const transport = spec.transport ?? "stdio";
  const stdio = transport === "stdio";
  const extras = new PodExtras();
  const podPatch = stableStringify(mcpPodPatch(r));
  const profile = spec.permissionProfile;
  const resourceUrl = mcpServerUrl(r).replace(/#.*$/, "");
  const auth = resolveAuth(spec, lookup, extras, {
    name,
    namespace: r.metadata.namespace,
    resourceUrl,
  });
  const permissionProfile =
    profile === undefined
      ? undefined
      : (profile.type ?? "builtin") === "builtin"
        ? profile.name
        : extras.configMapFile(profile.name, profile.key ?? "permissions.json");
  const config: Record<string, unknown> = {
    ...proxyRunConfig(r, lookup, extras, auth, resourceUrl, undefined),
    image: spec.image,
    transport,
    proxy_mode: clientProtocol(spec),
    target_port: spec.mcpPort,
    cmd_args: spec.args,
    env_vars:
      spec.env === undefined
        ? undefined
        : Object.fromEntries(spec.env.map((e) => [e.name, e.value])),
    volumes: bindVolumes(spec.volumes),
    permission_profile_name_or_path: permissionProfile,
    container_labels: { "toolhive-name": name },
    rate_limit_config: spec.rateLimiting,
    scaling_config: resolveScaling(
      cappedReplicas(spec.backendReplicas, stdio),
      spec.sessionStorage,
      extras,
    ),
  };
  return { config, extras, podPatch };
}

/** Rules of the runner: it creates the MCP server's StatefulSet and Service and attaches. */
export const PROXY_RUNNER_RULES = [
  { apiGroups: ["apps"], resources: ["statefulsets"], verbs: ALL_VERBS },
  { apiGroups: [""], resources: ["services"], verbs: ALL_VERBS },
  { apiGroups: [""], resources: ["pods"], verbs: READ_VERBS },
  { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
  { apiGroups: [""], resources: ["pods/attach"], verbs: ["create", "get"] },
  { apiGroups: [""], resources: ["configmaps"], verbs: READ_VERBS },
];

export const renderMCPServer: KindRenderer<"MCPServer"> = (scope, r, context) => {
  if (refuseUnrenderable(r, context)) return;
  const spec = r.spec;
  const names = mcpServerNames(r.metadata.name);
  const labels = workloadLabels(MCPSERVER_APP, r.metadata.name);
  const lookup: Lookup = { set: context.resources, namespace: r.metadata.namespace };
  const { config, extras, podPatch } = mcpServerRunConfig(r, lookup);

  emitRbac(scope, r, names.runner, labels, PROXY_RUNNER_RULES, {
    imagePullSecrets: proxyPullSecrets(spec.resourceOverrides),
  });
  if (spec.serviceAccount === undefined || spec.serviceAccount === "") {
    emit(scope, r, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: names.serviceAccount, labels },
    });
  }
  emitRunnerWorkload(scope, r, {
    app: MCPSERVER_APP,
    names,
    ownerKey: "mcp-server",
    config,
    extras,
    image: context.options.runnerImage,
    args: [
      "run",
      `--k8s-pod-patch=${podPatch}`,
      // The server's arguments travel in the run-config (`cmd_args`).
      spec.image,
    ],
    resources: RUNNER_RESOURCES,
    readyDelay: 5,
    serviceAccountName: names.runner,
    replicas: cappedReplicas(spec.replicas, (spec.transport ?? "stdio") === "stdio"),
  });
};

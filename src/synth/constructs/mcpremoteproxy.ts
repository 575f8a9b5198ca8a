// MCPRemoteProxy: the proxy-runner Deployment `<n>` in front of a remote MCP server, Service
// `mcp-<n>-remote-proxy`, ServiceAccount (unless spec.serviceAccount names one), Role and
// RoleBinding `<n>-remote-proxy-runner`, and ConfigMap `<n>-runconfig`.
import type { KindRenderer } from "../context.js";
import { prettyJson } from "../hash.js";
import { selectorLabels, workloadLabels } from "../labels.js";
import { type Resource, groupName } from "../model.js";
import { dnsLabel, dnsSubdomain } from "../names.js";
import { type Container, compact, kubeResources } from "../pod.js";
import {
  type Lookup,
  RUNCONFIG_SCHEMA_VERSION,
  resolveAudit,
  resolveAuth,
  resolveAuthz,
  resolveHeaderForward,
  resolveOidc,
  resolveTelemetry,
  resolveToolConfig,
} from "../runner.js";
import { PodExtras } from "../pod-extras.js";
import { READ_VERBS, emitRbac } from "./common.js";
import {
  emitRunnerWorkload,
  proxyPullSecrets,
  RUNNER_CONTAINER,
  runnerEnv,
  runnerNotRendered,
  runnerProbes,
} from "./runner-workload.js";
import { DEFAULT_PROXY_PORT, RUNNER_RESOURCES, proxyUrl } from "./mcpserver.js";

export const MCPREMOTEPROXY_APP = "mcpremoteproxy";

export function remoteProxyNames(name: string): {
  deployment: string;
  service: string;
  runner: string;
  runconfig: string;
} {
  return {
    deployment: dnsLabel(name),
    service: dnsLabel(`mcp-${name}-remote-proxy`),
    runner: dnsSubdomain(`${name}-remote-proxy-runner`),
    runconfig: dnsSubdomain(`${name}-runconfig`),
  };
}

/** `remoteURL`, or its deprecated spelling `remoteUrl`. */
export function remoteUrlOf(spec: { remoteURL?: string; remoteUrl?: string }): string {
  return spec.remoteURL ?? spec.remoteUrl ?? "";
}

export function remoteProxyUrl(r: Resource<"MCPRemoteProxy">): string {
  return proxyUrl(
    remoteProxyNames(r.metadata.name).service,
    r.metadata.namespace,
    r.spec.proxyPort ?? DEFAULT_PROXY_PORT,
    r.spec.transport ?? "streamable-http",
    r.metadata.name,
  );
}

export function remoteProxyRunConfig(
  r: Resource<"MCPRemoteProxy">,
  lookup: Lookup,
): { config: Record<string, unknown>; extras: PodExtras } {
  const spec = r.spec;
  const name = r.metadata.name;
  const extras = new PodExtras();
  const auth = resolveAuth(spec, lookup, extras, {
    name,
    namespace: r.metadata.namespace,
    resourceUrl: remoteProxyUrl(r).replace(/#.*$/, ""),
  });
  const config: Record<string, unknown> = {
    schema_version: RUNCONFIG_SCHEMA_VERSION,
    name,
    // The runner names the workload it creates after these; the reference's builder fills them
    // in, and a run-config without them makes the runner create a StatefulSet with no name.
    container_name: name,
    base_name: name,
    remote_url: remoteUrlOf(spec),
    transport: spec.transport ?? "streamable-http",
    host: "0.0.0.0",
    port: spec.proxyPort ?? DEFAULT_PROXY_PORT,
    oidc_config: resolveOidc(
      spec,
      lookup,
      extras,
      spec.oidcConfigRef?.resourceUrl ?? remoteProxyUrl(r).replace(/#.*$/, ""),
    ),
    ...resolveAuthz(spec.authzConfig, extras),
    audit_config: resolveAudit(spec.audit, name),
    telemetry_config: resolveTelemetry(spec, name, lookup, extras),
    ...resolveToolConfig(spec.toolConfigRef, lookup),
    ...auth,
    header_forward: resolveHeaderForward(spec.headerForward, extras, auth.header_forward),
    trust_proxy_headers: spec.trustProxyHeaders ?? false,
    endpoint_prefix: spec.endpointPrefix,
    group: groupName(spec.groupRef),
  };
  return { config, extras };
}

/** The remote proxy reads its configuration and the Secrets it forwards. */
export const REMOTE_PROXY_RULES = [
  { apiGroups: [""], resources: ["configmaps", "secrets"], verbs: READ_VERBS },
];

export const renderMCPRemoteProxy: KindRenderer<"MCPRemoteProxy"> = (scope, r, context) => {
  const why = runnerNotRendered(r);
  if (why !== undefined) {
    context.issues
      .for(r)
      .error("SYNTH_NOT_RENDERED", `renders nothing: ${why}`, "/spec/oidcConfig");
    return;
  }
  const spec = r.spec;
  const name = r.metadata.name;
  const names = remoteProxyNames(name);
  const labels = workloadLabels(MCPREMOTEPROXY_APP, name);
  const selector = selectorLabels(MCPREMOTEPROXY_APP, name);
  const lookup: Lookup = { set: context.resources, namespace: r.metadata.namespace };
  const proxyPort = spec.proxyPort ?? DEFAULT_PROXY_PORT;
  const { config, extras } = remoteProxyRunConfig(r, lookup);
  const runconfig = prettyJson(config);
  const own = spec.serviceAccount !== undefined && spec.serviceAccount !== "";

  emitRbac(scope, r, names.runner, labels, REMOTE_PROXY_RULES, {
    serviceAccount: own ? spec.serviceAccount : undefined,
    imagePullSecrets: proxyPullSecrets(spec.resourceOverrides),
  });
  const runner = compact<Container>({
    name: RUNNER_CONTAINER,
    image: context.options.runnerImage,
    imagePullPolicy: "IfNotPresent",
    // `run` needs one positional argument, which the runner replaces with the run-config's
    // `remote_url`; it ignores flags it does not know, so a `--remote` flag would be lost.
    args: ["run", "--foreground=true", "placeholder-for-remote-proxy"],
    ports: [{ name: "http", containerPort: proxyPort, protocol: "TCP" }],
    env: runnerEnv(extras),
    resources: kubeResources(spec.resources) ?? RUNNER_RESOURCES,
    ...runnerProbes(15),
  });
  emitRunnerWorkload(scope, r, {
    names,
    labels,
    selector,
    ownerKey: "mcp-remote-proxy",
    runner,
    runconfig,
    extras,
    serviceAccountName: own ? (spec.serviceAccount as string) : names.runner,
    proxyPort,
    sessionAffinity: spec.sessionAffinity,
    resourceOverrides: spec.resourceOverrides,
  });
};

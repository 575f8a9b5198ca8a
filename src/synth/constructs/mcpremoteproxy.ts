// MCPRemoteProxy: the proxy-runner Deployment `<n>` in front of a remote MCP server, Service
// `mcp-<n>-remote-proxy`, ServiceAccount (unless spec.serviceAccount names one), Role and
// RoleBinding `<n>-remote-proxy-runner`, and ConfigMap `<n>-runconfig`.
import type { KindRenderer } from "../context.js";
import { workloadLabels } from "../labels.js";
import type { Resource } from "../model.js";
import { dnsLabel, dnsSubdomain } from "../names.js";
import { kubeResources } from "../pod.js";
import { DEFAULT_PROXY_PORT, type Lookup, proxyRunConfig, resolveAuth } from "../runner.js";
import { PodExtras } from "../pod-extras.js";
import { READ_VERBS, emitRbac } from "./common.js";
import { emitRunnerWorkload, proxyPullSecrets, refuseUnrenderable } from "./runner-workload.js";
import { RUNNER_RESOURCES, proxyUrl } from "./mcpserver.js";

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
  const resourceUrl = remoteProxyUrl(r).replace(/#.*$/, "");
  const auth = resolveAuth(spec, lookup, extras, {
    name,
    namespace: r.metadata.namespace,
    resourceUrl,
  });
  const config: Record<string, unknown> = {
    ...proxyRunConfig(r, lookup, extras, auth, resourceUrl, spec.headerForward),
    remote_url: remoteUrlOf(spec),
    transport: spec.transport ?? "streamable-http",
  };
  return { config, extras };
}

/** The remote proxy reads its configuration and the Secrets it forwards. */
export const REMOTE_PROXY_RULES = [
  { apiGroups: [""], resources: ["configmaps", "secrets"], verbs: READ_VERBS },
];

export const renderMCPRemoteProxy: KindRenderer<"MCPRemoteProxy"> = (scope, r, context) => {
  if (refuseUnrenderable(r, context)) return;
  const spec = r.spec;
  const names = remoteProxyNames(r.metadata.name);
  const labels = workloadLabels(MCPREMOTEPROXY_APP, r.metadata.name);
  const lookup: Lookup = { set: context.resources, namespace: r.metadata.namespace };
  const { config, extras } = remoteProxyRunConfig(r, lookup);
  const own = spec.serviceAccount !== undefined && spec.serviceAccount !== "";

  emitRbac(scope, r, names.runner, labels, REMOTE_PROXY_RULES, {
    serviceAccount: own ? spec.serviceAccount : undefined,
    imagePullSecrets: proxyPullSecrets(spec.resourceOverrides),
  });
  emitRunnerWorkload(scope, r, {
    app: MCPREMOTEPROXY_APP,
    names,
    ownerKey: "mcp-remote-proxy",
    config,
    extras,
    image: context.options.runnerImage,
    // `run` needs one positional argument, which the runner replaces with the run-config's
    // `remote_url`; it ignores flags it does not know, so a `--remote` flag would be lost.
    args: ["run", "--foreground=true", "placeholder-for-remote-proxy"],
    resources: kubeResources(spec.resources) ?? RUNNER_RESOURCES,
    readyDelay: 15,
    serviceAccountName: own ? (spec.serviceAccount as string) : names.runner,
  });
};

// The group a virtual server aggregates and the members it reaches in it, resolved once per
// synthesis: the configuration lists them as backends and status reports them.
import { groupName, type Resource, type ResourceSet } from "../../model.js";
import { remoteProxyUrl } from "../mcpremoteproxy.js";
import { clientProtocol, mcpServerUrl } from "../mcpserver.js";
import type { ResolvedBackend, Transport, VmcpMembers } from "./members.js";

export type { ResolvedBackend, VmcpMembers } from "./members.js";

/** A member reached through its proxy Service, at the URL its own status reports. */
function proxyBackend(
  r: Resource<"MCPServer" | "MCPRemoteProxy">,
  kind: "MCPServer" | "MCPRemoteProxy",
  url: string,
  transport: Transport,
): ResolvedBackend {
  const auth = r.spec.externalAuthConfigRef;
  return {
    name: r.metadata.name,
    kind,
    url,
    transport,
    ...(auth ? { externalAuthConfigRef: auth.name } : {}),
  };
}

/**
 * The members of the virtual server's group, sorted by name: MCPServers and MCPRemoteProxies by
 * the URL of their proxy Service, MCPServerEntries by their remote URL.
 */
export function resolveBackends(
  set: ResourceSet,
  namespace: string,
  group: string,
): ResolvedBackend[] {
  const out: ResolvedBackend[] = [];
  for (const s of set.list("MCPServer", namespace)) {
    if (groupName(s.spec.groupRef) !== group) continue;
    out.push(proxyBackend(s, "MCPServer", mcpServerUrl(s), clientProtocol(s.spec)));
  }
  for (const p of set.list("MCPRemoteProxy", namespace)) {
    if (groupName(p.spec.groupRef) !== group) continue;
    const transport = p.spec.transport ?? "streamable-http";
    out.push(proxyBackend(p, "MCPRemoteProxy", remoteProxyUrl(p), transport));
  }
  for (const e of set.list("MCPServerEntry", namespace)) {
    if (groupName(e.spec.groupRef) !== group) continue;
    const url = e.spec.remoteURL ?? e.spec.remoteUrl;
    if (url === undefined) continue;
    const ca = e.spec.caBundleRef?.configMapRef;
    out.push({
      name: e.metadata.name,
      kind: "MCPServerEntry",
      url,
      transport: e.spec.transport,
      ...(e.spec.externalAuthConfigRef
        ? { externalAuthConfigRef: e.spec.externalAuthConfigRef.name }
        : {}),
      ...(ca ? { caBundle: { configMap: ca.name, key: ca.key ?? "ca.crt" } } : {}),
    });
  }
  return out.sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.kind.localeCompare(b.kind),
  );
}

/** The group a virtual server aggregates: `spec.groupRef`, else the older `spec.config.groupRef`. */
export function vmcpGroup(resource: Resource<"VirtualMCPServer">): string | undefined {
  return groupName(resource.spec.groupRef) ?? resource.spec.config?.groupRef;
}

/** The virtual server's group and, when the group exists, its members. */

export function resolveVmcpMembers(
  resource: Resource<"VirtualMCPServer">,
  set: ResourceSet,
): VmcpMembers {
  const ns = resource.metadata.namespace;
  const group = vmcpGroup(resource);
  const groupFound = group !== undefined && set.get("MCPGroup", ns, group) !== undefined;
  return { group, groupFound, backends: groupFound ? resolveBackends(set, ns, group) : [] };
}

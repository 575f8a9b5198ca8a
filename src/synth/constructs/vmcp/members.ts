// What a virtual server's group resolves to: its members as the virtual server reaches them.
// Types only, so the synth context can name them without importing the renderers.

export type Transport = "sse" | "streamable-http";

/** One member of the virtual server's group, as the virtual server reaches it. */
export interface ResolvedBackend {
  name: string;
  kind: "MCPServer" | "MCPRemoteProxy" | "MCPServerEntry";
  url: string;
  transport: Transport;
  /** The MCPExternalAuthConfig the workload itself names (used by `discovered` auth). */
  externalAuthConfigRef?: string;
  /** CA bundle of an entry backend, from a ConfigMap key. */
  caBundle?: { configMap: string; key: string };
}

export interface VmcpMembers {
  group: string | undefined;
  groupFound: boolean;
  /** Sorted; empty when the group is not found. */
  backends: ResolvedBackend[];
}

// The kinds a registry's kubernetes source turns into entries, apart from the client that reads
// them, so that what renders the registry's RBAC need not load that client.

export const EXPORTED_KINDS = [
  { kind: "MCPServer", plural: "mcpservers" },
  { kind: "MCPRemoteProxy", plural: "mcpremoteproxies" },
  { kind: "VirtualMCPServer", plural: "virtualmcpservers" },
] as const;

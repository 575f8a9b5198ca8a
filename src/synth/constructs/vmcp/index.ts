// VirtualMCPServer: its configuration file (config.ts, auth.ts), the group members it reaches
// (backends.ts), and the workload that runs it (workload.ts).
export {
  type ResolvedBackend,
  type VmcpMembers,
  resolveBackends,
  resolveVmcpMembers,
  vmcpGroup,
} from "./backends.js";
export { buildVmcpConfig, type ProjectedFile, type VmcpBuild, vmcpConfigYaml } from "./config.js";
export * from "./names.js";
export { type ContainerEnv, envFragment } from "./secret-env.js";
export { renderVirtualMCPServer } from "./workload.js";

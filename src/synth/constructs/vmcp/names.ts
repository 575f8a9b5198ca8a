// The names, ports and paths of what a VirtualMCPServer renders, shared by its configuration,
// its workload and its status.
import { dnsLabel, dnsSubdomain } from "../../names.js";
import { serviceHost } from "../common.js";

/** What a virtual server's Role lets it read of our kinds (it discovers its backends). */
export const VMCP_READS = [
  "mcpgroups",
  "mcpservers",
  "mcpremoteproxies",
  "mcpserverentries",
  "mcpexternalauthconfigs",
  "mcptoolconfigs",
  "virtualmcpcompositetooldefinitions",
  "virtualmcpservers",
] as const;

/** Port of the virtual server's HTTP listener, named `http` on the container and Service. */
export const VMCP_PORT = 4483;
/** Where the rendered configuration (and the CA bundles of entry backends) are mounted. */
export const VMCP_CONFIG_DIR = "/etc/vmcp-config";
export const VMCP_CONTAINER = "vmcp";
/** Pod template annotation holding the sha256 of the rendered configuration: a change rolls the pods. */
export const CONFIG_CHECKSUM_ANNOTATION = "mcpfleet.dev/config-checksum";
/** Prefix of the environment variables synth names for the virtual server (`VMCP_OIDC_CLIENT_SECRET`). */
export const VMCP_ENV_PREFIX = "VMCP";
/** Key of the HMAC secret in the Secret `<name>-hmac-secret`; see docs/synth-workloads.md. */
export const VMCP_HMAC_SECRET_KEY = "hmac-secret";

export const vmcpDeploymentName = (name: string): string => dnsSubdomain(name);
export const vmcpServiceName = (name: string): string => dnsLabel(`vmcp-${name}`);
export const vmcpConfigMapName = (name: string): string => dnsSubdomain(`${name}-vmcp-config`);
export const vmcpRbacName = (name: string): string => dnsSubdomain(`${name}-vmcp`);
export const vmcpHmacSecretName = (name: string): string => dnsSubdomain(`${name}-hmac-secret`);

/** In-cluster URL of a virtual server (status `url`). */
export function vmcpUrl(name: string, namespace: string): string {
  return `http://${serviceHost(vmcpServiceName(name), namespace)}:${VMCP_PORT}`;
}

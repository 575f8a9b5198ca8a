/** The API group every kind belongs to, and the versions the CRDs serve (see docs/compat.md). */
export const API_GROUP = "toolhive.stacklok.dev";
export const STORAGE_VERSION = "v1alpha1";
export const SERVED_VERSIONS = ["v1alpha1", "v1beta1"] as const;
export const CATEGORY = "toolhive";

/** The twelve kinds we own, in the order they are documented and applied (config kinds first). */
export const KINDS = [
  "MCPToolConfig",
  "MCPTelemetryConfig",
  "MCPOIDCConfig",
  "MCPExternalAuthConfig",
  "MCPGroup",
  "EmbeddingServer",
  "MCPServer",
  "MCPRemoteProxy",
  "MCPServerEntry",
  "VirtualMCPCompositeToolDefinition",
  "VirtualMCPServer",
  "MCPRegistry",
] as const;

export type Kind = (typeof KINDS)[number];

const kindsByName: ReadonlyMap<string, Kind> = new Map(KINDS.map((k) => [k, k]));

export function isKind(value: string): value is Kind {
  return kindsByName.has(value);
}

/**
 * The kind `value` names, as this module's own constant (the same text, one string however many
 * documents name it), or undefined when it is not one of ours.
 */
export function asKind(value: string): Kind | undefined {
  return kindsByName.get(value);
}

const [OWN_V1ALPHA1, OWN_V1BETA1] = SERVED_VERSIONS.map((v) => `${API_GROUP}/${v}`);

/**
 * True for `toolhive.stacklok.dev/v1alpha1` and `toolhive.stacklok.dev/v1beta1`. Compared, not
 * looked up in a set: a set would hash the whole string of every resource first.
 */
export function isOwnApiVersion(apiVersion: string): boolean {
  return apiVersion === OWN_V1ALPHA1 || apiVersion === OWN_V1BETA1;
}

export const SCHEMA_BASE = "https://mcpfleet.dev/schemas/";

const kindSchemaIds = new Map<string, string>(
  KINDS.map((kind) => [kind, `${SCHEMA_BASE}crd/${kind.toLowerCase()}.yaml`]),
);

/** The `$id` of a kind's root schema. */
export function kindSchemaId(kind: Kind): string {
  return kindSchemaIds.get(kind) ?? `${SCHEMA_BASE}crd/${kind.toLowerCase()}.yaml`;
}

export const REGISTRY_CONFIG_SCHEMA_ID = `${SCHEMA_BASE}config/registry-server.yaml`;
export const VMCP_CONFIG_SCHEMA_ID = `${SCHEMA_BASE}config/vmcp.yaml`;

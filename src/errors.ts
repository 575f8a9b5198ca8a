/**
 * The one catalogue of error codes. Every domain error carries a stable `code` that callers can
 * switch on; HTTP problems and CLI messages are built from these entries. Codes never change
 * meaning; add new ones rather than reuse.
 */
export const ERROR_CODES = {
  // CLI and files
  ERR_USAGE: { status: 400, title: "Invalid command usage" },
  ERR_IO: { status: 500, title: "File could not be read or written" },
  // Schemas
  ERR_SCHEMA_LOAD: { status: 500, title: "Schema could not be loaded" },
  ERR_CEL_COMPILE: { status: 500, title: "CEL rule does not compile" },
  // Validation (mcpfleet validate and every command that refuses invalid resources)
  ERR_INVALID_RESOURCES: { status: 422, title: "Resources failed validation" },
  // Registry server
  ERR_REGISTRY_CONFIG: { status: 400, title: "Invalid registry server configuration" },
  ERR_BAD_REQUEST: { status: 400, title: "Malformed request" },
  ERR_INVALID_PARAMETER: { status: 400, title: "Invalid request parameter" },
  ERR_INVALID_CURSOR: { status: 400, title: "Invalid pagination cursor" },
  ERR_INVALID_ENTRY: { status: 400, title: "Invalid entry" },
  ERR_INVALID_RESOURCE: { status: 400, title: "Invalid source or registry" },
  ERR_INPUT_LIMIT: { status: 400, title: "Input exceeds a structural limit" },
  ERR_SOURCE_LOCATION_REFUSED: {
    status: 403,
    title: "Source location not allowed for sources created through the API",
  },
  ERR_UNAUTHORIZED: { status: 401, title: "Authentication required" },
  ERR_FORBIDDEN: { status: 403, title: "Operation not permitted" },
  ERR_CONFIG_RESOURCE_READONLY: {
    status: 403,
    title: "Resource is defined in the configuration file",
  },
  ERR_NOT_FOUND: { status: 404, title: "No such route" },
  ERR_REGISTRY_NOT_FOUND: { status: 404, title: "Registry not found" },
  ERR_SOURCE_NOT_FOUND: { status: 404, title: "Source not found" },
  ERR_SERVER_NOT_FOUND: { status: 404, title: "Server not found" },
  ERR_VERSION_NOT_FOUND: { status: 404, title: "Server version not found" },
  ERR_METHOD_NOT_ALLOWED: { status: 405, title: "Method not allowed" },
  ERR_REQUEST_TIMEOUT: { status: 408, title: "Request timed out" },
  ERR_VERSION_EXISTS: { status: 409, title: "Version already published" },
  ERR_CLAIMS_MISMATCH: { status: 409, title: "Claims differ from the first version's" },
  ERR_NO_MANAGED_SOURCE: { status: 409, title: "Registry has no managed source" },
  ERR_SOURCE_IN_USE: { status: 409, title: "Source is used by a registry" },
  ERR_SOURCE_NOT_SYNCED: { status: 409, title: "Source is not synced" },
  ERR_MANAGED_SOURCE_EXISTS: { status: 409, title: "There is a managed source already" },
  ERR_NAME_TAKEN: { status: 409, title: "Name is served by another source of the registry" },
  ERR_PAYLOAD_TOO_LARGE: { status: 413, title: "Request body too large" },
  ERR_META_TOO_LARGE: { status: 413, title: "_meta too large" },
  ERR_UNSUPPORTED_MEDIA_TYPE: { status: 415, title: "Unsupported content type" },
  ERR_INTERNAL: { status: 500, title: "Internal server error" },
  ERR_SYNC_FAILED: { status: 502, title: "Source could not be synced" },
  ERR_STORE_UNAVAILABLE: { status: 503, title: "Store unavailable" },
  ERR_SHUTTING_DOWN: { status: 503, title: "Server shutting down" },
  // Outgoing HTTP (source fetches, identity providers)
  ERR_OUTGOING_HTTP: {
    status: 502,
    title: "Outgoing HTTP request refused, cut off or over its limits",
  },
  ERR_UPSTREAM_STATUS: { status: 502, title: "Upstream answered with an HTTP error status" },
  ERR_IDENTITY_PROVIDER: { status: 502, title: "Identity provider could not be asked" },
  // GitOps controller
  ERR_GIT_AUTH: { status: 401, title: "Git server refused the credentials" },
  ERR_GIT_REF_NOT_FOUND: { status: 404, title: "Branch, tag or commit not found" },
  ERR_GIT_UNREACHABLE: { status: 503, title: "Git server unreachable" },
  ERR_GIT_FAILED: { status: 502, title: "Git operation failed" },
  ERR_WEBHOOK_SIGNATURE: { status: 401, title: "Webhook signature missing or wrong" },
  ERR_KUBE_API: { status: 502, title: "Kubernetes API request failed" },
  ERR_IMMUTABLE_FIELD: { status: 422, title: "Change to an immutable field" },
  ERR_INTERRUPTED: { status: 503, title: "Stopped before the apply finished" },
  ERR_NOT_LEADER: { status: 503, title: "Another replica is the leader" },
  ERR_NO_CONTROLLER: { status: 404, title: "No controller inventory in the namespace" },
  ERR_SUSPENDED: { status: 409, title: "The controller is suspended" },
  ERR_RECONCILE_TIMEOUT: {
    status: 504,
    title: "The controller did not answer the request in time",
  },
  ERR_REFUSED: { status: 403, title: "Object outside what the controller may apply" },
  ERR_ROLLOUT_FAILED: { status: 502, title: "An applied workload failed to roll out" },
  ERR_NOT_READY: { status: 504, title: "Applied workloads not ready in time" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export class McpfleetError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "McpfleetError";
    this.code = code;
    this.status = ERROR_CODES[code].status;
  }
}

export function isMcpfleetError(err: unknown): err is McpfleetError {
  return err instanceof McpfleetError;
}

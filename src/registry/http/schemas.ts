// OpenAPI schemas the route plugins share: problem answers, the official item and list shapes,
// and the admin views of sources and registries.

/** Statuses the server answers with a problem, and when. */
const PROBLEM_WHEN = {
  400: "The request breaks a rule: a malformed URL or body, or a value the checks refuse.",
  401: "No valid access token (oauth mode); WWW-Authenticate says why.",
  403: "The caller's roles or claims do not permit this.",
  404: "What the path names does not exist, or is hidden from the caller.",
  409: "The request conflicts with the server's current state.",
  413: "The body exceeds the server's bodyLimit (or _meta its size limit).",
  415: "The body is not application/json.",
  502: "The identity provider could not be asked about the token (oauth mode).",
  503: "The store is unavailable, or the server is shutting down; retry (after Retry-After).",
} as const;

export type ProblemStatus = keyof typeof PROBLEM_WHEN;

/** Headers a problem of a status carries besides its body. */
const PROBLEM_HEADERS: Partial<Record<ProblemStatus, Record<string, object>>> = {
  401: {
    "www-authenticate": {
      type: "string",
      description: "The Bearer challenge, naming why the token was refused.",
    },
  },
  503: {
    "retry-after": { type: "string", description: "Seconds to wait before retrying." },
  },
};

/** A problem answer: always application/problem+json (RFC 9457, see problem.ts). */
function problemResponse(description: string, headers?: Record<string, object>) {
  return {
    description,
    ...(headers !== undefined ? { headers } : {}),
    content: { "application/problem+json": { schema: { $ref: "Problem#" } } },
  } as const;
}

/** A problem answer for any status (a route's own reason in `description`). */
export const ERR = problemResponse("A problem (RFC 9457).");

/** The problem answers of these statuses, each with the reason it is sent. */
export function problems(...statuses: ProblemStatus[]): Record<number, typeof ERR> {
  return Object.fromEntries(
    statuses.map((s) => [s, problemResponse(PROBLEM_WHEN[s], PROBLEM_HEADERS[s])]),
  );
}

/**
 * What any route behind authentication may answer besides its own statuses: a bad URL (400),
 * the token (401, 502) and the roles (403) it is checked against, and a store gone away (503).
 */
export const ERRORS = problems(400, 401, 403, 502, 503);

export const NOT_MODIFIED = {
  description: "Not modified: the ETag of If-None-Match is the current one.",
  type: "null",
} as const;

export const OFFICIAL_META_SCHEMA = {
  type: "object",
  properties: {
    status: { type: "string", enum: ["active", "deprecated", "deleted"] },
    statusMessage: { type: "string" },
    statusChangedAt: { type: "string", format: "date-time" },
    publishedAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
    isLatest: { type: "boolean" },
  },
} as const;

export const ITEM = {
  type: "object",
  description:
    "A server version: `server` is the MCP server.json; `_meta` carries the registry's official metadata.",
  properties: {
    server: { type: "object", additionalProperties: true },
    _meta: {
      type: "object",
      properties: { "io.modelcontextprotocol.registry/official": OFFICIAL_META_SCHEMA },
      additionalProperties: true,
    },
  },
  additionalProperties: true,
} as const;

export const LIST = {
  type: "object",
  properties: {
    servers: { type: "array", items: ITEM },
    metadata: {
      type: "object",
      properties: {
        nextCursor: { type: "string", description: "Absent on the last page." },
        count: { type: "integer", description: "Items in this page." },
      },
    },
  },
} as const;

/** An answer holding one list under `key`: `{ "<key>": [item, ...] }`. */
export function listOf<K extends string, I extends object>(key: K, item: I) {
  return {
    type: "object",
    properties: { [key]: { type: "array", items: item } } as Record<K, { type: "array"; items: I }>,
  } as const;
}

/**
 * A path parameter's text: not empty, no NUL (refused before routing), at most 255 characters
 * (the longest a version may be; the router takes up to 255 characters percent-encoded).
 */
export function pathText(description: string) {
  return {
    type: "string",
    minLength: 1,
    maxLength: 255,
    pattern: "^[^\\u0000]+$",
    description,
  } as const;
}

/** A name a source or registry takes (its config schema's Name): a DNS label. */
export const DNS_LABEL = {
  type: "string",
  minLength: 1,
  maxLength: 63,
  pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
} as const;

/** Claims of an entry: each a string or a list of strings (a JSON body's types are kept). */
export const CLAIMS = {
  type: "object",
  description: "Claims: a map of key to a string or a list of strings.",
  additionalProperties: {
    anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
  },
} as const;

/** A source or registry named by the path; one that does not exist answers 404. */
export const NAME_PARAM = {
  type: "object",
  properties: { name: pathText("Resource name (a DNS label).") },
} as const;

/** A source or registry the request creates or replaces: the path names it, a DNS label. */
export const NEW_NAME_PARAM = {
  type: "object",
  properties: { name: { ...DNS_LABEL, description: "Resource name (a DNS label)." } },
} as const;

const STATUS_SCHEMA = {
  type: "object",
  description: "Sync status of a source.",
  properties: {
    phase: { type: "string", enum: ["Pending", "Syncing", "Ready", "Failed"] },
    lastAttempt: { type: "string", format: "date-time" },
    lastSuccess: { type: "string", format: "date-time" },
    message: { type: "string" },
    entryCount: { type: "integer" },
    attemptCount: {
      type: "integer",
      description:
        "Sync attempts since the last success (0 once one succeeds), a running one included.",
    },
    contentHash: { type: "string" },
    apiPath: {
      type: "string",
      description:
        "api sources: the path under the endpoint that answered, /v0/servers or /v0.1/servers.",
    },
  },
  additionalProperties: true,
} as const;

export const SOURCE_VIEW = {
  type: "object",
  description:
    "A source: its configuration (the config file's shape), kind, origin (config or api) and sync status.",
  properties: {
    name: { type: "string" },
    kind: { type: "string" },
    origin: { type: "string", enum: ["config", "api"] },
    readOnly: { type: "boolean" },
    config: { type: "object", additionalProperties: true },
    status: STATUS_SCHEMA,
    type: { type: "string", description: "ToolHive's field: the same as sourceType." },
    creationType: { type: "string", enum: ["CONFIG", "API"], description: "ToolHive's origin." },
    sourceType: {
      type: "string",
      enum: ["git", "api", "file", "managed", "kubernetes"],
      description: "ToolHive's kind: a url source is its file source with a url.",
    },
    sourceConfig: {
      type: "object",
      additionalProperties: true,
      description: "The kind's own section of the configuration.",
    },
    filterConfig: { type: "object", additionalProperties: true },
    syncSchedule: { type: "string", description: "syncPolicy.interval as Go writes it (1h0m0s)." },
    claims: { type: "object", additionalProperties: true },
    syncStatus: {
      type: "object",
      description: "The sync status in ToolHive's form.",
      properties: {
        phase: { type: "string", enum: ["pending", "syncing", "complete", "failed"] },
        lastSyncTime: { type: "string", format: "date-time" },
        lastAttempt: { type: "string", format: "date-time" },
        serverCount: { type: "integer" },
        attemptCount: { type: "integer" },
        skillCount: { type: "integer" },
        pluginCount: { type: "integer" },
        message: { type: "string" },
      },
    },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
  },
  additionalProperties: true,
} as const;

export const REGISTRY_VIEW = {
  type: "object",
  properties: {
    name: { type: "string" },
    sources: { type: "array", items: { type: "string" } },
    claims: { type: "object", additionalProperties: true },
    origin: { type: "string", enum: ["config", "api"] },
    readOnly: { type: "boolean" },
    creationType: { type: "string", enum: ["CONFIG", "API"], description: "ToolHive's origin." },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
  },
  additionalProperties: true,
} as const;

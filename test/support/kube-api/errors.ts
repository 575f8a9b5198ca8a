// Kubernetes `Status` failure bodies, with the codes, reasons, messages and details the real API
// server uses.

export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A resource as errors name it: `configmaps` or `deployments.apps`. */
export interface ResourceRef {
  group: string;
  plural: string;
  kind: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toStatus(): Record<string, unknown> {
    const status: Record<string, unknown> = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
    };
    if (this.details !== undefined) status.details = this.details;
    status.code = this.code;
    return status;
  }
}

export function qualified(ref: ResourceRef): string {
  return ref.group === "" ? ref.plural : `${ref.plural}.${ref.group}`;
}

function refDetails(ref: ResourceRef, name: string): StatusDetails {
  return ref.group === ""
    ? { name, kind: ref.plural }
    : { name, group: ref.group, kind: ref.plural };
}

export function notFound(ref: ResourceRef, name: string): ApiError {
  return new ApiError(
    404,
    "NotFound",
    `${qualified(ref)} "${name}" not found`,
    refDetails(ref, name),
  );
}

export function namespaceNotFound(namespace: string): ApiError {
  return new ApiError(404, "NotFound", `namespaces "${namespace}" not found`, {
    name: namespace,
    kind: "namespaces",
  });
}

export function resourceNotFound(): ApiError {
  return new ApiError(404, "NotFound", "the server could not find the requested resource", {});
}

export function alreadyExists(ref: ResourceRef, name: string): ApiError {
  return new ApiError(
    409,
    "AlreadyExists",
    `${qualified(ref)} "${name}" already exists`,
    refDetails(ref, name),
  );
}

export function conflict(ref: ResourceRef, name: string, why: string): ApiError {
  return new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(ref)} "${name}": ${why}`,
    refDetails(ref, name),
  );
}

export const MODIFIED =
  "the object has been modified; please apply your changes to the latest version and try again";

/** 422 with one cause per field error; the message lists them as the API server does. */
export function invalid(ref: ResourceRef, name: string, causes: StatusCause[]): ApiError {
  const kind = ref.group === "" ? ref.kind : `${ref.kind}.${ref.group}`;
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const list = parts.length === 1 ? parts[0] : `[${parts.join(", ")}]`;
  const details: StatusDetails = { name, kind: ref.kind, causes };
  if (ref.group !== "") details.group = ref.group;
  return new ApiError(422, "Invalid", `${kind} "${name}" is invalid: ${list}`, details);
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, "BadRequest", message);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
    {},
  );
}

export function unsupportedMediaType(contentType: string): ApiError {
  return new ApiError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/apply-patch+yaml, application/merge-patch+json, application/json-patch+json, application/strategic-merge-patch+json (got ${contentType})`,
  );
}

export function forbidden(ref: ResourceRef, name: string, why: string): ApiError {
  return new ApiError(
    403,
    "Forbidden",
    `${qualified(ref)} "${name}" is forbidden: ${why}`,
    refDetails(ref, name),
  );
}

export function unauthorized(): ApiError {
  return new ApiError(401, "Unauthorized", "Unauthorized");
}

export function expired(message: string): ApiError {
  return new ApiError(410, "Expired", message);
}

/** The failure an injected fault returns for `code`. */
export function injected(code: number, message?: string, retryAfterSeconds?: number): ApiError {
  const reasons: Record<number, [string, string]> = {
    400: ["BadRequest", "injected bad request"],
    401: ["Unauthorized", "Unauthorized"],
    403: ["Forbidden", "injected forbidden"],
    404: ["NotFound", "injected not found"],
    409: ["Conflict", `Operation cannot be fulfilled: ${MODIFIED}`],
    410: ["Expired", "injected expired"],
    422: ["Invalid", "injected invalid"],
    429: [
      "TooManyRequests",
      "the server has received too many requests and has asked us to try again later",
    ],
    500: ["InternalError", "Internal error occurred: injected fault"],
    503: ["ServiceUnavailable", "the server is currently unable to handle the request"],
    504: ["Timeout", "the server was unable to return a response in the time allotted"],
  };
  const [reason, text] = reasons[code] ?? ["InternalError", `injected status ${code}`];
  const headers: Record<string, string> = {};
  let details: StatusDetails | undefined;
  if (code === 429 || code === 503 || retryAfterSeconds !== undefined) {
    const seconds = retryAfterSeconds ?? 1;
    headers["Retry-After"] = String(seconds);
    details = { retryAfterSeconds: seconds };
  }
  return new ApiError(code, reason, message ?? text, details, headers);
}

// RFC 9457 problem details built from the error catalogue: every error answer of the registry
// server is `application/problem+json` with type, title, status, detail and our stable code.
import type { FastifyReply } from "fastify";
import { ERROR_CODES, McpfleetError, type ErrorCode } from "../../errors.js";

export const PROBLEM_TYPE_BASE = "https://mcpfleet.dev/problems/";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  instance?: string;
  /** One item per offending field of the request (as the official registry answers). */
  errors?: FieldError[];
}

/** A field of a request body that breaks a rule: where (body.packages[0].version) and why. */
export interface FieldError {
  location: string;
  message: string;
}

/** A request refused for the fields listed: the problem names each one. */
export class FieldsError extends McpfleetError {
  constructor(
    code: ErrorCode,
    detail: string,
    readonly errors: FieldError[],
  ) {
    super(code, detail);
  }
}

export function problemOf(
  code: ErrorCode,
  detail: string,
  instance?: string,
  errors?: FieldError[],
): Problem {
  const entry = ERROR_CODES[code];
  const p: Problem = {
    type: `${PROBLEM_TYPE_BASE}${code.toLowerCase().replace(/^err_/, "").replace(/_/g, "-")}`,
    title: entry.title,
    status: entry.status,
    detail,
    code,
  };
  if (instance !== undefined) p.instance = instance;
  if (errors !== undefined) p.errors = errors;
  return p;
}

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply
    .code(problem.status)
    .header("content-type", "application/problem+json; charset=utf-8")
    .header("cache-control", "no-store")
    .send(JSON.stringify(problem));
}

export function fail(code: ErrorCode, detail: string): never {
  throw new McpfleetError(code, detail);
}

/** JSON Schema of a problem body (for the OpenAPI document). */
export const PROBLEM_SCHEMA = {
  $id: "Problem",
  type: "object",
  description: "RFC 9457 problem details with the server's stable error code.",
  required: ["type", "title", "status", "detail", "code"],
  properties: {
    type: { type: "string", format: "uri" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: { type: "string", enum: Object.keys(ERROR_CODES) },
    instance: { type: "string" },
    errors: {
      type: "array",
      description: "The offending fields of the request, when it names some.",
      items: {
        type: "object",
        required: ["location", "message"],
        properties: { location: { type: "string" }, message: { type: "string" } },
      },
    },
  },
  additionalProperties: true,
} as const;

/** Seconds a client should wait before retrying while the store is unavailable. */
export const RETRY_AFTER_SECONDS = "5";

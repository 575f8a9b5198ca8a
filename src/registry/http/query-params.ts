// Query parameters of the API with their real types: Fastify validates and coerces them from
// these schemas before a handler runs, and the OpenAPI document shows them as they are. A
// refused value answers with the sentence this module gives for its parameter.
import type { FastifyError } from "fastify";

/** An RFC 3339 date-time exactly (the `date-time` format also takes a space or `+0200`). */
const RFC3339 = "^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?([Zz]|[+-]\\d{2}:\\d{2})$";

export const LIMIT = {
  type: "integer",
  minimum: 1,
  maximum: 100,
  default: 30,
  description: "Page size, 1 to 100 (default 30).",
} as const;

export const UPDATED_SINCE = {
  type: "string",
  format: "date-time",
  pattern: RFC3339,
  description: "RFC 3339; entries updated after it.",
} as const;

export const INCLUDE_DELETED = {
  type: "boolean",
  default: false,
  description: "`true`: deleted versions too (hidden by default).",
} as const;

export const SEARCH = {
  type: "string",
  maxLength: 200,
  description: "Case-insensitive substring of name, title or description.",
} as const;

export const VERSION_FILTER = {
  type: "string",
  minLength: 1,
  maxLength: 255,
  description: "`latest`: only each server's latest version; else only this exact version.",
} as const;

export const WAIT = {
  type: "boolean",
  default: false,
  description: "`true`: answer when the sync has finished, with its outcome.",
} as const;

/** What a refused parameter answers, and whether the answer quotes the value sent. */
const REFUSALS: Record<string, { says: string; quote: boolean }> = {
  limit: { says: "limit must be an integer from 1 to 100", quote: true },
  updated_since: {
    says: "updated_since must be an RFC 3339 date-time such as 2025-01-31T12:00:00Z",
    quote: true,
  },
  include_deleted: { says: "include_deleted must be true or false", quote: true },
  wait: { says: "wait must be true or false", quote: true },
  search: { says: "search is limited to 200 characters", quote: false },
  version: { says: "version must be `latest` or one version of 1 to 255 characters", quote: false },
};

/**
 * The answer for a query string its schema refused, when the parameter is one of ours:
 * undefined for any other validation failure.
 */
export function queryRefusal(err: FastifyError, query: unknown): string | undefined {
  if (err.validationContext !== "querystring") return undefined;
  const param = err.validation?.[0]?.instancePath.replace(/^\//, "") ?? "";
  const refusal = Object.hasOwn(REFUSALS, param) ? REFUSALS[param] : undefined;
  if (refusal === undefined) return undefined;
  if (!refusal.quote) return refusal.says;
  const sent = (query as Record<string, unknown> | undefined)?.[param];
  return `${refusal.says}, got "${String(sent)}"`;
}

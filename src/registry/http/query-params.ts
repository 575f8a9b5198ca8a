// Query parameters of the API with their real types: Fastify validates and coerces them from
// these schemas before a handler runs, and the OpenAPI document shows them as they are. A
// refused value answers with the sentence this module gives for its parameter.
import type { FastifyError } from "fastify";
import type { ErrorCode } from "../../errors.js";

/**
 * An RFC 3339 date-time exactly (the `date-time` format also takes a space or `+0200`), with its
 * fields in range; a leap second (:60) is refused, as no time of the store is one.
 */
const RFC3339 =
  "^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])[Tt]([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d+)?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)$";

/** Free text of a parameter: the URL may not hold a NUL (refused before routing). */
const NO_NUL = "^[^\\u0000]*$";

export const CURSOR = {
  type: "string",
  format: "mcpfleet-cursor",
  pattern: "^[A-Za-z0-9_-]+$",
  description:
    "metadata.nextCursor of the previous page, as given: any other value is refused (400, ERR_INVALID_CURSOR).",
} as const;

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
  pattern: NO_NUL,
  description: "Case-insensitive substring of name, title or description.",
} as const;

export const VERSION_FILTER = {
  type: "string",
  minLength: 1,
  maxLength: 255,
  pattern: NO_NUL,
  description: "`latest`: only each server's latest version; else only this exact version.",
} as const;

export const WAIT = {
  type: "boolean",
  default: false,
  description: "`true`: answer when the sync has finished, with its outcome.",
} as const;

/** What a refused parameter answers, whether it quotes the value sent, and its own code. */
const REFUSALS: Record<string, { says: string; quote: boolean; code?: ErrorCode }> = {
  cursor: {
    says: "cursor is not one this server issued; start again without it",
    quote: false,
    code: "ERR_INVALID_CURSOR",
  },
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

/** The same for path parameters. */
const PATH_REFUSALS: typeof REFUSALS = {
  type: { says: "only server entries are kept here (not skills or plugins)", quote: true },
};

/**
 * The answer for a query string or path its schema refused, when the parameter is one of ours (its
 * sentence, and its code where it has one of its own): undefined for any other failure.
 */
export function parameterRefusal(
  err: FastifyError,
  values: unknown,
): { detail: string; code?: ErrorCode } | undefined {
  const refusals =
    err.validationContext === "querystring"
      ? REFUSALS
      : err.validationContext === "params"
        ? PATH_REFUSALS
        : {};
  const param = err.validation?.[0]?.instancePath.replace(/^\//, "") ?? "";
  const refusal = Object.hasOwn(refusals, param) ? refusals[param] : undefined;
  if (refusal === undefined) return undefined;
  const code = refusal.code !== undefined ? { code: refusal.code } : {};
  if (!refusal.quote) return { detail: refusal.says, ...code };
  const sent = (values as Record<string, unknown> | undefined)?.[param];
  return { detail: `${refusal.says}, got "${String(sent)}"`, ...code };
}

// Every failure of a request as a problem+json answer: our own errors with their catalogue
// code, Fastify's (validation, body size, media type) mapped onto the catalogue, and anything
// else a 500, or a 503 when the store turns out to be down.
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { isMcpfleetError, type ErrorCode, type McpfleetError } from "../../errors.js";
import type { Store } from "../store/store.js";
import {
  type FieldError,
  FieldsError,
  problemOf,
  RETRY_AFTER_SECONDS,
  sendProblem,
} from "./problem.js";
import { parameterRefusal } from "./query-params.js";
import { serverWide } from "./server-wide.js";

export interface ErrorHandlerOptions {
  store: Store;
  /** Largest request body in bytes (named in the 413 answer). */
  bodyLimit: number;
}

function fastifyErrorCode(err: FastifyError): ErrorCode {
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return "ERR_PAYLOAD_TOO_LARGE";
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return err.statusCode === 415 ? "ERR_UNSUPPORTED_MEDIA_TYPE" : "ERR_BAD_REQUEST";
    default:
      break;
  }
  if (err.validation !== undefined) {
    return err.validationContext === "body" ? "ERR_BAD_REQUEST" : "ERR_INVALID_PARAMETER";
  }
  if (err.statusCode === 413) return "ERR_PAYLOAD_TOO_LARGE";
  if (err.statusCode === 415) return "ERR_UNSUPPORTED_MEDIA_TYPE";
  if (err.statusCode === 408) return "ERR_REQUEST_TIMEOUT";
  if (err.statusCode === 405) return "ERR_METHOD_NOT_ALLOWED";
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return "ERR_BAD_REQUEST";
  }
  return "ERR_INTERNAL";
}

/**
 * A PostgreSQL error caused by the data of a request (SQLSTATE class 22, data exception: a
 * value out of range, a character the database cannot store). Input checks should catch these
 * first; this keeps one that slips through a client error rather than a 500.
 */
function isDataException(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && /^22[0-9A-Z]{3}$/.test(code);
}

/** The fields a request schema refused, named as the publish rules name them. */
function fieldErrorsOf(err: FastifyError): FieldError[] | undefined {
  if (err.validation === undefined) return undefined;
  const where = err.validationContext ?? "body";
  return err.validation.map((v) => ({
    location: `${where}${v.instancePath.replace(/\/(\d+)(?=\/|$)/g, "[$1]").replace(/\//g, ".")}`,
    message: v.message ?? v.keyword,
  }));
}

function sendOwnError(err: McpfleetError, req: FastifyRequest, reply: FastifyReply, at?: string) {
  if (err.status >= 500) req.log.error({ err }, "request failed");
  if (err.status === 503) reply.header("retry-after", RETRY_AFTER_SECONDS);
  const fields = err instanceof FieldsError ? err.errors : undefined;
  return sendProblem(reply, problemOf(err.code, err.message, at, fields));
}

/** A failure that is not the client's: 400 for a value the store refused, 503, else 500. */
async function sendServerFailure(
  err: FastifyError,
  store: Store,
  req: FastifyRequest,
  reply: FastifyReply,
  at?: string,
) {
  if (isDataException(err)) {
    req.log.warn({ err }, "the store refused a value of the request");
    return sendProblem(
      reply,
      problemOf("ERR_BAD_REQUEST", "the request holds a value the store cannot keep", at),
    );
  }
  const storeUp = await store.ping().then(
    () => true,
    () => false,
  );
  if (!storeUp) {
    req.log.error({ err }, "request failed: the store is unavailable");
    reply.header("retry-after", RETRY_AFTER_SECONDS);
    return sendProblem(
      reply,
      problemOf("ERR_STORE_UNAVAILABLE", "the store is unavailable; retry later", at),
    );
  }
  req.log.error({ err }, "request failed");
  return sendProblem(
    reply,
    problemOf("ERR_INTERNAL", "the server failed to answer; see its log", at),
  );
}

/** What a client error of Fastify's says: its own message, or ours where that is clearer. */
function clientErrorDetail(err: FastifyError, code: ErrorCode, bodyLimit: number): string {
  if (code === "ERR_PAYLOAD_TOO_LARGE") return `the request body exceeds ${bodyLimit} bytes`;
  if (code === "ERR_UNSUPPORTED_MEDIA_TYPE") return "send the body as application/json";
  if (code === "ERR_BAD_REQUEST" && err instanceof SyntaxError) {
    return `malformed JSON body: ${err.message}`;
  }
  return err.message;
}

export const errorHandler = serverWide<ErrorHandlerOptions>(async (app, opts) => {
  app.setErrorHandler(async (err: FastifyError, req, reply) => {
    const instance = req.url.split("?")[0];
    if (isMcpfleetError(err)) return sendOwnError(err, req, reply, instance);
    const code = fastifyErrorCode(err);
    if (code === "ERR_INTERNAL") return sendServerFailure(err, opts.store, req, reply, instance);
    // A refused parameter answers in its own words, like the checks the routes make.
    const refusal = parameterRefusal(
      err,
      err.validationContext === "params" ? req.params : req.query,
    );
    if (refusal !== undefined) {
      return sendProblem(reply, problemOf(refusal.code ?? code, refusal.detail, instance));
    }
    const detail = clientErrorDetail(err, code, opts.bodyLimit);
    return sendProblem(reply, problemOf(code, detail, instance, fieldErrorsOf(err)));
  });
  return Promise.resolve();
});

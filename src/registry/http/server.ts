// The registry server's HTTP side: Fastify with the consumer, publish and admin routes, the
// public probes, /openapi.json and /metrics, and problem+json errors for every failure.
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
} from "fastify";
import swagger from "@fastify/swagger";
import type { Logger } from "pino";
import { isMcpfleetError, type ErrorCode } from "../../errors.js";
import { projectVersion } from "../../project.js";
import type { SyncScheduler } from "../sources/scheduler.js";
import type { Store } from "../store/store.js";
import { registerAuthRoutes } from "../auth/routes.js";
import { registerAdmin } from "./admin.js";
import type { Authorizer } from "./auth.js";
import { registerConsumer } from "./consumer.js";
import type { RegistryMetrics } from "./metrics.js";
import { PROBLEM_SCHEMA, problemOf, sendProblem } from "./problem.js";
import { ViewCache } from "./views.js";

export interface HttpOptions {
  store: Store;
  scheduler: SyncScheduler;
  authorizer: Authorizer;
  metrics: RegistryMetrics;
  log: Logger;
  maxMetaSize: number;
  /** Largest request body in bytes. */
  bodyLimit: number;
  /** Time limit of one request in milliseconds (0: none). */
  requestTimeoutMs: number;
}

// The spec's public paths. /metrics is not among them: in oauth mode it needs a token unless
// auth.publicPaths lists it (as scrapers usually need).
const ALWAYS_PUBLIC = ["/health", "/readiness", "/version", "/openapi.json"];

/**
 * Whether a request path is reachable without authentication. Only canonical paths can be
 * public: a path with percent-encoding, empty or dot segments (`%2e`, `//`, `/./`, `/../`) is
 * always authenticated, so no spelling of a protected route slips through as a public one.
 */
function isPublic(path: string, extra: string[]): boolean {
  if (path.includes("%") || path.includes("//") || /\/\.\.?(\/|$)/.test(path)) return false;
  if (ALWAYS_PUBLIC.includes(path) || path.startsWith("/.well-known/")) return true;
  return extra.some(
    (p) => p === "*" || (p.endsWith("*") ? path.startsWith(p.slice(0, -1)) : p === path),
  );
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

export async function buildHttpServer(opts: HttpOptions): Promise<FastifyInstance> {
  const logger: FastifyBaseLogger = opts.log;
  const app: FastifyInstance = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: opts.bodyLimit,
    requestTimeout: opts.requestTimeoutMs,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
  });
  app.decorateRequest("principal", null as never);
  app.addSchema(PROBLEM_SCHEMA);

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "mcpfleet registry server",
        version: projectVersion(),
        description:
          "Catalog of MCP server versions. The consumer API follows the official MCP registry v0.1 shapes and is served under /{registry}/v0.1 and /registry/{registry}/v0.1. Every error is application/problem+json with a stable `code`.",
      },
      tags: [
        { name: "consumer", description: "Reading a registry" },
        { name: "publish", description: "Publishing and deleting entries of a managed source" },
        { name: "admin", description: "Managing sources and registries" },
        { name: "public", description: "Probes, version, metrics and this document" },
      ],
    },
    refResolver: {
      buildLocalReference: (json, _base, _frag, i) =>
        typeof json.$id === "string" ? json.$id : `def-${i}`,
    },
  });

  const views = new ViewCache(opts.store);
  const extraPublic = opts.authorizer.publicPaths();

  app.addHook("onRequest", async (req) => {
    const path = req.url.split("?")[0] ?? "/";
    req.principal = isPublic(path, extraPublic)
      ? { anonymous: true, claims: {} }
      : await opts.authorizer.authenticate(req);
  });

  // While shutting down, answers close their connections so keep-alive clients move on and
  // close() does not wait for idle keep-alive sockets to time out.
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  app.addHook("onSend", async (_req, reply, payload) => {
    if (closing) reply.header("connection", "close");
    return payload;
  });

  app.addHook("onResponse", async (req, reply) => {
    const route = req.routeOptions.url ?? "unmatched";
    opts.metrics.requests.inc({ method: req.method, route, status: String(reply.statusCode) });
    opts.metrics.requestSeconds.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (isMcpfleetError(err)) {
      if (err.status >= 500) req.log.error({ err }, "request failed");
      return sendProblem(reply, problemOf(err.code, err.message, req.url.split("?")[0]));
    }
    const code = fastifyErrorCode(err);
    if (code === "ERR_INTERNAL") {
      req.log.error({ err }, "request failed");
      return sendProblem(
        reply,
        problemOf(code, "the server failed to answer; see its log", req.url),
      );
    }
    let detail = err.message;
    if (code === "ERR_PAYLOAD_TOO_LARGE")
      detail = `the request body exceeds ${opts.bodyLimit} bytes`;
    if (code === "ERR_UNSUPPORTED_MEDIA_TYPE") detail = "send the body as application/json";
    if (code === "ERR_BAD_REQUEST" && err instanceof SyntaxError)
      detail = `malformed JSON body: ${err.message}`;
    return sendProblem(reply, problemOf(code, detail, req.url));
  });

  app.setNotFoundHandler((req, reply) =>
    sendProblem(
      reply,
      problemOf(
        "ERR_NOT_FOUND",
        `no route for ${req.method} ${req.url.split("?")[0] ?? ""}`,
        req.url,
      ),
    ),
  );

  const pub = { tags: ["public"] };
  app.get(
    "/health",
    {
      schema: {
        ...pub,
        summary: "Liveness probe",
        response: {
          200: { type: "object", properties: { status: { type: "string", const: "ok" } } },
        },
      },
    },
    () => Promise.resolve({ status: "ok" }),
  );
  app.get(
    "/readiness",
    {
      schema: {
        ...pub,
        summary: "Readiness probe",
        description:
          "200 when the store answers and every synced source has completed its first sync attempt; else 503.",
        response: {
          200: { type: "object", properties: { status: { type: "string" } } },
          503: {
            type: "object",
            properties: {
              status: { type: "string" },
              reason: { type: "string" },
              pending: { type: "array", items: { type: "string" } },
            },
          },
        },
      },
    },
    async (_req, reply) => {
      try {
        await opts.store.ping();
      } catch (err) {
        return reply
          .code(503)
          .send({ status: "not ready", reason: `store unreachable: ${(err as Error).message}` });
      }
      if (!opts.scheduler.allAttempted()) {
        return reply.code(503).send({
          status: "not ready",
          reason: "first sync pending",
          pending: opts.scheduler.pending(),
        });
      }
      return { status: "ready" };
    },
  );
  app.get(
    "/version",
    {
      schema: {
        ...pub,
        summary: "Version information",
        response: {
          200: {
            type: "object",
            properties: {
              name: { type: "string" },
              version: { type: "string" },
              node: { type: "string" },
              store: { type: "string" },
            },
          },
        },
      },
    },
    () =>
      Promise.resolve({
        name: "mcpfleet-registry",
        version: projectVersion(),
        node: process.version,
        store: opts.store.driver,
      }),
  );
  app.get(
    "/metrics",
    {
      schema: {
        ...pub,
        summary: "Prometheus metrics",
        produces: ["text/plain"],
        response: { 200: { type: "string" } },
      },
    },
    async (_req, reply) => {
      try {
        const status = await opts.store.listStatus();
        opts.metrics.entries.reset();
        for (const [source, s] of status) opts.metrics.entries.set({ source }, s.entryCount);
      } catch {
        // The store is down: serve the other metrics anyway.
      }
      return reply
        .header("content-type", opts.metrics.registry.contentType)
        .send(await opts.metrics.registry.metrics());
    },
  );
  let openapi: string | undefined;
  app.get(
    "/openapi.json",
    {
      schema: {
        ...pub,
        summary: "This API's OpenAPI 3.1 description",
        response: { 200: { type: "object", additionalProperties: true } },
      },
    },
    async (_req, reply) => {
      openapi ??= JSON.stringify(app.swagger());
      return reply
        .header("content-type", "application/json; charset=utf-8")
        .header("cache-control", "public, max-age=300")
        .send(openapi);
    },
  );

  registerAuthRoutes(app, opts.authorizer);
  registerConsumer(app, {
    store: opts.store,
    views,
    authorizer: opts.authorizer,
    maxMetaSize: opts.maxMetaSize,
  });
  registerAdmin(app, { store: opts.store, scheduler: opts.scheduler, authorizer: opts.authorizer });
  return app;
}

// The registry server's HTTP side: Fastify with the consumer, publish and admin routes, the
// public probes, /openapi.json and /metrics, and problem+json errors for every failure.
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
} from "fastify";
import type { IncomingMessage } from "node:http";
import swagger from "@fastify/swagger";
import type { Logger } from "pino";
import { isMcpfleetError, McpfleetError, type ErrorCode } from "../../errors.js";
import { projectVersion } from "../../project.js";
import { jsonLimitProblem } from "../formats/bounds.js";
import type { LocationPolicy } from "../sources/location.js";
import type { SyncScheduler } from "../sources/scheduler.js";
import type { Store } from "../store/store.js";
import { registerAuthRoutes } from "../auth/routes.js";
import { registryRoutes } from "./admin-registries.js";
import { sourceRoutes } from "./admin-sources.js";
import type { Authorizer } from "./auth.js";
import { consumerRoutes } from "./consumer.js";
import { entryRoutes } from "./entries.js";
import type { RouteContext } from "./context.js";
import type { RegistryMetrics } from "./metrics.js";
import { publicRoutes } from "./public.js";
import { publishRoutes } from "./publish.js";
import {
  type FieldError,
  FieldsError,
  PROBLEM_SCHEMA,
  problemOf,
  RETRY_AFTER_SECONDS,
  sendProblem,
} from "./problem.js";
import { ViewCache } from "./views.js";
import { UI_PUBLIC_PATHS, uiRoutes } from "../ui/plugin.js";
import type { UiSettings } from "../ui/config.js";

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
  /**
   * How long /readiness waits for the first sync of every source, in milliseconds: a source
   * that never finishes (a slow or hostile upstream) must not keep the server out of service.
   */
  firstSyncDeadlineMs?: number;
  /** Where sources created through the admin API may read (config `adminSources`). */
  locations: { policy: LocationPolicy; baseDir: string };
  /** The web catalog at /ui/ (config `ui`; on when absent). */
  ui?: UiSettings;
  /**
   * The registry also served at the root (`/v0.1/...` and `/v0/...`): config `defaultRegistry`,
   * or the configuration's only registry.
   */
  defaultRegistry?: string;
}

/** Longest path parameter (a server name is at most 200 characters, a version 255). */
const MAX_PARAM_LENGTH = 500;

// The spec's public paths. /metrics is not among them: in oauth mode it needs a token unless
// auth.publicPaths lists it (as scrapers usually need).
const ALWAYS_PUBLIC = [
  "/health",
  "/v0.1/health",
  "/v0/health",
  "/readiness",
  "/version",
  "/openapi.json",
];

/** A route's path as a pattern of request paths: a parameter is one segment, `*` the rest. */
function routePattern(url: string): RegExp {
  const segs = url
    .split("/")
    .map((seg) =>
      seg === "*"
        ? ".*"
        : seg.startsWith(":")
          ? "[^/]+"
          : seg.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
    );
  return new RegExp(`^${segs.join("/")}$`);
}

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

/** Most bytes of a refused body read and dropped so that its sender can read the answer. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

/**
 * A body refused before it was read (too large, or not JSON) is still on its way. Fastify asks
 * for the connection to close, which resets it under a client still sending: the client gets
 * EPIPE or ECONNRESET instead of the answer. Reading the rest and dropping it (up to
 * DRAIN_LIMIT, within the request timeout) lets the answer arrive and keeps the connection.
 */
function drainRefusedBody(raw: IncomingMessage, reply: FastifyReply): void {
  const declared = Number(raw.headers["content-length"]);
  if (Number.isFinite(declared) && declared > DRAIN_LIMIT) return;
  reply.removeHeader("connection");
  let seen = 0;
  raw.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_LIMIT) raw.socket.destroy();
  });
  raw.resume();
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
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // URLs the router cannot take apart (bad percent-encoding, an over-long parameter) get a
    // problem like every other client error, not Fastify's own body.
    frameworkErrors: (err, _req, reply) => {
      void sendProblem(
        reply,
        problemOf(
          "ERR_INVALID_PARAMETER",
          err.code === "FST_ERR_MAX_PARAM_LENGTH"
            ? `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`
            : "the URL is not validly percent-encoded",
        ),
      );
    },
  });
  app.decorateRequest("principal", null as never);
  // Every route's path and methods, so a known path asked with another method answers 405 with
  // `Allow` (RFC 9110) rather than 404. Only the path as routed: with a trailing slash or an
  // empty parameter (`/v1/sources/`) it is still 404, as the route the client meant says.
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    routes.push({ pattern: routePattern(route.url), methods });
  });
  const allowedMethods = (path: string): string[] => {
    const out = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) out.add(m);
    return [...out].sort();
  };
  // Bodies are JSON only: without this, Fastify's text/plain parser would hand a string to the
  // routes, which then answer 400 instead of 415.
  app.removeContentTypeParser("text/plain");
  app.addSchema(PROBLEM_SCHEMA);

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "mcpfleet registry server",
        version: projectVersion(),
        description:
          "Catalog of MCP server versions. The consumer API follows the official MCP registry v0.1 API (with the lifecycle status operations of its later draft) and is served under /{registry}/v0.1 and /registry/{registry}/v0.1, and at /v0.1 for the configured default registry. Every error is application/problem+json with a stable `code`.",
      },
      tags: [
        { name: "consumer", description: "Reading a registry" },
        { name: "publish", description: "Publishing and deleting entries of a managed source" },
        { name: "admin", description: "Managing sources and registries" },
        {
          name: "entries",
          description: "ToolHive's /v1 entry API: publishing, claims and entry listings",
        },
        { name: "public", description: "Probes, version, metrics and this document" },
      ],
    },
    refResolver: {
      buildLocalReference: (json, _base, _frag, i) =>
        typeof json.$id === "string" ? json.$id : `def-${i}`,
    },
  });

  // The catalog signs people in itself (session cookie), so the API's token check skips it.
  const extraPublic = [
    ...opts.authorizer.publicPaths(),
    ...(opts.ui?.enabled === false ? [] : UI_PUBLIC_PATHS),
  ];

  app.addHook("onRequest", async (req) => {
    const path = req.url.split("?")[0] ?? "/";
    req.principal = isPublic(path, extraPublic)
      ? { anonymous: true, claims: {} }
      : await opts.authorizer.authenticate(req);
    // The store cannot hold U+0000, and no name, version or parameter contains one.
    if (/%00/i.test(req.url) || req.url.includes("\u0000")) {
      throw new McpfleetError("ERR_INVALID_PARAMETER", "the request URL contains a NUL character");
    }
  });

  // Structural limits of every body before any route looks at it: authentication has run (an
  // anonymous caller of a protected route never gets here) and the walk is linear in the body.
  app.addHook("preValidation", (req, _reply, done) => {
    const problem =
      req.body === undefined || req.body === null ? undefined : jsonLimitProblem(req.body);
    done(
      problem === undefined
        ? undefined
        : new McpfleetError("ERR_INPUT_LIMIT", `request body: ${problem}`),
    );
  });

  // While shutting down, answers close their connections so keep-alive clients move on and
  // close() does not wait for idle keep-alive sockets to time out.
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  app.addHook("onSend", async (req, reply, payload) => {
    if (closing) reply.header("connection", "close");
    else if ((reply.statusCode === 413 || reply.statusCode === 415) && !req.raw.complete) {
      drainRefusedBody(req.raw, reply);
    }
    return payload;
  });

  app.addHook("onResponse", async (req, reply) => {
    const route = req.routeOptions.url ?? "unmatched";
    opts.metrics.requests.inc({ method: req.method, route, status: String(reply.statusCode) });
    opts.metrics.requestSeconds.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });

  app.setErrorHandler(async (err: FastifyError, req, reply) => {
    const instance = req.url.split("?")[0];
    if (isMcpfleetError(err)) {
      if (err.status >= 500) req.log.error({ err }, "request failed");
      if (err.status === 503) reply.header("retry-after", RETRY_AFTER_SECONDS);
      const fields = err instanceof FieldsError ? err.errors : undefined;
      return sendProblem(reply, problemOf(err.code, err.message, instance, fields));
    }
    const code = fastifyErrorCode(err);
    if (code === "ERR_INTERNAL" && isDataException(err)) {
      req.log.warn({ err }, "the store refused a value of the request");
      return sendProblem(
        reply,
        problemOf("ERR_BAD_REQUEST", "the request holds a value the store cannot keep", instance),
      );
    }
    if (
      code === "ERR_INTERNAL" &&
      !(await opts.store.ping().then(
        () => true,
        () => false,
      ))
    ) {
      req.log.error({ err }, "request failed: the store is unavailable");
      reply.header("retry-after", RETRY_AFTER_SECONDS);
      return sendProblem(
        reply,
        problemOf("ERR_STORE_UNAVAILABLE", "the store is unavailable; retry later", instance),
      );
    }
    if (code === "ERR_INTERNAL") {
      req.log.error({ err }, "request failed");
      return sendProblem(
        reply,
        problemOf(code, "the server failed to answer; see its log", instance),
      );
    }
    let detail = err.message;
    if (code === "ERR_PAYLOAD_TOO_LARGE")
      detail = `the request body exceeds ${opts.bodyLimit} bytes`;
    if (code === "ERR_UNSUPPORTED_MEDIA_TYPE") detail = "send the body as application/json";
    if (code === "ERR_BAD_REQUEST" && err instanceof SyntaxError)
      detail = `malformed JSON body: ${err.message}`;
    return sendProblem(reply, problemOf(code, detail, instance, fieldErrorsOf(err)));
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split("?")[0] ?? "";
    const allow = allowedMethods(path);
    if (allow.length > 0) {
      return sendProblem(
        reply.header("allow", allow.join(", ")),
        problemOf(
          "ERR_METHOD_NOT_ALLOWED",
          `${path} answers ${allow.join(", ")}, not ${req.method}`,
          path,
        ),
      );
    }
    return sendProblem(
      reply,
      problemOf("ERR_NOT_FOUND", `no route for ${req.method} ${path}`, path),
    );
  });

  await app.register(publicRoutes, {
    store: opts.store,
    scheduler: opts.scheduler,
    metrics: opts.metrics,
    ...(opts.firstSyncDeadlineMs !== undefined
      ? { firstSyncDeadlineMs: opts.firstSyncDeadlineMs }
      : {}),
  });
  registerAuthRoutes(app, opts.authorizer);
  const ctx: RouteContext = {
    store: opts.store,
    views: new ViewCache(opts.store),
    scheduler: opts.scheduler,
    authorizer: opts.authorizer,
    maxMetaSize: opts.maxMetaSize,
    locations: opts.locations,
  };
  // Each registry's API under both spellings of its prefix, and under /v0 as well as /v0.1 (the
  // official registry serves both, alike); only the first is in the OpenAPI document.
  for (const [prefix, hide] of [
    ["/:registry/v0.1", false],
    ["/registry/:registry/v0.1", true],
    ["/:registry/v0", true],
    ["/registry/:registry/v0", true],
  ] as const) {
    await app.register(consumerRoutes, { ...ctx, hide, prefix });
    await app.register(publishRoutes, { ...ctx, hide, prefix });
  }
  if (opts.defaultRegistry !== undefined) {
    for (const [prefix, hide] of [
      ["/v0.1", false],
      ["/v0", true],
    ] as const) {
      const root = { ...ctx, hide, prefix, registry: opts.defaultRegistry };
      await app.register(consumerRoutes, root);
      await app.register(publishRoutes, root);
    }
  }
  await app.register(sourceRoutes, ctx);
  await app.register(registryRoutes, ctx);
  await app.register(entryRoutes, ctx);
  if (opts.ui?.enabled !== false) {
    await app.register(uiRoutes, { ...ctx, ui: opts.ui ?? { enabled: true } });
  }
  return app;
}

// The public routes: liveness and readiness probes, version, Prometheus metrics and the
// OpenAPI document of the whole server.
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { projectVersion } from "../../project.js";
import type { SyncScheduler } from "../sources/scheduler.js";
import type { Store } from "../store/store.js";
import type { RegistryMetrics } from "./metrics.js";
import type { OpenApiDocument } from "./openapi.js";
import { RETRY_AFTER_SECONDS } from "./problem.js";
import { problems } from "./schemas.js";

export interface PublicOptions {
  store: Store;
  scheduler: SyncScheduler;
  metrics: RegistryMetrics;
  openApi: OpenApiDocument;
  /** How long /readiness waits for the first sync of every source, in milliseconds. */
  firstSyncDeadlineMs?: number;
}

const pub = { tags: ["public"] };

const OK = { type: "object", properties: { status: { type: "string", const: "ok" } } };

// A public route refuses only a URL it cannot take (a NUL, bad percent-encoding) with 400, and
// any request while the server shuts down with 503.
const BAD_URL = problems(400, 503);

const HEALTH_SCHEMA = { ...pub, summary: "Liveness probe", response: { 200: OK, ...BAD_URL } };

const OFFICIAL_HEALTH_SCHEMA = {
  ...pub,
  summary: "Liveness probe at the official registry's path",
  response: { 200: OK, ...BAD_URL },
};

const READINESS_SCHEMA = {
  ...pub,
  summary: "Readiness probe",
  description:
    "200 when the store answers and the synced sources have completed their first sync attempt after start-up (or the first-sync deadline has passed; sources created later do not close the gate again); else 503 with Retry-After. The reason is in the server's log, not in the answer.",
  response: {
    200: { type: "object", properties: { status: { type: "string", const: "ready" } } },
    ...BAD_URL,
    503: {
      description: "Not ready (JSON), or shutting down (a problem).",
      content: {
        "application/json": {
          schema: {
            type: "object",
            properties: { status: { type: "string", const: "not ready" } },
          },
        },
        "application/problem+json": { schema: { $ref: "Problem#" } },
      },
    },
  },
};

const VERSION_SCHEMA = {
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
    ...BAD_URL,
  },
};

const METRICS_SCHEMA = {
  ...pub,
  summary: "Prometheus metrics",
  description:
    "In oauth mode a token is needed unless auth.publicPaths lists /metrics (401 without).",
  produces: ["text/plain"],
  response: { 200: { type: "string" }, ...problems(400, 401, 502, 503) },
};

const OPENAPI_SCHEMA = {
  ...pub,
  summary: "This API's OpenAPI 3.1 description",
  response: { 200: { type: "object", additionalProperties: true }, ...BAD_URL },
};

// The probes' answers, written ahead: a probe is answered without a serializer, so the first
// answer of a starting server does not wait for the JSON serializers to load and compile.
const HEALTHY = JSON.stringify({ status: "ok" });
const READY = JSON.stringify({ status: "ready" });
const NOT_READY = JSON.stringify({ status: "not ready" });

function probeAnswer(reply: FastifyReply, body: string): FastifyReply {
  return reply
    .header("content-type", "application/json; charset=utf-8")
    .header("cache-control", "no-store")
    .send(body);
}

/**
 * The readiness answer. The first-sync gate is for start-up only: once open it stays open, so
 * a source created later through the admin API does not take a serving replica out of rotation.
 */
function readiness(opts: PublicOptions) {
  const startedAt = Date.now();
  const firstSyncDeadline = opts.firstSyncDeadlineMs ?? 120_000;
  let firstSyncsDone = false;
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const notReady = (reason: string, err?: unknown) => {
      req.log.warn({ err, reason }, "not ready");
      return probeAnswer(reply.code(503).header("retry-after", RETRY_AFTER_SECONDS), NOT_READY);
    };
    try {
      await opts.store.ping();
    } catch (err) {
      return notReady("store unreachable", err);
    }
    if (!firstSyncsDone) {
      if (!opts.scheduler.allAttempted() && Date.now() - startedAt < firstSyncDeadline) {
        return notReady(`first sync pending: ${opts.scheduler.pending().join(", ")}`);
      }
      firstSyncsDone = true;
    }
    return probeAnswer(reply, READY);
  };
}

async function metrics(opts: PublicOptions, reply: FastifyReply): Promise<FastifyReply> {
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
}

/** The server's OpenAPI document. */
function openApiDocument(openApi: OpenApiDocument) {
  return async (_req: FastifyRequest, reply: FastifyReply) => {
    const openapi = await openApi.text();
    return reply
      .header("content-type", "application/json; charset=utf-8")
      .header("cache-control", "public, max-age=300")
      .send(openapi);
  };
}

export const publicRoutes: FastifyPluginCallback<PublicOptions> = (app, opts, done) => {
  const ok = (_req: FastifyRequest, reply: FastifyReply) =>
    Promise.resolve(probeAnswer(reply, HEALTHY));
  app.get("/health", { schema: HEALTH_SCHEMA }, ok);
  // Where clients of the official registry probe its health; the same answer.
  app.get("/v0.1/health", { schema: { ...OFFICIAL_HEALTH_SCHEMA, hide: false } }, ok);
  app.get("/v0/health", { schema: { ...OFFICIAL_HEALTH_SCHEMA, hide: true } }, ok);
  app.get("/readiness", { schema: READINESS_SCHEMA }, readiness(opts));
  app.get("/version", { schema: VERSION_SCHEMA }, () =>
    Promise.resolve({
      name: "mcpfleet-registry",
      version: projectVersion(),
      node: process.version,
      store: opts.store.driver,
    }),
  );
  app.get("/metrics", { schema: METRICS_SCHEMA }, (_req, reply) => metrics(opts, reply));
  app.get("/openapi.json", { schema: OPENAPI_SCHEMA }, openApiDocument(opts.openApi));
  done();
};

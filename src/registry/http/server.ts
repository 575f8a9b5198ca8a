// The registry server's HTTP side: Fastify with the consumer, publish and admin routes, the
// public probes, /openapi.json and /metrics, and problem+json errors for every failure.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { LocationPolicy } from "../sources/location.js";
import type { SyncScheduler } from "../sources/scheduler.js";
import type { Store } from "../store/store.js";
import { authRoutes } from "../auth/routes.js";
import { registryRoutes } from "./admin-registries.js";
import { sourceRoutes } from "./admin-sources.js";
import type { Authorizer } from "./auth.js";
import { authentication } from "./authentication.js";
import { bodyLimits } from "./body-limits.js";
import { DeferredCompiles, compileEachSchemaOnce, sharedSerializers } from "./compile-once.js";
import { connections } from "./connections.js";
import { errorHandler } from "./error-handler.js";
import { notFound } from "./not-found.js";
import { OpenApiDocument } from "./openapi.js";
import { requestMetrics } from "./request-metrics.js";
import { requestValidators } from "./validation.js";
import { consumerRoutes } from "./consumer.js";
import { entryRoutes } from "./entries.js";
import type { RouteContext } from "./context.js";
import type { RegistryMetrics } from "./metrics.js";
import { publicRoutes } from "./public.js";
import { publishRoutes } from "./publish.js";
import { problemOf, sendProblem } from "./problem.js";
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

/**
 * Longest path parameter as sent: 255 characters (a version's most; the routes' schemas refuse
 * longer ones) percent-encoded as UTF-8, up to 12 bytes each.
 */
const MAX_PARAM_LENGTH = 255 * 12;

/** Each server's route schemas not compiled yet (see compile-once.ts). */
const deferredCompiles = new WeakMap<FastifyInstance, DeferredCompiles>();

/** Compiles every route schema of `app` now; how many were left (tests: all of them compile). */
export function compileRouteSchemas(app: FastifyInstance): number {
  return deferredCompiles.get(app)?.compileAll() ?? 0;
}

function newFastify(opts: HttpOptions): FastifyInstance {
  const logger: FastifyBaseLogger = opts.log;
  const deferred = new DeferredCompiles();
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: opts.bodyLimit,
    requestTimeout: opts.requestTimeoutMs,
    // While closing, a request on a kept-alive connection is answered 503 by connections.ts, as
    // a problem like every other error (Fastify's own answer is a JSON body of its own shape).
    return503OnClosing: false,
    forceCloseConnections: "idle",
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // The routes of every mount share their compiled schemas (see compile-once.ts).
    ajv: { onCreate: compileEachSchemaOnce },
    schemaController: {
      compilersFactory: {
        buildSerializer: sharedSerializers(deferred),
        buildValidator: requestValidators(deferred),
      },
    },
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
  deferredCompiles.set(app, deferred);
  return app;
}

/** Each registry's consumer and publish API under every prefix it answers at. */
async function registryApis(app: FastifyInstance, ctx: RouteContext, defaultRegistry?: string) {
  // Under both spellings of the prefix, and under /v0 as well as /v0.1 (the official registry
  // serves both, alike); only the first is in the OpenAPI document.
  const mounts: { prefix: string; hide: boolean; registry?: string }[] = [
    { prefix: "/:registry/v0.1", hide: false },
    { prefix: "/registry/:registry/v0.1", hide: true },
    { prefix: "/:registry/v0", hide: true },
    { prefix: "/registry/:registry/v0", hide: true },
  ];
  if (defaultRegistry !== undefined) {
    mounts.push({ prefix: "/v0.1", hide: false, registry: defaultRegistry });
    mounts.push({ prefix: "/v0", hide: true, registry: defaultRegistry });
  }
  for (const mount of mounts) {
    await app.register(consumerRoutes, { ...ctx, ...mount });
    await app.register(publishRoutes, { ...ctx, ...mount });
  }
}

export async function buildHttpServer(opts: HttpOptions): Promise<FastifyInstance> {
  const app = newFastify(opts);
  // Registered before any route: it records each route to answer 405 for the others' methods.
  await app.register(notFound);
  // Bodies are JSON only: without this, Fastify's text/plain parser would hand a string to the
  // routes, which then answer 400 instead of 415.
  app.removeContentTypeParser("text/plain");
  const openApi = new OpenApiDocument();
  await app.register(openApi.plugin);
  // The catalog signs people in itself (session cookie), so the API's token check skips it.
  const extraPublic = [
    ...opts.authorizer.publicPaths(),
    ...(opts.ui?.enabled === false ? [] : UI_PUBLIC_PATHS),
  ];
  await app.register(authentication, { authorizer: opts.authorizer, extraPublic });
  await app.register(bodyLimits);
  await app.register(connections);
  await app.register(requestMetrics, { metrics: opts.metrics });
  await app.register(errorHandler, { store: opts.store, bodyLimit: opts.bodyLimit });

  await app.register(publicRoutes, {
    store: opts.store,
    scheduler: opts.scheduler,
    metrics: opts.metrics,
    openApi,
    ...(opts.firstSyncDeadlineMs !== undefined
      ? { firstSyncDeadlineMs: opts.firstSyncDeadlineMs }
      : {}),
  });
  await app.register(authRoutes, { authorizer: opts.authorizer });
  const ctx: RouteContext = {
    store: opts.store,
    views: new ViewCache(opts.store),
    scheduler: opts.scheduler,
    authorizer: opts.authorizer,
    maxMetaSize: opts.maxMetaSize,
    locations: opts.locations,
  };
  await registryApis(app, ctx, opts.defaultRegistry);
  await app.register(sourceRoutes, ctx);
  await app.register(registryRoutes, ctx);
  await app.register(entryRoutes, ctx);
  if (opts.ui?.enabled !== false) {
    await app.register(uiRoutes, { ...ctx, ui: opts.ui ?? { enabled: true } });
  }
  return app;
}

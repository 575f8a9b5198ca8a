// Admin routes of sources: list, get, create or replace (PUT), delete, and sync now. Sources
// from the configuration file are read-only here (403).
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { parseDuration } from "../../duration.js";
import { sourceKind, type SourceConfig, type SourceKind } from "../config/types.js";
import { checkLocation, locationKey } from "../sources/location.js";
import type { SourceRecord, SyncStatus } from "../store/store.js";
import { validateAdminBody } from "./admin-body.js";
import {
  authorizeExisting,
  claimsOf,
  loadAuthorized,
  refuseConfigDefined,
  SOURCE,
  type RouteContext,
} from "./context.js";
import { fail } from "./problem.js";
import { WAIT } from "./query-params.js";
import { adminBody } from "./admin-schema.js";
import { ERRORS, listOf, NAME_PARAM, NEW_NAME_PARAM, problems, SOURCE_VIEW } from "./schemas.js";

/** A duration as Go writes one (`1h0m0s`, `30m0s`, `1.5s`, `250ms`), as ToolHive shows it. */
export function goDurationString(ms: number): string {
  const ns = Math.round(ms * 1e6);
  const trim = (n: number): string => String(Number(n.toFixed(9)));
  if (ns === 0) return "0s";
  if (ns < 1e3) return `${ns}ns`;
  if (ns < 1e6) return `${trim(ns / 1e3)}µs`;
  if (ns < 1e9) return `${trim(ns / 1e6)}ms`;
  const h = Math.floor(ns / 3.6e12);
  const m = Math.floor((ns % 3.6e12) / 6e10);
  return `${h > 0 ? `${h}h` : ""}${h > 0 || m > 0 ? `${m}m` : ""}${trim((ns % 6e10) / 1e9)}s`;
}

// ToolHive's phases: it has no phase before the first sync, which is due at once here.
const PHASES: Record<SyncStatus["phase"], string> = {
  Pending: "pending",
  Syncing: "syncing",
  Ready: "complete",
  Failed: "failed",
};

/**
 * ToolHive's fields of a source (its swagger's SourceInfo), from our model: what a client of
 * ToolHive's /v1 API reads. A `url` source is ToolHive's `file` source with a `url`.
 */
function toolhiveFields(s: SourceRecord, status: SyncStatus): Record<string, unknown> {
  const cfg = s.config as Partial<SourceConfig>;
  const kind = s.kind as SourceKind;
  const sourceType = kind === "url" ? "file" : kind;
  const interval = cfg.syncPolicy?.interval;
  return {
    type: sourceType,
    creationType: s.origin === "config" ? "CONFIG" : "API",
    sourceType,
    sourceConfig: cfg[kind] ?? {},
    ...(cfg.filter !== undefined ? { filterConfig: cfg.filter } : {}),
    ...(interval !== undefined ? { syncSchedule: goDurationString(parseDuration(interval)) } : {}),
    ...(cfg.claims !== undefined && Object.keys(cfg.claims).length > 0
      ? { claims: cfg.claims }
      : {}),
    syncStatus: {
      phase: PHASES[status.phase],
      ...(status.lastSuccess !== undefined ? { lastSyncTime: status.lastSuccess } : {}),
      ...(status.lastAttempt !== undefined ? { lastAttempt: status.lastAttempt } : {}),
      serverCount: status.entryCount,
      attemptCount: status.attemptCount ?? 0,
      // Only MCP servers are kept here.
      skillCount: 0,
      pluginCount: 0,
      ...(status.message !== undefined ? { message: status.message } : {}),
    },
  };
}

function sourceView(s: SourceRecord, current: SyncStatus | undefined): Record<string, unknown> {
  const status = current ?? { phase: "Pending", entryCount: 0 };
  return {
    name: s.name,
    kind: s.kind,
    origin: s.origin,
    readOnly: s.origin === "config",
    config: { name: s.name, ...s.config },
    // An api source's status says which form of the server list its endpoint answered on.
    status,
    ...toolhiveFields(s, status),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

const tags = ["admin"];

type Named = { Params: { name: string } };
type PutRoute = Named & { Body: Record<string, unknown> };
type SyncRoute = Named & { Querystring: { wait: boolean } };

const LIST_SCHEMA = {
  tags,
  summary: "List sources",
  response: {
    200: listOf("sources", SOURCE_VIEW),
    ...ERRORS,
  },
};

const GET_SCHEMA = {
  tags,
  summary: "Get a source with its sync status",
  params: NAME_PARAM,
  response: { 200: SOURCE_VIEW, ...ERRORS, ...problems(404) },
};

const PUT_SCHEMA = {
  tags,
  summary: "Create or replace a source",
  description:
    "The body is a source as in the configuration file (name optional; when given it must match the path). Sources from the configuration file cannot be changed (403). At most one source is managed (409).",
  params: NEW_NAME_PARAM,
  body: adminBody("Source", "A source as in the configuration file."),
  response: {
    200: SOURCE_VIEW,
    201: SOURCE_VIEW,
    ...ERRORS,
    ...problems(404, 409, 413, 415),
  },
};

const DELETE_SCHEMA = {
  tags,
  summary: "Delete a source and its entries",
  params: NAME_PARAM,
  response: { 204: { type: "null", description: "Deleted" }, ...ERRORS, ...problems(404, 409) },
};

const SYNC_SCHEMA = {
  tags,
  summary: "Sync a source now",
  description:
    "Starts a sync of a git, api, url or file source (joining one already running) and answers 202 at once; with `wait=true` it answers 200 when the sync has finished, with its outcome.",
  params: NAME_PARAM,
  querystring: { type: "object", properties: { wait: WAIT } },
  response: { 200: SOURCE_VIEW, 202: SOURCE_VIEW, ...ERRORS, ...problems(404, 409) },
};

async function listSources(ctx: RouteContext, req: FastifyRequest) {
  ctx.authorizer.authorize(req.principal, { kind: "manageSources" });
  const [sources, status] = await Promise.all([ctx.store.listSources(), ctx.store.listStatus()]);
  return {
    sources: sources
      .filter((s) => ctx.authorizer.resourceVisible(req.principal, claimsOf(s.config.claims)))
      .map((s) => sourceView(s, status.get(s.name))),
  };
}

async function getSource(ctx: RouteContext, req: FastifyRequest<Named>) {
  const s = await loadAuthorized(ctx, req.principal, SOURCE, req.params.name);
  return sourceView(s, await ctx.store.getStatus(s.name));
}

/**
 * Another tenant's data stays theirs: a location some source reads may be read by a new one
 * only when the caller also manages that source.
 */
async function refuseForeignLocation(
  ctx: RouteContext,
  req: FastifyRequest,
  name: string,
  cfg: SourceConfig,
): Promise<void> {
  const key = locationKey(cfg, ctx.locations.baseDir);
  if (key === undefined) return;
  for (const other of await ctx.store.listSources()) {
    if (other.name === name) continue;
    const otherCfg = { ...(other.config as unknown as SourceConfig), name: other.name };
    if (
      locationKey(otherCfg, ctx.locations.baseDir) === key &&
      !ctx.authorizer.resourceVisible(req.principal, claimsOf(other.config.claims))
    ) {
      fail(
        "ERR_SOURCE_LOCATION_REFUSED",
        "a source you do not manage reads this location; ask its administrator",
      );
    }
  }
}

/** The rules checked again inside the store's transaction, against the sources there are. */
function putGuard(name: string, kind: string) {
  return (current: SourceRecord | undefined, all: SourceRecord[]): void => {
    refuseConfigDefined(SOURCE, current, "change");
    const other = all.find((s) => s.kind === "managed" && s.name !== name);
    if (kind === "managed" && other !== undefined) {
      // A conflict with the sources there are (409, as ToolHive answers), not a bad body.
      fail(
        "ERR_MANAGED_SOURCE_EXISTS",
        `source "${other.name}" is already the managed source; at most one source is managed`,
      );
    }
  };
}

async function putSource(
  ctx: RouteContext,
  req: FastifyRequest<PutRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { store, authorizer } = ctx;
  const name = req.params.name;
  // The role before the body: a caller without it costs no validation work.
  authorizer.authorize(req.principal, { kind: "manageSources" });
  const cfg = validateAdminBody("Source", req.body, name) as unknown as SourceConfig;
  const claims = claimsOf(cfg.claims);
  const existing = await store.getSource(name);
  if (existing !== undefined) authorizeExisting(ctx, req.principal, SOURCE, existing);
  authorizer.authorize(req.principal, { kind: "manageSources", ...(claims ? { claims } : {}) });
  refuseConfigDefined(SOURCE, existing, "change");
  const kind = sourceKind(cfg);
  await checkLocation(cfg, ctx.locations.policy, ctx.locations.baseDir);
  await refuseForeignLocation(ctx, req, name, cfg);
  const { name: _n, ...config } = cfg;
  // A concurrent PUT may have changed the sources since they were read above.
  const { created } = await store.putSource(name, kind, config, "api", putGuard(name, kind));
  await ctx.scheduler.reconcile();
  const s = await store.getSource(name);
  return reply
    .code(created ? 201 : 200)
    .send(sourceView(s as SourceRecord, await store.getStatus(name)));
}

async function deleteSource(
  ctx: RouteContext,
  req: FastifyRequest<Named>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const s = await loadAuthorized(ctx, req.principal, SOURCE, req.params.name);
  refuseConfigDefined(SOURCE, s, "remove");
  await ctx.store.deleteSource(s.name);
  await ctx.scheduler.reconcile();
  return reply.code(204).send();
}

async function syncSource(
  ctx: RouteContext,
  req: FastifyRequest<SyncRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const s = await loadAuthorized(ctx, req.principal, SOURCE, req.params.name);
  if (s.kind === "managed") {
    fail("ERR_SOURCE_NOT_SYNCED", `source "${s.name}" is managed: nothing to sync`);
  }
  const run = ctx.scheduler.trigger(s.name);
  if (req.query.wait) {
    const outcome = await run;
    return reply.code(200).send({ ...sourceView(s, await ctx.store.getStatus(s.name)), outcome });
  }
  run.catch(() => undefined);
  return reply.code(202).send(sourceView(s, await ctx.store.getStatus(s.name)));
}

export const sourceRoutes: FastifyPluginCallback<RouteContext> = (app, ctx, done) => {
  app.get("/v1/sources", { schema: LIST_SCHEMA }, (req) => listSources(ctx, req));
  app.get<Named>("/v1/sources/:name", { schema: GET_SCHEMA }, (req) => getSource(ctx, req));
  // The handler checks the body against the config schema, naming every offending field.
  app.put<PutRoute>(
    "/v1/sources/:name",
    { attachValidation: true, schema: PUT_SCHEMA },
    (req, reply) => putSource(ctx, req, reply),
  );
  app.delete<Named>("/v1/sources/:name", { schema: DELETE_SCHEMA }, (req, reply) =>
    deleteSource(ctx, req, reply),
  );
  app.post<SyncRoute>("/v1/sources/:name/sync", { schema: SYNC_SCHEMA }, (req, reply) =>
    syncSource(ctx, req, reply),
  );
  done();
};

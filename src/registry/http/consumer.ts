// The consumer API in the official MCP registry's v0.1 shapes: list server versions, the
// versions of one server, one version. Registered under /{registry}/v0.1 and
// /registry/{registry}/v0.1 (and /v0.1 for the default registry).
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { compareVersions, type StoredEntry } from "../store/store.js";
import { readableRegistry, registryParam, type RegistryApiOptions } from "./context.js";
import { fail } from "./problem.js";
import {
  CURSOR,
  INCLUDE_DELETED,
  LIMIT,
  SEARCH,
  UPDATED_SINCE,
  VERSION_FILTER,
} from "./query-params.js";
import { ERRORS, ITEM, LIST, NOT_MODIFIED, pathText, problems } from "./schemas.js";
import { decodeCursor, encodeCursor, etagOf, itemJsonOf, listJsonOf } from "./views.js";

export const REGISTRY_PARAM = { registry: pathText("Registry name.") };

interface ListRoute {
  Querystring: {
    cursor?: string;
    limit: number;
    search?: string;
    updated_since?: string;
    version?: string;
    include_deleted: boolean;
  };
}

interface VersionsRoute {
  Params: { name: string };
  Querystring: { include_deleted: boolean };
}

interface VersionRoute {
  Params: { name: string; version: string };
}

function sendCached(
  req: FastifyRequest,
  reply: FastifyReply,
  body: Buffer,
  etag: string,
  scope: string,
): FastifyReply {
  reply
    .header("etag", etag)
    .header(
      "cache-control",
      scope === "" ? "public, max-age=0, must-revalidate" : "private, max-age=0, must-revalidate",
    );
  if (scope !== "") reply.header("vary", "Authorization");
  const inm = req.headers["if-none-match"];
  if (inm !== undefined && inm.split(",").some((t) => t.trim() === etag || t.trim() === "*")) {
    return reply.code(304).send();
  }
  return reply.header("content-type", "application/json; charset=utf-8").send(body);
}

/** No entry was updated before the store existed: earlier dates select everything. */
const EPOCH = new Date(0);

/** updated_since as a time (its schema checked the spelling; a leap second is no time here). */
function sinceOf(v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) {
    fail(
      "ERR_INVALID_PARAMETER",
      `updated_since must be an RFC 3339 date-time such as 2025-01-31T12:00:00Z, got "${v}"`,
    );
  }
  // PostgreSQL has no year 0 (and JavaScript has): clamp, as the answer is the same.
  return d < EPOCH ? EPOCH : d;
}

/**
 * ajv coerces `1e999` to Infinity and then skips its range checks (they apply to finite numbers
 * only), so the schema alone lets an infinite limit through.
 */
function checkLimitFinite(req: FastifyRequest<ListRoute>): void {
  if (Number.isFinite(req.query.limit)) return;
  const sent = new URL(req.url, "http://localhost").searchParams.get("limit");
  fail("ERR_INVALID_PARAMETER", `limit must be an integer from 1 to 100, got "${sent ?? ""}"`);
}

/** Versions as the official registry lists them: the most recently published first. */
function newestFirst(a: StoredEntry, b: StoredEntry): number {
  return a.publishedAt < b.publishedAt
    ? 1
    : a.publishedAt > b.publishedAt
      ? -1
      : compareVersions(b.version, a.version);
}

function visible(opts: RegistryApiOptions, req: FastifyRequest, list: StoredEntry[]) {
  return list.filter((e) => opts.authorizer.entryVisible(req.principal, e.claims));
}

/** Caches an answer (JSON text) under `key` for the store generation it was read at, and sends it. */
function cacheAndSend(
  opts: RegistryApiOptions,
  req: FastifyRequest,
  reply: FastifyReply,
  at: { key: string; generation: number; scope: string },
  json: string,
): FastifyReply {
  const body = Buffer.from(json);
  const etag = etagOf(body);
  opts.views.put(at.key, at.generation, { body, etag, status: 200 });
  return sendCached(req, reply, body, etag, at.scope);
}

/**
 * A page is `limit` visible entries: when the filter hides rows, read further batches until
 * the page is full or the rows run out. Returns up to limit + 1 (the extra one: a next page).
 */
async function visiblePage(
  opts: RegistryApiOptions,
  req: FastifyRequest<ListRoute>,
  sources: string[],
  after: { name: string; version: string } | undefined,
  since: Date | undefined,
): Promise<StoredEntry[]> {
  const q = req.query;
  const shown: StoredEntry[] = [];
  let scanFrom = after;
  let batch = q.limit + 1;
  for (;;) {
    const rows = await opts.store.listEntries(sources, {
      limit: batch,
      ...(scanFrom !== undefined ? { after: scanFrom } : {}),
      ...(q.search !== undefined ? { search: q.search } : {}),
      ...(since !== undefined ? { updatedSince: since } : {}),
      latestOnly: q.version === "latest",
      ...(q.version !== undefined && q.version !== "latest" ? { version: q.version } : {}),
      includeDeleted: q.include_deleted,
    });
    shown.push(...visible(opts, req, rows));
    const tail = rows[rows.length - 1];
    if (shown.length > q.limit || rows.length < batch || tail === undefined) break;
    scanFrom = { name: tail.name, version: tail.version };
    batch = Math.min(batch * 2, 1000);
  }
  return shown;
}

async function listServers(
  opts: RegistryApiOptions,
  req: FastifyRequest<ListRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
  const q = req.query;
  // Every parameter is checked before the cache is asked: a bad one is refused whether or not
  // an answer is cached under a key it resembles.
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  if (q.cursor !== undefined && after === undefined) {
    fail("ERR_INVALID_CURSOR", "cursor is not one this server issued; start again without it");
  }
  checkLimitFinite(req);
  const since = sinceOf(q.updated_since);
  const scope = opts.authorizer.cacheScope(req.principal);
  const key = `L\0${scope}\0${reg.name}\0${q.cursor ?? ""}\0${q.limit}\0${q.search ?? ""}\0${since?.toISOString() ?? ""}\0${q.version ?? ""}\0${q.include_deleted}`;
  const hit = opts.views.get(key);
  if (hit !== undefined) return sendCached(req, reply, hit.body, hit.etag, scope);
  const generation = opts.store.generation;
  const shown = await visiblePage(opts, req, reg.sources, after, since);
  const page = shown.slice(0, q.limit);
  const last = page[page.length - 1];
  const metadata: Record<string, unknown> = { count: page.length };
  // The cursor is the last entry shown, so it never names a hidden one.
  if (shown.length > q.limit && last !== undefined) metadata.nextCursor = encodeCursor(last);
  return cacheAndSend(opts, req, reply, { key, generation, scope }, listJsonOf(page, metadata));
}

async function listVersions(
  opts: RegistryApiOptions,
  req: FastifyRequest<VersionsRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
  const scope = opts.authorizer.cacheScope(req.principal);
  const includeDeleted = req.query.include_deleted;
  const key = `V\0${scope}\0${reg.name}\0${req.params.name}\0${includeDeleted}`;
  const hit = opts.views.get(key);
  if (hit !== undefined) return sendCached(req, reply, hit.body, hit.etag, scope);
  const generation = opts.store.generation;
  const list = visible(
    opts,
    req,
    await opts.store.listVersions(reg.sources, req.params.name, { includeDeleted }),
  ).sort(newestFirst);
  if (list.length === 0) {
    fail("ERR_SERVER_NOT_FOUND", `registry "${reg.name}" has no server "${req.params.name}"`);
  }
  const answer = listJsonOf(list, { count: list.length });
  return cacheAndSend(opts, req, reply, { key, generation, scope }, answer);
}

async function getVersion(
  opts: RegistryApiOptions,
  req: FastifyRequest<VersionRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
  const { name, version } = req.params;
  const scope = opts.authorizer.cacheScope(req.principal);
  const key = `G\0${scope}\0${reg.name}\0${name}\0${version}`;
  const hit = opts.views.get(key);
  if (hit !== undefined) return sendCached(req, reply, hit.body, hit.etag, scope);
  const generation = opts.store.generation;
  // The one row asked for, when the caller may see it; otherwise the name's versions decide
  // which error to give (or which visible version is the latest for this caller).
  const row = await opts.store.getVersion(reg.sources, name, version);
  if (row !== undefined && opts.authorizer.entryVisible(req.principal, row.claims)) {
    return cacheAndSend(opts, req, reply, { key, generation, scope }, itemJsonOf(row));
  }
  // A pinned client reads its exact version whatever its status (it learns it is deleted);
  // `latest` is never a deleted version.
  const list = visible(
    opts,
    req,
    await opts.store.listVersions(reg.sources, name, { includeDeleted: version !== "latest" }),
  );
  if (list.length === 0) {
    fail("ERR_SERVER_NOT_FOUND", `registry "${reg.name}" has no server "${name}"`);
  }
  const e =
    version === "latest"
      ? (list.find((x) => x.isLatest) ?? list[0])
      : list.find((x) => x.version === version);
  if (e === undefined) {
    fail("ERR_VERSION_NOT_FOUND", `server "${name}" has no version "${version}"`);
  }
  return cacheAndSend(opts, req, reply, { key, generation, scope }, itemJsonOf(e));
}

/** The route schemas, for a mount that is documented or hidden and names its registry or not. */
function schemas(opts: RegistryApiOptions) {
  const common = { hide: opts.hide, tags: ["consumer"] };
  const registryParams = opts.registry === undefined ? REGISTRY_PARAM : {};
  const list = {
    ...common,
    summary: "List server versions",
    description:
      "Pages through the registry's entries ordered by name and version. A name present in several sources is served from the registry's first source that has it.",
    params: { type: "object", properties: registryParams },
    querystring: {
      type: "object",
      properties: {
        cursor: CURSOR,
        limit: LIMIT,
        search: SEARCH,
        updated_since: UPDATED_SINCE,
        version: VERSION_FILTER,
        include_deleted: INCLUDE_DELETED,
      },
    },
    response: { 200: LIST, 304: NOT_MODIFIED, ...ERRORS, ...problems(404) },
  };
  const versions = {
    ...common,
    summary: "List the versions of a server",
    params: {
      type: "object",
      properties: {
        ...registryParams,
        name: pathText("Server name, URL-encoded (io.github.x%2Fy)."),
      },
    },
    querystring: { type: "object", properties: { include_deleted: INCLUDE_DELETED } },
    response: { 200: LIST, 304: NOT_MODIFIED, ...ERRORS, ...problems(404) },
  };
  const version = {
    ...common,
    summary: "Get one version of a server",
    params: {
      type: "object",
      properties: {
        ...registryParams,
        name: pathText("Server name, URL-encoded."),
        version: pathText("A version, or `latest`."),
      },
    },
    response: { 200: ITEM, 304: NOT_MODIFIED, ...ERRORS, ...problems(404) },
  };
  return { list, versions, version };
}

export const consumerRoutes: FastifyPluginCallback<RegistryApiOptions> = (app, opts, done) => {
  const schema = schemas(opts);
  app.get<ListRoute>("/servers", { schema: schema.list }, (req, reply) =>
    listServers(opts, req, reply),
  );
  app.get<VersionsRoute>("/servers/:name/versions", { schema: schema.versions }, (req, reply) =>
    listVersions(opts, req, reply),
  );
  app.get<VersionRoute>(
    "/servers/:name/versions/:version",
    { schema: schema.version },
    (req, reply) => getVersion(opts, req, reply),
  );
  done();
};

// The consumer API in the official MCP registry's v0.1 shapes: list server versions, the
// versions of one server, one version. Registered under /{registry}/v0.1 and
// /registry/{registry}/v0.1 (and /v0.1 for the default registry).
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { compareVersions, type StoredEntry } from "../store/store.js";
import { readableRegistry, registryParam, type RegistryApiOptions } from "./context.js";
import { fail } from "./problem.js";
import { ERRORS, ITEM, LIST, NOT_MODIFIED } from "./schemas.js";
import { decodeCursor, encodeCursor, etagOf, itemOf } from "./views.js";

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export const REGISTRY_PARAM = {
  registry: { type: "string", description: "Registry name." },
};

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

function parseLimit(v: string | undefined): number {
  if (v === undefined) return 30;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 100) {
    fail("ERR_INVALID_PARAMETER", `limit must be an integer from 1 to 100, got "${v}"`);
  }
  return Number(v);
}

/** No entry was updated before the store existed: earlier dates select everything. */
const EPOCH = new Date(0);

function parseSince(v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (!RFC3339.test(v) || Number.isNaN(d.getTime())) {
    fail(
      "ERR_INVALID_PARAMETER",
      `updated_since must be an RFC 3339 date-time such as 2025-01-31T12:00:00Z, got "${v}"`,
    );
  }
  // PostgreSQL has no year 0 (and JavaScript has): clamp, as the answer is the same.
  return d < EPOCH ? EPOCH : d;
}

const INCLUDE_DELETED = {
  type: "string",
  enum: ["true", "false"],
  description: "`true`: deleted versions too (hidden by default).",
} as const;

function parseFlag(name: string, v: string | undefined): boolean {
  if (v === undefined || v === "false") return false;
  if (v === "true") return true;
  return fail("ERR_INVALID_PARAMETER", `${name} must be true or false, got "${v}"`);
}

/** Versions as the official registry lists them: the most recently published first. */
function newestFirst(a: StoredEntry, b: StoredEntry): number {
  return a.publishedAt < b.publishedAt
    ? 1
    : a.publishedAt > b.publishedAt
      ? -1
      : compareVersions(b.version, a.version);
}

export const consumerRoutes: FastifyPluginCallback<RegistryApiOptions> = (app, opts, done) => {
  const { store, views, authorizer } = opts;
  const hide = opts.hide;
  const tags = ["consumer"];
  const registryParams = opts.registry === undefined ? REGISTRY_PARAM : {};

  function visible(req: FastifyRequest, list: StoredEntry[]): StoredEntry[] {
    return list.filter((e) => authorizer.entryVisible(req.principal, e.claims));
  }

  app.get<{ Querystring: Record<string, string | undefined> }>(
    "/servers",
    {
      schema: {
        hide,
        tags,
        summary: "List server versions",
        description:
          "Pages through the registry's entries ordered by name and version. A name present in several sources is served from the registry's first source that has it.",
        params: { type: "object", properties: registryParams },
        querystring: {
          type: "object",
          properties: {
            cursor: {
              type: "string",
              description: "Opaque; metadata.nextCursor of the previous page.",
            },
            limit: { type: "string", description: "Page size, 1 to 100 (default 30)." },
            search: {
              type: "string",
              description: "Case-insensitive substring of name, title or description.",
            },
            updated_since: { type: "string", description: "RFC 3339; entries updated after it." },
            version: {
              type: "string",
              description:
                "`latest`: only each server's latest version; else only this exact version.",
            },
            include_deleted: INCLUDE_DELETED,
          },
        },
        response: { 200: LIST, 304: NOT_MODIFIED, ...ERRORS },
      },
    },
    async (req, reply) => {
      const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
      const q = req.query;
      // Every parameter is checked before the cache is asked: a bad one is refused whether
      // or not an answer is cached under a key it resembles.
      const limit = parseLimit(q.limit);
      const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      if (q.cursor !== undefined && after === undefined) {
        fail("ERR_INVALID_CURSOR", "cursor is not one this server issued; start again without it");
      }
      if (q.version !== undefined && (q.version === "" || q.version.length > 255)) {
        fail(
          "ERR_INVALID_PARAMETER",
          "version must be `latest` or one version of 1 to 255 characters",
        );
      }
      const includeDeleted = parseFlag("include_deleted", q.include_deleted);
      if (q.search !== undefined && q.search.length > 200) {
        fail("ERR_INVALID_PARAMETER", "search is limited to 200 characters");
      }
      const since = parseSince(q.updated_since);
      const scope = authorizer.cacheScope(req.principal);
      const key = `L\0${scope}\0${reg.name}\0${q.cursor ?? ""}\0${limit}\0${q.search ?? ""}\0${since?.toISOString() ?? ""}\0${q.version ?? ""}\0${includeDeleted}`;
      const hit = views.get(key);
      if (hit !== undefined) return sendCached(req, reply, hit.body, hit.etag, scope);
      const gen = store.generation;
      // A page is `limit` visible entries: when the filter hides rows, read further batches
      // until the page is full or the rows run out. The cursor is the last entry shown, so it
      // never names a hidden one.
      const shown: StoredEntry[] = [];
      let scanFrom = after;
      let batch = limit + 1;
      for (;;) {
        const rows = await store.listEntries(reg.sources, {
          limit: batch,
          ...(scanFrom !== undefined ? { after: scanFrom } : {}),
          ...(q.search !== undefined ? { search: q.search } : {}),
          ...(since !== undefined ? { updatedSince: since } : {}),
          latestOnly: q.version === "latest",
          ...(q.version !== undefined && q.version !== "latest" ? { version: q.version } : {}),
          includeDeleted,
        });
        shown.push(...visible(req, rows));
        const tail = rows[rows.length - 1];
        if (shown.length > limit || rows.length < batch || tail === undefined) break;
        scanFrom = { name: tail.name, version: tail.version };
        batch = Math.min(batch * 2, 1000);
      }
      const page = shown.slice(0, limit);
      const last = page[page.length - 1];
      const items = page.map(itemOf);
      const metadata: Record<string, unknown> = { count: items.length };
      if (shown.length > limit && last !== undefined) metadata.nextCursor = encodeCursor(last);
      const body = Buffer.from(JSON.stringify({ servers: items, metadata }));
      const etag = etagOf(body);
      views.put(key, gen, { body, etag, status: 200 });
      return sendCached(req, reply, body, etag, scope);
    },
  );

  app.get<{ Params: { name: string }; Querystring: { include_deleted?: string } }>(
    "/servers/:name/versions",
    {
      schema: {
        hide,
        tags,
        summary: "List the versions of a server",
        params: {
          type: "object",
          properties: {
            ...registryParams,
            name: { type: "string", description: "Server name, URL-encoded (io.github.x%2Fy)." },
          },
        },
        querystring: { type: "object", properties: { include_deleted: INCLUDE_DELETED } },
        response: { 200: LIST, 304: NOT_MODIFIED, ...ERRORS },
      },
    },
    async (req, reply) => {
      const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
      const scope = authorizer.cacheScope(req.principal);
      const includeDeleted = parseFlag("include_deleted", req.query.include_deleted);
      const key = `V\0${scope}\0${reg.name}\0${req.params.name}\0${includeDeleted}`;
      const hit = views.get(key);
      if (hit !== undefined) return sendCached(req, reply, hit.body, hit.etag, scope);
      const gen = store.generation;
      const list = visible(
        req,
        await store.listVersions(reg.sources, req.params.name, { includeDeleted }),
      ).sort(newestFirst);
      if (list.length === 0) {
        fail("ERR_SERVER_NOT_FOUND", `registry "${reg.name}" has no server "${req.params.name}"`);
      }
      const body = Buffer.from(
        JSON.stringify({ servers: list.map(itemOf), metadata: { count: list.length } }),
      );
      const etag = etagOf(body);
      views.put(key, gen, { body, etag, status: 200 });
      return sendCached(req, reply, body, etag, scope);
    },
  );

  app.get<{ Params: { name: string; version: string } }>(
    "/servers/:name/versions/:version",
    {
      schema: {
        hide,
        tags,
        summary: "Get one version of a server",
        params: {
          type: "object",
          properties: {
            ...registryParams,
            name: { type: "string", description: "Server name, URL-encoded." },
            version: { type: "string", description: "A version, or `latest`." },
          },
        },
        response: { 200: ITEM, 304: NOT_MODIFIED, ...ERRORS },
      },
    },
    async (req, reply) => {
      const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
      const { name, version } = req.params;
      const scope = authorizer.cacheScope(req.principal);
      const key = `G\0${scope}\0${reg.name}\0${name}\0${version}`;
      const hit = views.get(key);
      if (hit !== undefined) return sendCached(req, reply, hit.body, hit.etag, scope);
      const gen = store.generation;
      // A pinned client reads its exact version whatever its status (it learns it is deleted);
      // `latest` is never a deleted version.
      const list = visible(
        req,
        await store.listVersions(reg.sources, name, { includeDeleted: version !== "latest" }),
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
      const body = Buffer.from(JSON.stringify(itemOf(e)));
      const etag = etagOf(body);
      views.put(key, gen, { body, etag, status: 200 });
      return sendCached(req, reply, body, etag, scope);
    },
  );
  done();
};

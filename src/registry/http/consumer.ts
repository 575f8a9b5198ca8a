// The consumer API (the official MCP registry's v0.1 shapes), publish and delete. Mounted at
// /{registry}/v0.1 and /registry/{registry}/v0.1.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { McpfleetError } from "../../errors.js";
import type { ServerEntry, ServerJson } from "../formats/model.js";
import { nameProblem, versionProblem } from "../formats/names.js";
import type { RegistryRecord, Store, StoredEntry } from "../store/store.js";
import type { Authorizer } from "./auth.js";
import { fail } from "./problem.js";
import { decodeCursor, encodeCursor, etagOf, itemOf, type ViewCache } from "./views.js";

export interface ConsumerDeps {
  store: Store;
  views: ViewCache;
  authorizer: Authorizer;
  maxMetaSize: number;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const ERRORS = {
  400: { $ref: "Problem#" },
  401: { $ref: "Problem#" },
  403: { $ref: "Problem#" },
  404: { $ref: "Problem#" },
};

const ITEM = {
  type: "object",
  description:
    "A server version: `server` is the MCP server.json; `_meta` carries the registry's official metadata.",
  properties: {
    server: { type: "object", additionalProperties: true },
    _meta: {
      type: "object",
      properties: {
        "io.modelcontextprotocol.registry/official": {
          type: "object",
          properties: {
            status: { type: "string", enum: ["active", "deprecated", "deleted"] },
            publishedAt: { type: "string", format: "date-time" },
            updatedAt: { type: "string", format: "date-time" },
            isLatest: { type: "boolean" },
          },
        },
      },
      additionalProperties: true,
    },
  },
  additionalProperties: true,
} as const;

const LIST = {
  type: "object",
  properties: {
    servers: { type: "array", items: ITEM },
    metadata: {
      type: "object",
      properties: {
        nextCursor: { type: "string", description: "Absent on the last page." },
        count: { type: "integer", description: "Items in this page." },
      },
    },
  },
} as const;

const REGISTRY_PARAM = {
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

export function registerConsumer(app: FastifyInstance, deps: ConsumerDeps): void {
  const { store, views, authorizer } = deps;

  async function registryFor(req: FastifyRequest, name: string): Promise<RegistryRecord> {
    const reg = await views.registry(name);
    if (reg === undefined) fail("ERR_REGISTRY_NOT_FOUND", `no registry named "${name}"`);
    authorizer.authorize(req.principal, {
      kind: "readRegistry",
      registry: name,
      ...(reg.claims !== undefined ? { claims: reg.claims } : {}),
    });
    return reg;
  }

  function visible(req: FastifyRequest, list: StoredEntry[]): StoredEntry[] {
    return list.filter((e) => authorizer.entryVisible(req.principal, e.claims));
  }

  for (const prefix of ["/:registry/v0.1", "/registry/:registry/v0.1"]) {
    const hide = prefix.startsWith("/registry/");
    const tags = ["consumer"];

    app.get<{
      Params: { registry: string };
      Querystring: Record<string, string | undefined>;
    }>(
      `${prefix}/servers`,
      {
        schema: {
          hide,
          tags,
          summary: "List server versions",
          description:
            "Pages through the registry's entries ordered by name and version. A name present in several sources is served from the registry's first source that has it.",
          params: { type: "object", properties: REGISTRY_PARAM },
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
              version: { type: "string", enum: ["latest"], description: "Only latest versions." },
            },
          },
          response: { 200: LIST, 304: { description: "Not modified", type: "null" }, ...ERRORS },
        },
      },
      async (req, reply) => {
        const reg = await registryFor(req, req.params.registry);
        const q = req.query;
        // Every parameter is checked before the cache is asked: a bad one is refused whether
        // or not an answer is cached under a key it resembles.
        const limit = parseLimit(q.limit);
        const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
        if (q.cursor !== undefined && after === undefined) {
          fail(
            "ERR_INVALID_CURSOR",
            "cursor is not one this server issued; start again without it",
          );
        }
        if (q.version !== undefined && q.version !== "latest") {
          fail("ERR_INVALID_PARAMETER", `version accepts only "latest", got "${q.version}"`);
        }
        if (q.search !== undefined && q.search.length > 200) {
          fail("ERR_INVALID_PARAMETER", "search is limited to 200 characters");
        }
        const since = parseSince(q.updated_since);
        const scope = authorizer.cacheScope(req.principal);
        const key = `L\0${scope}\0${reg.name}\0${q.cursor ?? ""}\0${limit}\0${q.search ?? ""}\0${since?.toISOString() ?? ""}\0${q.version ?? ""}`;
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

    app.get<{ Params: { registry: string; name: string } }>(
      `${prefix}/servers/:name/versions`,
      {
        schema: {
          hide,
          tags,
          summary: "List the versions of a server",
          params: {
            type: "object",
            properties: {
              ...REGISTRY_PARAM,
              name: { type: "string", description: "Server name, URL-encoded (io.github.x%2Fy)." },
            },
          },
          response: { 200: LIST, 304: { description: "Not modified", type: "null" }, ...ERRORS },
        },
      },
      async (req, reply) => {
        const reg = await registryFor(req, req.params.registry);
        const scope = authorizer.cacheScope(req.principal);
        const key = `V\0${scope}\0${reg.name}\0${req.params.name}`;
        const hit = views.get(key);
        if (hit !== undefined) return sendCached(req, reply, hit.body, hit.etag, scope);
        const gen = store.generation;
        const list = visible(req, await store.listVersions(reg.sources, req.params.name));
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

    app.get<{ Params: { registry: string; name: string; version: string } }>(
      `${prefix}/servers/:name/versions/:version`,
      {
        schema: {
          hide,
          tags,
          summary: "Get one version of a server",
          params: {
            type: "object",
            properties: {
              ...REGISTRY_PARAM,
              name: { type: "string", description: "Server name, URL-encoded." },
              version: { type: "string", description: "A version, or `latest`." },
            },
          },
          response: { 200: ITEM, 304: { description: "Not modified", type: "null" }, ...ERRORS },
        },
      },
      async (req, reply) => {
        const reg = await registryFor(req, req.params.registry);
        const { name, version } = req.params;
        const scope = authorizer.cacheScope(req.principal);
        const key = `G\0${scope}\0${reg.name}\0${name}\0${version}`;
        const hit = views.get(key);
        if (hit !== undefined) return sendCached(req, reply, hit.body, hit.etag, scope);
        const gen = store.generation;
        const list = visible(req, await store.listVersions(reg.sources, name));
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

    app.post<{ Params: { registry: string }; Body: Record<string, unknown> }>(
      `${prefix}/publish`,
      {
        schema: {
          hide,
          tags: ["publish"],
          summary: "Publish a server version into the registry's managed source",
          description:
            "Versions are immutable: publishing an existing version is refused with 409. The latest version is recomputed (semver order; pre-releases only when no release exists). Besides name, version, url and description, any server.json field may be given (title, repository, packages, remotes, websiteUrl, _meta).",
          params: { type: "object", properties: REGISTRY_PARAM },
          body: {
            type: "object",
            required: ["name", "version"],
            properties: {
              name: { type: "string", description: "namespace/name, 3 to 200 characters." },
              version: {
                type: "string",
                description: "One exact version (not a range, not `latest`).",
              },
              url: {
                type: "string",
                format: "uri",
                description: "URL of the MCP server (a streamable-http remote).",
              },
              description: { type: "string" },
              title: { type: "string" },
              claims: {
                type: "object",
                description: "Claims of the entry; every later version must carry the same.",
                additionalProperties: {
                  anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
                },
              },
              _meta: { type: "object", description: "Publisher-provided metadata (size-limited)." },
            },
            additionalProperties: true,
          },
          response: {
            201: ITEM,
            ...ERRORS,
            409: { $ref: "Problem#" },
            413: { $ref: "Problem#" },
            415: { $ref: "Problem#" },
          },
        },
      },
      async (req, reply) => {
        const reg = await registryFor(req, req.params.registry);
        // The role first, so a caller without it learns nothing about the registry's sources.
        deps.authorizer.authorize(req.principal, { kind: "manageEntries", registry: reg.name });
        const managed = await managedSourceOf(store, reg);
        const entry = publishedEntry(req.body, deps.maxMetaSize);
        deps.authorizer.authorize(req.principal, {
          kind: "manageEntries",
          registry: reg.name,
          ...(entry.claims !== undefined ? { entryClaims: entry.claims } : {}),
        });
        // The managed source is served last (views.ts): a name another source of this registry
        // serves would never be shown, so it is refused rather than stored unseen.
        const others = reg.sources.filter((src) => src !== managed);
        if (others.length > 0 && (await store.listVersions(others, entry.name)).length > 0) {
          fail(
            "ERR_NAME_TAKEN",
            `registry "${reg.name}" serves ${entry.name} from another source; publish another name`,
          );
        }
        const stored = await store.publish(managed, entry);
        return reply
          .code(201)
          .header(
            "location",
            `/${reg.name}/v0.1/servers/${encodeURIComponent(stored.name)}/versions/${encodeURIComponent(stored.version)}`,
          )
          .header("content-type", "application/json; charset=utf-8")
          .send(JSON.stringify(itemOf(stored)));
      },
    );

    app.delete<{ Params: { registry: string; name: string; version: string } }>(
      `${prefix}/servers/:name/versions/:version`,
      {
        schema: {
          hide,
          tags: ["publish"],
          summary: "Delete a published server version",
          description:
            "Removes one version from the registry's managed source; the latest version is recomputed and the name is freed when its last version goes.",
          params: {
            type: "object",
            properties: {
              ...REGISTRY_PARAM,
              name: { type: "string" },
              version: { type: "string" },
            },
          },
          response: {
            204: { description: "Deleted", type: "null" },
            ...ERRORS,
            409: { $ref: "Problem#" },
          },
        },
      },
      async (req, reply) => {
        const reg = await registryFor(req, req.params.registry);
        deps.authorizer.authorize(req.principal, { kind: "manageEntries", registry: reg.name });
        const managed = await managedSourceOf(store, reg);
        const target = (await store.listVersions([managed], req.params.name)).find(
          (e) => e.version === req.params.version,
        );
        const notFound = (): never =>
          fail(
            "ERR_VERSION_NOT_FOUND",
            `the managed source of "${reg.name}" has no ${req.params.name} version ${req.params.version}`,
          );
        // A version the caller may not manage answers as a missing one: no existence oracle.
        if (
          target === undefined ||
          (target.claims !== undefined &&
            !deps.authorizer.entryVisible(req.principal, target.claims))
        ) {
          notFound();
        }
        deps.authorizer.authorize(req.principal, {
          kind: "manageEntries",
          registry: reg.name,
          ...(target?.claims !== undefined ? { entryClaims: target.claims } : {}),
        });
        const ok = await store.deleteVersion(managed, req.params.name, req.params.version);
        if (!ok) notFound();
        return reply.code(204).send();
      },
    );
  }
}

async function managedSourceOf(store: Store, reg: RegistryRecord): Promise<string> {
  for (const name of reg.sources) {
    const s = await store.getSource(name);
    if (s?.kind === "managed") return s.name;
  }
  throw new McpfleetError(
    "ERR_NO_MANAGED_SOURCE",
    `registry "${reg.name}" has no managed source to publish into`,
  );
}

const SERVER_FIELDS = new Set([
  "$schema",
  "name",
  "version",
  "description",
  "title",
  "repository",
  "websiteUrl",
  "icons",
  "packages",
  "remotes",
  "_meta",
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isHttpUrl(url: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

/** The entry a publish payload describes; 400 / 413 on a bad payload. */
export function publishedEntry(body: unknown, maxMetaSize: number): ServerEntry {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    fail("ERR_INVALID_ENTRY", "the body must be a JSON object");
  }
  const b = body as Record<string, unknown>;
  const np = nameProblem(b.name);
  if (np !== undefined) fail("ERR_INVALID_ENTRY", np);
  const vp = versionProblem(b.version);
  if (vp !== undefined) fail("ERR_INVALID_ENTRY", vp);
  for (const f of ["description", "title", "url"]) {
    if (b[f] !== undefined && typeof b[f] !== "string")
      fail("ERR_INVALID_ENTRY", `${f} must be a string`);
  }
  if (typeof b.url === "string" && !isHttpUrl(b.url)) {
    fail("ERR_INVALID_ENTRY", `url must be an http(s) URL, got "${b.url.slice(0, 200)}"`);
  }
  if (b._meta !== undefined) {
    if (b._meta === null || typeof b._meta !== "object" || Array.isArray(b._meta)) {
      fail("ERR_INVALID_ENTRY", "_meta must be an object");
    }
    const size = Buffer.byteLength(JSON.stringify(b._meta));
    if (size > maxMetaSize) {
      fail("ERR_META_TOO_LARGE", `_meta is ${size} bytes; the limit is ${maxMetaSize}`);
    }
  }
  for (const f of ["packages", "remotes", "icons"]) {
    if (b[f] === undefined) continue;
    if (!Array.isArray(b[f])) fail("ERR_INVALID_ENTRY", `${f} must be a list`);
    if (!(b[f] as unknown[]).every(isObject)) fail("ERR_INVALID_ENTRY", `${f} must be objects`);
  }
  // A remote is what clients connect to: an http(s) URL, never javascript: or file:.
  for (const [i, r] of ((b.remotes as Record<string, unknown>[] | undefined) ?? []).entries()) {
    if (typeof r.type !== "string" || typeof r.url !== "string" || !isHttpUrl(r.url)) {
      fail("ERR_INVALID_ENTRY", `remotes[${i}] needs a type and an http(s) url`);
    }
  }
  let claims: Record<string, string | string[]> | undefined;
  if (b.claims !== undefined) {
    if (b.claims === null || typeof b.claims !== "object" || Array.isArray(b.claims)) {
      fail("ERR_INVALID_ENTRY", "claims must be an object of strings or string lists");
    }
    for (const [k, v] of Object.entries(b.claims)) {
      const okv =
        typeof v === "string" || (Array.isArray(v) && v.every((x) => typeof x === "string"));
      if (!okv) fail("ERR_INVALID_ENTRY", `claims.${k} must be a string or a list of strings`);
    }
    claims = b.claims as Record<string, string | string[]>;
  }
  const server: ServerJson = { name: b.name as string, version: b.version as string };
  for (const [k, v] of Object.entries(b)) if (SERVER_FIELDS.has(k)) server[k] = v;
  if (b.url !== undefined && b.remotes === undefined) {
    server.remotes = [{ type: "streamable-http", url: b.url }];
  }
  if (server.remotes === undefined && server.packages === undefined) {
    fail("ERR_INVALID_ENTRY", "give url (or remotes or packages): how clients reach the server");
  }
  const entry: ServerEntry = {
    name: server.name,
    version: server.version,
    server,
    tags: [],
    status: "active",
  };
  if (claims !== undefined) entry.claims = claims;
  return entry;
}

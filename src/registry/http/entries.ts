// ToolHive's /v1 entry API over the same store: publish into the server's managed source,
// delete a published version, read and change the claims of a published name, and list the
// entries of a source or of a registry. Only `server` entries are kept here (skills and plugins
// are ToolHive extensions this server does not serve).
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import type { Claims } from "../config/types.js";
import { entryClaimsOf, publishedEntry } from "../formats/publish.js";
import type { SourceRecord, StoredEntry } from "../store/store.js";
import { loadAuthorized, REGISTRY, SOURCE, type RouteContext } from "./context.js";
import { authorizeWrite, manageableVersions, publishInto, serverManagedSource } from "./managed.js";
import { fail } from "./problem.js";
import { CLAIMS, ERRORS, NAME_PARAM, listOf, pathText, problems } from "./schemas.js";
import { ENTRY_PUBLISH_BODY } from "./server-json-schema.js";

const ENTRY_PARAMS = {
  type: "object",
  properties: {
    type: {
      type: "string",
      enum: ["server"],
      description:
        "Entry type: only `server` entries are kept here (ToolHive's `skill` and `plugin` are refused, 400).",
    },
    name: pathText("Entry name, URL-encoded."),
    version: pathText("One version."),
  },
} as const;

// The entry type as ToolHive lists it (`MCP`; its routes' `{type}` parameter says `server`).
const ENTRY_TYPE = { type: "string", const: "MCP" } as const;

/** The title and description of an entry's version, in ToolHive's entry lists. */
const TITLE_AND_DESCRIPTION = {
  title: { type: "string" },
  description: { type: "string" },
} as const;

const SOURCE_ENTRIES = listOf("entries", {
  type: "object",
  properties: {
    name: { type: "string" },
    entryType: ENTRY_TYPE,
    claims: { type: "object", additionalProperties: true },
    versions: {
      type: "array",
      items: {
        type: "object",
        properties: {
          version: { type: "string" },
          ...TITLE_AND_DESCRIPTION,
          createdAt: { type: "string", format: "date-time" },
          status: { type: "string" },
          isLatest: { type: "boolean" },
          publishedAt: { type: "string", format: "date-time" },
          updatedAt: { type: "string", format: "date-time" },
        },
      },
    },
  },
} as const);

const REGISTRY_ENTRIES = listOf("entries", {
  type: "object",
  properties: {
    name: { type: "string" },
    version: { type: "string" },
    entryType: ENTRY_TYPE,
    ...TITLE_AND_DESCRIPTION,
    sourceName: { type: "string" },
    position: { type: "integer", description: "The source's place in the registry." },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
  },
} as const);

function titleAndDescription(e: StoredEntry): { title?: string; description?: string } {
  return {
    ...(typeof e.server.title === "string" ? { title: e.server.title } : {}),
    ...(typeof e.server.description === "string" ? { description: e.server.description } : {}),
  };
}

/** Only server entries are kept here. */
function serverType(type: string): void {
  if (type !== "server") {
    fail("ERR_INVALID_PARAMETER", `only server entries are kept here, not ${type} entries`);
  }
}

/**
 * What every route on one server entry starts with: the caller may manage entries, the entry is
 * of the one type kept, and the managed source they live in.
 */
async function managedServerEntries(
  ctx: RouteContext,
  req: FastifyRequest<{ Params: { type: string } }>,
): Promise<SourceRecord> {
  ctx.authorizer.authorize(req.principal, { kind: "manageEntries" });
  serverType(req.params.type);
  return serverManagedSource(ctx);
}

/** Every entry a list of sources serves (deleted versions too), read a batch at a time. */
async function allEntries(ctx: RouteContext, sources: string[]): Promise<StoredEntry[]> {
  const out: StoredEntry[] = [];
  let after: { name: string; version: string } | undefined;
  for (;;) {
    const rows = await ctx.store.listEntries(sources, {
      limit: 1000,
      includeDeleted: true,
      ...(after !== undefined ? { after } : {}),
    });
    out.push(...rows);
    const tail = rows[rows.length - 1];
    if (rows.length < 1000 || tail === undefined) return out;
    after = { name: tail.name, version: tail.version };
  }
}

const tags = ["entries"];

type PublishRoute = {
  Body: { server?: unknown; claims?: unknown; skill?: unknown; plugin?: unknown };
};
type EntryNameRoute = { Params: { type: string; name: string } };
type EntryVersionRoute = { Params: { type: string; name: string; version: string } };
type ClaimsRoute = EntryNameRoute & { Body: { claims: Claims } };
type Named = { Params: { name: string } };

const PUBLISH_SCHEMA = {
  tags,
  summary: "Publish a server version into the managed source",
  description:
    "ToolHive's form of publish: `server` is a server.json (the same rules as the official publish), `claims` the entry's claims. Answers 201 with the server.json as stored (ToolHive's answer). A publisher whose claims do not cover the managed source's claims is refused (403).",
  body: ENTRY_PUBLISH_BODY,
  response: {
    201: { type: "object", additionalProperties: true, description: "The server.json." },
    ...ERRORS,
    ...problems(409, 413, 415),
  },
};

const DELETE_SCHEMA = {
  tags,
  summary: "Remove a published version",
  description:
    "Removes the version from the managed source for good (its number may be published again); the official API's DELETE marks it deleted instead.",
  params: ENTRY_PARAMS,
  response: { 204: { type: "null", description: "Removed" }, ...ERRORS, ...problems(404, 409) },
};

const GET_CLAIMS_SCHEMA = {
  tags,
  summary: "Read the claims of a published name",
  description: "The claims every version of the name carries.",
  params: ENTRY_PARAMS,
  response: {
    200: {
      type: "object",
      properties: { claims: { type: "object", additionalProperties: true } },
    },
    ...ERRORS,
    ...problems(404, 409),
  },
};

const PUT_CLAIMS_SCHEMA = {
  tags,
  summary: "Change the claims of a published name",
  description:
    "Every version of the name takes the new claims. The caller's claims must cover the old claims and the new ones.",
  params: ENTRY_PARAMS,
  body: {
    type: "object",
    required: ["claims"],
    properties: { claims: CLAIMS },
    additionalProperties: false,
  },
  response: {
    204: { type: "null", description: "Changed" },
    ...ERRORS,
    ...problems(404, 409, 413, 415),
  },
};

const SOURCE_ENTRIES_SCHEMA = {
  tags,
  summary: "List the entries of a source",
  description: "Each name once, with its claims and versions (deleted ones too).",
  params: NAME_PARAM,
  response: { 200: SOURCE_ENTRIES, ...ERRORS, ...problems(404) },
};

const REGISTRY_ENTRIES_SCHEMA = {
  tags,
  summary: "List the entries of a registry",
  description:
    "Every version the registry serves, with the source it comes from and that source's position in the registry.",
  params: NAME_PARAM,
  response: { 200: REGISTRY_ENTRIES, ...ERRORS, ...problems(404) },
};

function visible(ctx: RouteContext, req: FastifyRequest, list: StoredEntry[]): StoredEntry[] {
  return list.filter((e) => ctx.authorizer.entryVisible(req.principal, e.claims));
}

/** The server.json of a ToolHive publish body (with the entry's claims), or its refusal. */
function serverOfBody(body: Record<string, unknown> | null): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    fail("ERR_INVALID_ENTRY", "the body must be a JSON object");
  }
  if (body.skill !== undefined || body.plugin !== undefined) {
    fail("ERR_INVALID_ENTRY", "only server entries are kept here, not skills or plugins");
  }
  if (body.server === null || typeof body.server !== "object" || Array.isArray(body.server)) {
    fail("ERR_INVALID_ENTRY", "give the entry as `server` (a server.json object)");
  }
  return {
    ...(body.server as Record<string, unknown>),
    ...(body.claims !== undefined ? { claims: body.claims } : {}),
  };
}

async function publishEntry(
  ctx: RouteContext,
  req: FastifyRequest<PublishRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  ctx.authorizer.authorize(req.principal, { kind: "manageEntries" });
  const server = serverOfBody(req.body);
  const managed = await serverManagedSource(ctx);
  const entry = publishedEntry(server, ctx.maxMetaSize);
  const stored = await publishInto(ctx, req.principal, managed, entry);
  // ToolHive answers with the server.json as stored; the official publish, with the item.
  return reply
    .code(201)
    .header("content-type", "application/json; charset=utf-8")
    .send(JSON.stringify(stored.server));
}

async function deleteEntryVersion(
  ctx: RouteContext,
  req: FastifyRequest<EntryVersionRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const managed = await managedServerEntries(ctx, req);
  const { name, version } = req.params;
  await manageableVersions(ctx, req.principal, managed, name, version);
  if (!(await ctx.store.deleteVersion(managed.name, name, version))) {
    fail("ERR_VERSION_NOT_FOUND", `the managed source has no ${name} version ${version}`);
  }
  return reply.code(204).send();
}

async function getEntryClaims(ctx: RouteContext, req: FastifyRequest<EntryNameRoute>) {
  const managed = await managedServerEntries(ctx, req);
  const [first] = await manageableVersions(ctx, req.principal, managed, req.params.name);
  return { claims: first?.claims ?? {} };
}

async function putEntryClaims(
  ctx: RouteContext,
  req: FastifyRequest<ClaimsRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const managed = await managedServerEntries(ctx, req);
  await manageableVersions(ctx, req.principal, managed, req.params.name);
  const claims = entryClaimsOf(req.body.claims);
  authorizeWrite(ctx, req.principal, managed, undefined, claims);
  await ctx.store.setEntryClaims(managed.name, req.params.name, claims);
  return reply.code(204).send();
}

async function sourceEntries(ctx: RouteContext, req: FastifyRequest<Named>) {
  const s = await loadAuthorized(ctx, req.principal, SOURCE, req.params.name);
  const byName = new Map<string, StoredEntry[]>();
  for (const e of visible(ctx, req, await allEntries(ctx, [s.name]))) {
    byName.set(e.name, [...(byName.get(e.name) ?? []), e]);
  }
  return {
    entries: [...byName].map(([name, versions]) => ({
      name,
      entryType: "MCP",
      // No claims: no key, as ToolHive answers.
      ...(Object.keys(versions[0]?.claims ?? {}).length > 0 ? { claims: versions[0]?.claims } : {}),
      versions: versions.map((v) => ({
        version: v.version,
        ...titleAndDescription(v),
        createdAt: v.publishedAt,
        status: v.status,
        isLatest: v.isLatest,
        publishedAt: v.publishedAt,
        updatedAt: v.updatedAt,
      })),
    })),
  };
}

async function registryEntries(ctx: RouteContext, req: FastifyRequest<Named>) {
  const r = await loadAuthorized(ctx, req.principal, REGISTRY, req.params.name);
  const reg = await ctx.views.registry(r.name);
  const sources = reg?.sources ?? r.sources;
  return {
    entries: visible(ctx, req, await allEntries(ctx, sources)).map((e) => ({
      name: e.name,
      version: e.version,
      entryType: "MCP",
      ...titleAndDescription(e),
      sourceName: e.source,
      position: r.sources.indexOf(e.source),
      createdAt: e.publishedAt,
      updatedAt: e.updatedAt,
    })),
  };
}

export const entryRoutes: FastifyPluginCallback<RouteContext> = (app, ctx, done) => {
  app.post<PublishRoute>(
    "/v1/entries",
    { attachValidation: true, schema: PUBLISH_SCHEMA },
    (req, reply) => publishEntry(ctx, req, reply),
  );
  app.delete<EntryVersionRoute>(
    "/v1/entries/:type/:name/versions/:version",
    { schema: DELETE_SCHEMA },
    (req, reply) => deleteEntryVersion(ctx, req, reply),
  );
  app.get<EntryNameRoute>("/v1/entries/:type/:name/claims", { schema: GET_CLAIMS_SCHEMA }, (req) =>
    getEntryClaims(ctx, req),
  );
  app.put<ClaimsRoute>(
    "/v1/entries/:type/:name/claims",
    { schema: PUT_CLAIMS_SCHEMA },
    (req, reply) => putEntryClaims(ctx, req, reply),
  );
  app.get<Named>("/v1/sources/:name/entries", { schema: SOURCE_ENTRIES_SCHEMA }, (req) =>
    sourceEntries(ctx, req),
  );
  app.get<Named>("/v1/registries/:name/entries", { schema: REGISTRY_ENTRIES_SCHEMA }, (req) =>
    registryEntries(ctx, req),
  );
  done();
};

// Writing into a registry's managed source under the consumer API's prefixes, as the official
// registry does: publish a version, delete one (its status becomes `deleted`), and set the
// lifecycle status of one version or of every version of a server.
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { McpfleetError } from "../../errors.js";
import { publishedEntry } from "../formats/publish.js";
import {
  ENTRY_STATUSES,
  type EntryStatus,
  type RegistryRecord,
  type Store,
  type StoredEntry,
} from "../store/store.js";
import { readableRegistry, registryParam, type RegistryApiOptions } from "./context.js";
import { REGISTRY_PARAM } from "./consumer.js";
import { fail } from "./problem.js";
import { ERR, ERRORS, ITEM, LIST } from "./schemas.js";
import { itemOf } from "./views.js";

/** The registry's managed source: where publish, delete and status changes go. */
export async function managedSourceOf(store: Store, reg: RegistryRecord): Promise<string> {
  for (const name of reg.sources) {
    const s = await store.getSource(name);
    if (s?.kind === "managed") return s.name;
  }
  throw new McpfleetError(
    "ERR_NO_MANAGED_SOURCE",
    `registry "${reg.name}" has no managed source to publish into`,
  );
}

const PUBLISH_BODY = {
  type: "object",
  description:
    "A server.json document (the official rules: name, description of at most 100 characters, exact package versions, a transport for each package, http(s) remotes of type streamable-http or sse) plus `url` (a streamable-http remote) and the entry's `claims`.",
  properties: {
    name: { type: "string", description: "namespace/name, 3 to 200 characters." },
    version: { type: "string", description: "One exact version (not a range, not `latest`)." },
    description: { type: "string", description: "1 to 100 characters." },
    title: { type: "string", description: "1 to 100 characters." },
    url: { type: "string", description: "URL of the MCP server (a streamable-http remote)." },
    packages: { type: "array", items: { type: "object", additionalProperties: true } },
    remotes: { type: "array", items: { type: "object", additionalProperties: true } },
    claims: {
      type: "object",
      description: "Claims of the entry; every later version must carry the same.",
      additionalProperties: true,
    },
    _meta: { type: "object", description: "Publisher-provided metadata (size-limited)." },
  },
  additionalProperties: true,
} as const;

const STATUS_BODY = {
  type: "object",
  required: ["status"],
  properties: {
    status: { type: "string", enum: ENTRY_STATUSES },
    statusMessage: {
      type: "string",
      maxLength: 2000,
      description: "Why (shown to clients, e.g. the version to move to); cleared when absent.",
    },
  },
  additionalProperties: false,
} as const;

interface StatusBody {
  status: EntryStatus;
  statusMessage?: string;
}

export const publishRoutes: FastifyPluginCallback<RegistryApiOptions> = (app, opts, done) => {
  const { store, authorizer } = opts;
  const hide = opts.hide;
  const tags = ["publish"];
  const registryParams = opts.registry === undefined ? REGISTRY_PARAM : {};
  const nameParams = {
    type: "object",
    properties: { ...registryParams, name: { type: "string", description: "Server name." } },
  } as const;
  const versionParams = {
    type: "object",
    properties: {
      ...registryParams,
      name: { type: "string", description: "Server name." },
      version: { type: "string", description: "One exact version." },
    },
  } as const;

  /** The registry and its managed source, with the caller's role checked. */
  async function managedOf(req: FastifyRequest): Promise<{ reg: RegistryRecord; managed: string }> {
    const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
    // The role first, so a caller without it learns nothing about the registry's sources.
    authorizer.authorize(req.principal, { kind: "manageEntries", registry: reg.name });
    return { reg, managed: await managedSourceOf(store, reg) };
  }

  /**
   * The published versions of a name the caller may manage (one version, or all): 404 when
   * there are none, and a name whose claims the caller does not hold answers as a missing one.
   */
  async function manageableVersions(
    req: FastifyRequest,
    reg: RegistryRecord,
    managed: string,
    name: string,
    version?: string,
  ): Promise<StoredEntry[]> {
    const all = await store.listVersions([managed], name, { includeDeleted: true });
    const found = version === undefined ? all : all.filter((e) => e.version === version);
    const first = found[0];
    if (first === undefined || !authorizer.entryVisible(req.principal, first.claims)) {
      fail(
        version === undefined ? "ERR_SERVER_NOT_FOUND" : "ERR_VERSION_NOT_FOUND",
        `the managed source of "${reg.name}" has no ${name}${version === undefined ? "" : ` version ${version}`}`,
      );
    }
    authorizer.authorize(req.principal, {
      kind: "manageEntries",
      registry: reg.name,
      ...(first.claims !== undefined ? { entryClaims: first.claims } : {}),
    });
    return found;
  }

  const sendItem = (reply: FastifyReply, e: StoredEntry) =>
    reply
      .code(200)
      .header("content-type", "application/json; charset=utf-8")
      .send(JSON.stringify(itemOf(e)));

  app.post<{ Body: Record<string, unknown> }>(
    "/publish",
    {
      // The handler checks the body against the server.json rules and names every offending
      // field; the schema's own verdict would name only the first.
      attachValidation: true,
      schema: {
        hide,
        tags,
        summary: "Publish a server version into the registry's managed source",
        description:
          "Answers 200 with the stored version, as the official registry does. Versions are immutable: publishing an existing version (also a deleted one) is refused with 409. The latest version is recomputed (semver order; pre-releases only when no release exists; never a deleted version). A document breaking the server.json rules is refused with 400 and a problem whose `errors` name each field.",
        params: { type: "object", properties: registryParams },
        body: PUBLISH_BODY,
        response: { 200: ITEM, ...ERRORS, 409: ERR, 413: ERR, 415: ERR },
      },
    },
    async (req, reply) => {
      const { reg, managed } = await managedOf(req);
      const entry = publishedEntry(req.body, opts.maxMetaSize);
      authorizer.authorize(req.principal, {
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
      return sendItem(
        reply.header(
          "location",
          `/${reg.name}/v0.1/servers/${encodeURIComponent(stored.name)}/versions/${encodeURIComponent(stored.version)}`,
        ),
        stored,
      );
    },
  );

  app.delete<{ Params: { name: string; version: string } }>(
    "/servers/:name/versions/:version",
    {
      schema: {
        hide,
        tags,
        summary: "Delete a published server version",
        description:
          "Sets the version's status to `deleted` and answers 200 with it, as the official registry does: it leaves the listings (see include_deleted) and is never latest, the latest version is recomputed, and its version number is not published again. PATCH its status to `active` to restore it.",
        params: versionParams,
        response: { 200: ITEM, ...ERRORS, 409: ERR },
      },
    },
    async (req, reply) => {
      const { reg, managed } = await managedOf(req);
      const { name, version } = req.params;
      await manageableVersions(req, reg, managed, name, version);
      const [changed] = await store.setVersionStatus(managed, name, version, "deleted");
      if (changed === undefined) fail("ERR_VERSION_NOT_FOUND", `${name} has no version ${version}`);
      return sendItem(reply, changed);
    },
  );

  app.patch<{ Params: { name: string; version: string }; Body: StatusBody }>(
    "/servers/:name/versions/:version/status",
    {
      schema: {
        hide,
        tags,
        summary: "Set the lifecycle status of one version",
        description:
          "`active`, `deprecated` (still served and installable; clients are told why in statusMessage) or `deleted` (hidden from listings, never latest). statusChangedAt records when.",
        params: versionParams,
        body: STATUS_BODY,
        response: { 200: ITEM, ...ERRORS, 413: ERR, 415: ERR },
      },
    },
    async (req, reply) => {
      const { reg, managed } = await managedOf(req);
      const { name, version } = req.params;
      await manageableVersions(req, reg, managed, name, version);
      const [changed] = await store.setVersionStatus(
        managed,
        name,
        version,
        req.body.status,
        req.body.statusMessage,
      );
      if (changed === undefined) fail("ERR_VERSION_NOT_FOUND", `${name} has no version ${version}`);
      return sendItem(reply, changed);
    },
  );

  app.patch<{ Params: { name: string }; Body: StatusBody }>(
    "/servers/:name/status",
    {
      schema: {
        hide,
        tags,
        summary: "Set the lifecycle status of every version of a server",
        description: "As the one-version form, for all versions at once; answers with them all.",
        params: nameParams,
        body: STATUS_BODY,
        response: { 200: LIST, ...ERRORS, 413: ERR, 415: ERR },
      },
    },
    async (req, reply) => {
      const { reg, managed } = await managedOf(req);
      const { name } = req.params;
      await manageableVersions(req, reg, managed, name);
      const changed = await store.setVersionStatus(
        managed,
        name,
        "all",
        req.body.status,
        req.body.statusMessage,
      );
      return reply
        .header("content-type", "application/json; charset=utf-8")
        .send(
          JSON.stringify({ servers: changed.map(itemOf), metadata: { count: changed.length } }),
        );
    },
  );
  done();
};

// Writing into a registry's managed source under the consumer API's prefixes, as the official
// registry does: publish a version, delete one (its status becomes `deleted`), and set the
// lifecycle status of one version or of every version of a server.
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { publishedEntry } from "../formats/publish.js";
import {
  ENTRY_STATUSES,
  type EntryStatus,
  type RegistryRecord,
  type SourceRecord,
  type StoredEntry,
} from "../store/store.js";
import { readableRegistry, registryParam, type RegistryApiOptions } from "./context.js";
import { REGISTRY_PARAM } from "./consumer.js";
import { authorizeWrite, manageableVersions, managedSourceOf, publishInto } from "./managed.js";
import { fail } from "./problem.js";
import { ERRORS, ITEM, LIST, pathText, problems } from "./schemas.js";
import { PUBLISH_BODY } from "./server-json-schema.js";
import { itemOf } from "./views.js";

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

type VersionRoute = { Params: { name: string; version: string } };
type VersionStatusRoute = VersionRoute & { Body: StatusBody };
type ServerStatusRoute = { Params: { name: string }; Body: StatusBody };

/** The route schemas, for a mount that is documented or hidden and names its registry or not. */
function schemas(opts: RegistryApiOptions) {
  const common = { hide: opts.hide, tags: ["publish"] };
  const registryParams = opts.registry === undefined ? REGISTRY_PARAM : {};
  const nameParams = {
    type: "object",
    properties: { ...registryParams, name: pathText("Server name.") },
  } as const;
  const versionParams = {
    type: "object",
    properties: {
      ...registryParams,
      name: pathText("Server name."),
      version: pathText("One exact version."),
    },
  } as const;
  return {
    publish: {
      ...common,
      summary: "Publish a server version into the registry's managed source",
      description:
        "Answers 200 with the stored version, as the official registry does. Versions are immutable: publishing an existing version (also a deleted one) is refused with 409. The latest version is recomputed (semver order; pre-releases only when no release exists; never a deleted version). A document breaking the server.json rules is refused with 400 and a problem whose `errors` name each field.",
      params: { type: "object", properties: registryParams },
      body: PUBLISH_BODY,
      response: { 200: ITEM, ...ERRORS, ...problems(404, 409, 413, 415) },
    },
    deleteVersion: {
      ...common,
      summary: "Delete a published server version",
      description:
        "Sets the version's status to `deleted` and answers 200 with it, as the official registry does: it leaves the listings (see include_deleted) and is never latest, the latest version is recomputed, and its version number is not published again. PATCH its status to `active` to restore it.",
      params: versionParams,
      response: { 200: ITEM, ...ERRORS, ...problems(404, 409) },
    },
    versionStatus: {
      ...common,
      summary: "Set the lifecycle status of one version",
      description:
        "`active`, `deprecated` (still served and installable; clients are told why in statusMessage) or `deleted` (hidden from listings, never latest). statusChangedAt records when.",
      params: versionParams,
      body: STATUS_BODY,
      response: { 200: ITEM, ...ERRORS, ...problems(404, 409, 413, 415) },
    },
    serverStatus: {
      ...common,
      summary: "Set the lifecycle status of every version of a server",
      description: "As the one-version form, for all versions at once; answers with them all.",
      params: nameParams,
      body: STATUS_BODY,
      response: { 200: LIST, ...ERRORS, ...problems(404, 409, 413, 415) },
    },
  };
}

/** The registry and its managed source, with the caller's right to write checked. */
async function managedOf(
  opts: RegistryApiOptions,
  req: FastifyRequest,
): Promise<{ reg: RegistryRecord; managed: SourceRecord }> {
  const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
  // The role first, so a caller without it learns nothing about the registry's sources.
  opts.authorizer.authorize(req.principal, { kind: "manageEntries", registry: reg.name });
  const managed = await managedSourceOf(opts, reg);
  authorizeWrite(opts, req.principal, managed, reg.name);
  return { reg, managed };
}

function sendItem(reply: FastifyReply, e: StoredEntry): FastifyReply {
  return reply
    .code(200)
    .header("content-type", "application/json; charset=utf-8")
    .send(JSON.stringify(itemOf(e)));
}

async function publish(
  opts: RegistryApiOptions,
  req: FastifyRequest<{ Body: Record<string, unknown> }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { reg, managed } = await managedOf(opts, req);
  const entry = publishedEntry(req.body, opts.maxMetaSize, { requireSchema: true });
  const stored = await publishInto(opts, req.principal, managed, entry, reg.name);
  return sendItem(
    reply.header(
      "location",
      `/${reg.name}/v0.1/servers/${encodeURIComponent(stored.name)}/versions/${encodeURIComponent(stored.version)}`,
    ),
    stored,
  );
}

/** Sets the status of one version of a managed name; answers with the version as changed. */
async function changeVersionStatus(
  opts: RegistryApiOptions,
  req: FastifyRequest<VersionRoute>,
  reply: FastifyReply,
  status: EntryStatus,
  message?: string,
): Promise<FastifyReply> {
  const { reg, managed } = await managedOf(opts, req);
  const { name, version } = req.params;
  await manageableVersions(opts, req.principal, managed, name, version, reg.name);
  const [changed] = await opts.store.setVersionStatus(managed.name, name, version, status, message);
  if (changed === undefined) fail("ERR_VERSION_NOT_FOUND", `${name} has no version ${version}`);
  return sendItem(reply, changed);
}

/** The official API's DELETE: the version is marked deleted, not removed. */
function deleteVersion(
  opts: RegistryApiOptions,
  req: FastifyRequest<VersionRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  return changeVersionStatus(opts, req, reply, "deleted");
}

function setVersionStatus(
  opts: RegistryApiOptions,
  req: FastifyRequest<VersionStatusRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  return changeVersionStatus(opts, req, reply, req.body.status, req.body.statusMessage);
}

async function setServerStatus(
  opts: RegistryApiOptions,
  req: FastifyRequest<ServerStatusRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { reg, managed } = await managedOf(opts, req);
  const { name } = req.params;
  await manageableVersions(opts, req.principal, managed, name, undefined, reg.name);
  const changed = await opts.store.setVersionStatus(
    managed.name,
    name,
    "all",
    req.body.status,
    req.body.statusMessage,
  );
  return reply
    .header("content-type", "application/json; charset=utf-8")
    .send(JSON.stringify({ servers: changed.map(itemOf), metadata: { count: changed.length } }));
}

export const publishRoutes: FastifyPluginCallback<RegistryApiOptions> = (app, opts, done) => {
  const schema = schemas(opts);
  app.post<{ Body: Record<string, unknown> }>(
    "/publish",
    // The handler checks the body against the server.json rules and names every offending
    // field; the schema's own verdict would name only the first.
    { attachValidation: true, schema: schema.publish },
    (req, reply) => publish(opts, req, reply),
  );
  app.delete<VersionRoute>(
    "/servers/:name/versions/:version",
    { schema: schema.deleteVersion },
    (req, reply) => deleteVersion(opts, req, reply),
  );
  app.patch<VersionStatusRoute>(
    "/servers/:name/versions/:version/status",
    { schema: schema.versionStatus },
    (req, reply) => setVersionStatus(opts, req, reply),
  );
  app.patch<ServerStatusRoute>(
    "/servers/:name/status",
    { schema: schema.serverStatus },
    (req, reply) => setServerStatus(opts, req, reply),
  );
  done();
};

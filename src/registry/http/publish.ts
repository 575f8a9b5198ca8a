// Publishing into a registry's managed source and deleting published versions, under the same
// prefixes as the consumer API.
import type { FastifyPluginCallback } from "fastify";
import { McpfleetError } from "../../errors.js";
import { publishedEntry } from "../formats/publish.js";
import type { RegistryRecord, Store } from "../store/store.js";
import { readableRegistry, registryParam, type RegistryApiOptions } from "./context.js";
import { REGISTRY_PARAM } from "./consumer.js";
import { fail } from "./problem.js";
import { ERR, ERRORS, ITEM } from "./schemas.js";
import { itemOf } from "./views.js";

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

export const publishRoutes: FastifyPluginCallback<RegistryApiOptions> = (app, opts, done) => {
  const { store, authorizer } = opts;
  const hide = opts.hide;
  const tags = ["publish"];
  const registryParams = opts.registry === undefined ? REGISTRY_PARAM : {};

  app.post<{ Body: Record<string, unknown> }>(
    "/publish",
    {
      schema: {
        hide,
        tags,
        summary: "Publish a server version into the registry's managed source",
        description:
          "Versions are immutable: publishing an existing version is refused with 409. The latest version is recomputed (semver order; pre-releases only when no release exists). Besides name, version, url and description, any server.json field may be given (title, repository, packages, remotes, websiteUrl, _meta).",
        params: { type: "object", properties: registryParams },
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
        response: { 201: ITEM, ...ERRORS, 409: ERR, 413: ERR, 415: ERR },
      },
    },
    async (req, reply) => {
      const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
      // The role first, so a caller without it learns nothing about the registry's sources.
      authorizer.authorize(req.principal, { kind: "manageEntries", registry: reg.name });
      const managed = await managedSourceOf(store, reg);
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

  app.delete<{ Params: { name: string; version: string } }>(
    "/servers/:name/versions/:version",
    {
      schema: {
        hide,
        tags,
        summary: "Delete a published server version",
        description:
          "Removes one version from the registry's managed source; the latest version is recomputed and the name is freed when its last version goes.",
        params: {
          type: "object",
          properties: { ...registryParams, name: { type: "string" }, version: { type: "string" } },
        },
        response: { 204: { description: "Deleted", type: "null" }, ...ERRORS, 409: ERR },
      },
    },
    async (req, reply) => {
      const reg = await readableRegistry(opts, req.principal, registryParam(opts, req.params));
      authorizer.authorize(req.principal, { kind: "manageEntries", registry: reg.name });
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
        (target.claims !== undefined && !authorizer.entryVisible(req.principal, target.claims))
      ) {
        notFound();
      }
      authorizer.authorize(req.principal, {
        kind: "manageEntries",
        registry: reg.name,
        ...(target?.claims !== undefined ? { entryClaims: target.claims } : {}),
      });
      const ok = await store.deleteVersion(managed, req.params.name, req.params.version);
      if (!ok) notFound();
      return reply.code(204).send();
    },
  );
  done();
};

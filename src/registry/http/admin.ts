// The admin API: sources and registries (list, get, create or replace with PUT, delete) and
// sync triggers. Resources from the config file are read-only here (403); a source a registry
// uses cannot be deleted (409).
import type { FastifyInstance } from "fastify";
import { McpfleetError } from "../../errors.js";
import { defaultSchemaSet, REGISTRY_CONFIG_SCHEMA_ID } from "../../schema/index.js";
import { sourceKind, type Claims, type SourceConfig } from "../config/types.js";
import { checkLocation, locationKey, type LocationPolicy } from "../sources/location.js";
import type { SyncScheduler } from "../sources/scheduler.js";
import type { RegistryRecord, SourceRecord, Store, SyncStatus } from "../store/store.js";
import type { Authorizer } from "./auth.js";
import { fail } from "./problem.js";

/** A PUT body with the path's name: a name in the body must agree with the path. */
function bodyNamed(raw: Record<string, unknown>, name: string): Record<string, unknown> {
  if (raw.name !== undefined && raw.name !== name) {
    fail(
      "ERR_INVALID_RESOURCE",
      `body name ${JSON.stringify(raw.name)} differs from the path's "${name}"`,
    );
  }
  return { ...raw, name };
}

export interface AdminDeps {
  store: Store;
  scheduler: SyncScheduler;
  authorizer: Authorizer;
  /** Where sources created here may read, and the directory relative paths start from. */
  locations: { policy: LocationPolicy; baseDir: string };
}

const ERR = { $ref: "Problem#" };
const ERRORS = { 400: ERR, 401: ERR, 403: ERR, 404: ERR };

const STATUS_SCHEMA = {
  type: "object",
  description: "Sync status of a source.",
  properties: {
    phase: { type: "string", enum: ["Pending", "Syncing", "Ready", "Failed"] },
    lastAttempt: { type: "string", format: "date-time" },
    lastSuccess: { type: "string", format: "date-time" },
    message: { type: "string" },
    entryCount: { type: "integer" },
    contentHash: { type: "string" },
  },
} as const;

const SOURCE_VIEW = {
  type: "object",
  description:
    "A source: its configuration (the config file's shape), kind, origin (config or api) and sync status.",
  properties: {
    name: { type: "string" },
    kind: { type: "string" },
    origin: { type: "string", enum: ["config", "api"] },
    readOnly: { type: "boolean" },
    config: { type: "object", additionalProperties: true },
    status: STATUS_SCHEMA,
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
  },
  additionalProperties: true,
} as const;

const REGISTRY_VIEW = {
  type: "object",
  properties: {
    name: { type: "string" },
    sources: { type: "array", items: { type: "string" } },
    claims: { type: "object", additionalProperties: true },
    origin: { type: "string", enum: ["config", "api"] },
    readOnly: { type: "boolean" },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
  },
  additionalProperties: true,
} as const;

const NAME_PARAM = {
  type: "object",
  properties: { name: { type: "string", description: "Resource name (a DNS label)." } },
} as const;

function sourceView(s: SourceRecord, status: SyncStatus | undefined): Record<string, unknown> {
  return {
    name: s.name,
    kind: s.kind,
    origin: s.origin,
    readOnly: s.origin === "config",
    config: { name: s.name, ...s.config },
    status: status ?? { phase: "Pending", entryCount: 0 },
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

function registryView(r: RegistryRecord): Record<string, unknown> {
  return { ...r, readOnly: r.origin === "config" };
}

function validate(def: string, doc: unknown, what: string): void {
  const issues = defaultSchemaSet()
    .validateSchema(`${REGISTRY_CONFIG_SCHEMA_ID}#/$defs/${def}`, doc)
    .filter((i) => i.unknownField !== true);
  if (issues.length > 0) {
    fail(
      "ERR_INVALID_RESOURCE",
      `invalid ${what}: ${issues.map((i) => `${i.path || "/"}: ${i.message}`).join("; ")}`,
    );
  }
}

function claimsOf(v: unknown): Claims | undefined {
  return v === undefined || v === null ? undefined : (v as Claims);
}

export function registerAdmin(app: FastifyInstance, deps: AdminDeps): void {
  const { store, scheduler, authorizer } = deps;
  const tags = ["admin"];

  app.get(
    "/v1/sources",
    {
      schema: {
        tags,
        summary: "List sources",
        response: {
          200: { type: "object", properties: { sources: { type: "array", items: SOURCE_VIEW } } },
          ...ERRORS,
        },
      },
    },
    async (req) => {
      authorizer.authorize(req.principal, { kind: "manageSources" });
      const [sources, status] = await Promise.all([store.listSources(), store.listStatus()]);
      return {
        sources: sources
          .filter((s) => authorizer.resourceVisible(req.principal, claimsOf(s.config.claims)))
          .map((s) => sourceView(s, status.get(s.name))),
      };
    },
  );

  app.get<{ Params: { name: string } }>(
    "/v1/sources/:name",
    {
      schema: {
        tags,
        summary: "Get a source with its sync status",
        params: NAME_PARAM,
        response: { 200: SOURCE_VIEW, ...ERRORS },
      },
    },
    async (req) => {
      const s = await store.getSource(req.params.name);
      if (s === undefined) fail("ERR_SOURCE_NOT_FOUND", `no source named "${req.params.name}"`);
      const claims = claimsOf(s.config.claims);
      authorizer.authorize(req.principal, {
        kind: "manageSources",
        hide: true,
        name: s.name,
        ...(claims ? { claims } : {}),
      });
      return sourceView(s, await store.getStatus(s.name));
    },
  );

  app.put<{ Params: { name: string }; Body: Record<string, unknown> }>(
    "/v1/sources/:name",
    {
      schema: {
        tags,
        summary: "Create or replace a source",
        description:
          "The body is a source as in the configuration file (name optional; when given it must match the path). Sources from the configuration file cannot be changed (403). At most one source is managed.",
        params: NAME_PARAM,
        body: { type: "object", additionalProperties: true },
        response: { 200: SOURCE_VIEW, 201: SOURCE_VIEW, ...ERRORS, 409: ERR, 413: ERR, 415: ERR },
      },
    },
    async (req, reply) => {
      const name = req.params.name;
      // The role before the body: a caller without it costs no validation work.
      authorizer.authorize(req.principal, { kind: "manageSources" });
      const body = bodyNamed(req.body, name);
      validate("Source", body, "source");
      const cfg = body as unknown as SourceConfig;
      const claims = claimsOf(cfg.claims);
      const existing = await store.getSource(name);
      if (existing !== undefined) {
        const had = claimsOf(existing.config.claims);
        authorizer.authorize(req.principal, {
          kind: "manageSources",
          hide: true,
          name,
          ...(had ? { claims: had } : {}),
        });
      }
      authorizer.authorize(req.principal, { kind: "manageSources", ...(claims ? { claims } : {}) });
      if (existing?.origin === "config") {
        fail(
          "ERR_CONFIG_RESOURCE_READONLY",
          `source "${name}" is defined in the configuration file; change it there`,
        );
      }
      await checkLocation(cfg, deps.locations.policy, deps.locations.baseDir);
      // Another tenant's data stays theirs: a location some source reads may be read by a new
      // one only when the caller also manages that source.
      const key = locationKey(cfg, deps.locations.baseDir);
      if (key !== undefined) {
        for (const other of await store.listSources()) {
          if (other.name === name) continue;
          const otherCfg = { ...(other.config as unknown as SourceConfig), name: other.name };
          if (
            locationKey(otherCfg, deps.locations.baseDir) === key &&
            !authorizer.resourceVisible(req.principal, claimsOf(other.config.claims))
          ) {
            fail(
              "ERR_SOURCE_LOCATION_REFUSED",
              "a source you do not manage reads this location; ask its administrator",
            );
          }
        }
      }
      const kind = sourceKind(cfg);
      if (kind === "managed") {
        const other = (await store.listSources()).find(
          (s) => s.kind === "managed" && s.name !== name,
        );
        if (other !== undefined) {
          throw new McpfleetError(
            "ERR_INVALID_RESOURCE",
            `source "${other.name}" is already the managed source; at most one source is managed`,
          );
        }
      }
      const { name: _n, ...config } = cfg;
      const { created } = await store.putSource(name, kind, config, "api");
      await scheduler.reconcile();
      const s = await store.getSource(name);
      return reply
        .code(created ? 201 : 200)
        .send(sourceView(s as SourceRecord, await store.getStatus(name)));
    },
  );

  app.delete<{ Params: { name: string } }>(
    "/v1/sources/:name",
    {
      schema: {
        tags,
        summary: "Delete a source and its entries",
        params: NAME_PARAM,
        response: { 204: { type: "null", description: "Deleted" }, ...ERRORS, 409: ERR },
      },
    },
    async (req, reply) => {
      const s = await store.getSource(req.params.name);
      if (s === undefined) fail("ERR_SOURCE_NOT_FOUND", `no source named "${req.params.name}"`);
      const claims = claimsOf(s.config.claims);
      authorizer.authorize(req.principal, {
        kind: "manageSources",
        hide: true,
        name: s.name,
        ...(claims ? { claims } : {}),
      });
      if (s.origin === "config") {
        fail(
          "ERR_CONFIG_RESOURCE_READONLY",
          `source "${s.name}" is defined in the configuration file; remove it there`,
        );
      }
      await store.deleteSource(s.name);
      await scheduler.reconcile();
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { name: string }; Querystring: { wait?: string } }>(
    "/v1/sources/:name/sync",
    {
      schema: {
        tags,
        summary: "Sync a source now",
        description:
          "Starts a sync of a git, api, url or file source (joining one already running) and answers 202 at once; with `wait=true` it answers 200 when the sync has finished, with its outcome.",
        params: NAME_PARAM,
        querystring: {
          type: "object",
          properties: { wait: { type: "string", enum: ["true", "false"] } },
        },
        response: { 200: SOURCE_VIEW, 202: SOURCE_VIEW, ...ERRORS, 409: ERR },
      },
    },
    async (req, reply) => {
      const s = await store.getSource(req.params.name);
      if (s === undefined) fail("ERR_SOURCE_NOT_FOUND", `no source named "${req.params.name}"`);
      const claims = claimsOf(s.config.claims);
      authorizer.authorize(req.principal, {
        kind: "manageSources",
        hide: true,
        name: s.name,
        ...(claims ? { claims } : {}),
      });
      if (s.kind === "managed") {
        fail("ERR_SOURCE_NOT_SYNCED", `source "${s.name}" is managed: nothing to sync`);
      }
      const run = scheduler.trigger(s.name);
      if (req.query.wait === "true") {
        const outcome = await run;
        return reply.code(200).send({ ...sourceView(s, await store.getStatus(s.name)), outcome });
      }
      run.catch(() => undefined);
      return reply.code(202).send(sourceView(s, await store.getStatus(s.name)));
    },
  );

  app.get(
    "/v1/registries",
    {
      schema: {
        tags,
        summary: "List registries",
        response: {
          200: {
            type: "object",
            properties: { registries: { type: "array", items: REGISTRY_VIEW } },
          },
          ...ERRORS,
        },
      },
    },
    async (req) => {
      authorizer.authorize(req.principal, { kind: "manageRegistries" });
      return {
        registries: (await store.listRegistries())
          .filter((r) => authorizer.resourceVisible(req.principal, r.claims))
          .map(registryView),
      };
    },
  );

  app.get<{ Params: { name: string } }>(
    "/v1/registries/:name",
    {
      schema: {
        tags,
        summary: "Get a registry",
        params: NAME_PARAM,
        response: { 200: REGISTRY_VIEW, ...ERRORS },
      },
    },
    async (req) => {
      const r = await store.getRegistry(req.params.name);
      if (r === undefined) fail("ERR_REGISTRY_NOT_FOUND", `no registry named "${req.params.name}"`);
      authorizer.authorize(req.principal, {
        kind: "manageRegistries",
        hide: true,
        name: r.name,
        ...(r.claims ? { claims: r.claims } : {}),
      });
      return registryView(r);
    },
  );

  app.put<{ Params: { name: string }; Body: Record<string, unknown> }>(
    "/v1/registries/:name",
    {
      schema: {
        tags,
        summary: "Create or replace a registry",
        description:
          "The body is a registry as in the configuration file: `sources` (ordered names of existing sources) and optional `claims`. Registries from the configuration file cannot be changed (403).",
        params: NAME_PARAM,
        body: { type: "object", additionalProperties: true },
        response: { 200: REGISTRY_VIEW, 201: REGISTRY_VIEW, ...ERRORS, 413: ERR, 415: ERR },
      },
    },
    async (req, reply) => {
      const name = req.params.name;
      authorizer.authorize(req.principal, { kind: "manageRegistries" });
      const body = bodyNamed(req.body, name);
      validate("Registry", body, "registry");
      const claims = claimsOf(body.claims);
      const existing = await store.getRegistry(name);
      if (existing !== undefined) {
        authorizer.authorize(req.principal, {
          kind: "manageRegistries",
          hide: true,
          name,
          ...(existing.claims ? { claims: existing.claims } : {}),
        });
      }
      authorizer.authorize(req.principal, {
        kind: "manageRegistries",
        ...(claims ? { claims } : {}),
      });
      if (existing?.origin === "config") {
        fail(
          "ERR_CONFIG_RESOURCE_READONLY",
          `registry "${name}" is defined in the configuration file; change it there`,
        );
      }
      // A source the caller may not see is reported as unknown, exactly as a missing one is.
      const sources = body.sources as string[];
      const hidden = [];
      for (const src of sources) {
        const s = await store.getSource(src);
        if (
          s !== undefined &&
          !authorizer.resourceVisible(req.principal, claimsOf(s.config.claims))
        )
          hidden.push(src);
      }
      if (hidden.length > 0) {
        fail(
          "ERR_INVALID_RESOURCE",
          `registry "${name}" names unknown source(s): ${hidden.join(", ")}`,
        );
      }
      const { created } = await store.putRegistry(name, sources, claims, "api");
      return reply
        .code(created ? 201 : 200)
        .send(registryView((await store.getRegistry(name)) as RegistryRecord));
    },
  );

  app.delete<{ Params: { name: string } }>(
    "/v1/registries/:name",
    {
      schema: {
        tags,
        summary: "Delete a registry (its sources stay)",
        params: NAME_PARAM,
        response: { 204: { type: "null", description: "Deleted" }, ...ERRORS },
      },
    },
    async (req, reply) => {
      const r = await store.getRegistry(req.params.name);
      if (r === undefined) fail("ERR_REGISTRY_NOT_FOUND", `no registry named "${req.params.name}"`);
      authorizer.authorize(req.principal, {
        kind: "manageRegistries",
        hide: true,
        name: r.name,
        ...(r.claims ? { claims: r.claims } : {}),
      });
      if (r.origin === "config") {
        fail(
          "ERR_CONFIG_RESOURCE_READONLY",
          `registry "${r.name}" is defined in the configuration file; remove it there`,
        );
      }
      await store.deleteRegistry(r.name);
      return reply.code(204).send();
    },
  );
}

// Admin routes of registries: list, get, create or replace (PUT), delete. Registries from the
// configuration file are read-only here (403); deleting a registry keeps its sources.
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import type { RegistryRecord } from "../store/store.js";
import { validateAdminBody } from "./admin-body.js";
import {
  authorizeExisting,
  claimsOf,
  loadAuthorized,
  refuseConfigDefined,
  REGISTRY,
  type RouteContext,
} from "./context.js";
import { fail } from "./problem.js";
import { adminBody } from "./admin-schema.js";
import { ERRORS, listOf, NAME_PARAM, NEW_NAME_PARAM, problems, REGISTRY_VIEW } from "./schemas.js";

function registryView(r: RegistryRecord): Record<string, unknown> {
  // creationType: ToolHive's name for the origin (its swagger's RegistryInfo).
  return {
    ...r,
    readOnly: r.origin === "config",
    creationType: r.origin === "config" ? "CONFIG" : "API",
  };
}

const tags = ["admin"];

type Named = { Params: { name: string } };

const LIST_SCHEMA = {
  tags,
  summary: "List registries",
  description:
    "For callers with manageRegistries or manageEntries; each sees the registries whose claims its own cover.",
  response: {
    200: listOf("registries", REGISTRY_VIEW),
    ...ERRORS,
  },
};

const GET_SCHEMA = {
  tags,
  summary: "Get a registry",
  params: NAME_PARAM,
  response: { 200: REGISTRY_VIEW, ...ERRORS, ...problems(404) },
};

const PUT_SCHEMA = {
  tags,
  summary: "Create or replace a registry",
  description:
    "The body is a registry as in the configuration file: `sources` (ordered names of existing sources) and optional `claims`. Registries from the configuration file cannot be changed (403).",
  params: NEW_NAME_PARAM,
  body: adminBody("Registry", "A registry as in the configuration file."),
  response: {
    200: REGISTRY_VIEW,
    201: REGISTRY_VIEW,
    ...ERRORS,
    ...problems(404, 413, 415),
  },
};

const DELETE_SCHEMA = {
  tags,
  summary: "Delete a registry (its sources stay)",
  params: NAME_PARAM,
  response: { 204: { type: "null", description: "Deleted" }, ...ERRORS, ...problems(404) },
};

async function listRegistries(ctx: RouteContext, req: FastifyRequest) {
  // Publishers list them too (ToolHive's rule), each caller seeing those its claims cover.
  ctx.authorizer.authorize(req.principal, { kind: "listRegistries" });
  return {
    registries: (await ctx.store.listRegistries())
      .filter((r) => ctx.authorizer.resourceVisible(req.principal, r.claims))
      .map(registryView),
  };
}

/** A source the caller may not see is reported as unknown, exactly as a missing one is. */
async function refuseHiddenSources(
  ctx: RouteContext,
  req: FastifyRequest,
  name: string,
  sources: string[],
): Promise<void> {
  const hidden = [];
  for (const src of sources) {
    const s = await ctx.store.getSource(src);
    if (
      s !== undefined &&
      !ctx.authorizer.resourceVisible(req.principal, claimsOf(s.config.claims))
    )
      hidden.push(src);
  }
  if (hidden.length > 0) {
    fail(
      "ERR_INVALID_RESOURCE",
      `registry "${name}" names unknown source(s): ${hidden.join(", ")}`,
    );
  }
}

async function putRegistry(
  ctx: RouteContext,
  req: FastifyRequest<Named & { Body: Record<string, unknown> }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { store, authorizer } = ctx;
  const name = req.params.name;
  authorizer.authorize(req.principal, { kind: "manageRegistries" });
  const body = validateAdminBody("Registry", req.body, name);
  const claims = claimsOf(body.claims);
  const existing = await store.getRegistry(name);
  if (existing !== undefined) authorizeExisting(ctx, req.principal, REGISTRY, existing);
  authorizer.authorize(req.principal, {
    kind: "manageRegistries",
    ...(claims ? { claims } : {}),
  });
  refuseConfigDefined(REGISTRY, existing, "change");
  const sources = body.sources as string[];
  await refuseHiddenSources(ctx, req, name, sources);
  const { created } = await store.putRegistry(name, sources, claims, "api", (current) =>
    refuseConfigDefined(REGISTRY, current, "change"),
  );
  return reply
    .code(created ? 201 : 200)
    .send(registryView((await store.getRegistry(name)) as RegistryRecord));
}

async function deleteRegistry(
  ctx: RouteContext,
  req: FastifyRequest<Named>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const r = await loadAuthorized(ctx, req.principal, REGISTRY, req.params.name);
  refuseConfigDefined(REGISTRY, r, "remove");
  await ctx.store.deleteRegistry(r.name);
  return reply.code(204).send();
}

export const registryRoutes: FastifyPluginCallback<RouteContext> = (app, ctx, done) => {
  app.get("/v1/registries", { schema: LIST_SCHEMA }, (req) => listRegistries(ctx, req));
  app.get<Named>("/v1/registries/:name", { schema: GET_SCHEMA }, async (req) =>
    registryView(await loadAuthorized(ctx, req.principal, REGISTRY, req.params.name)),
  );
  app.put<Named & { Body: Record<string, unknown> }>(
    "/v1/registries/:name",
    // The handler checks the body against the config schema, naming every offending field.
    { attachValidation: true, schema: PUT_SCHEMA },
    (req, reply) => putRegistry(ctx, req, reply),
  );
  app.delete<Named>("/v1/registries/:name", { schema: DELETE_SCHEMA }, (req, reply) =>
    deleteRegistry(ctx, req, reply),
  );
  done();
};

// The OpenAPI document of the whole server, built by @fastify/swagger from the route schemas
// and served at /openapi.json (see public.ts). swagger and its schema resolver are some twenty
// modules a start does not need: the server only notes its routes as they are added, and the
// first request for the document declares them again, without handlers, on a server of their
// own that swagger describes. The document is the same: swagger reads nothing else of a route.
import type { FastifyInstance, FastifyPluginAsync, RouteOptions } from "fastify";
import { projectVersion } from "../../project.js";
import { PROBLEM_SCHEMA } from "./problem.js";
import { adminBodySchemas } from "./admin-schema.js";
import { serverJsonSchemas } from "./server-json-schema.js";
import { serverWide } from "./server-wide.js";

const DESCRIPTION =
  "Catalog of MCP server versions. The consumer API follows the official MCP registry v0.1 API (with the lifecycle status operations of its later draft) and is served under /{registry}/v0.1 and /registry/{registry}/v0.1, and at /v0.1 for the configured default registry. Every error is application/problem+json with a stable `code`; each operation lists the statuses it answers. No string of a request may contain U+0000 (400).";

const TAGS = [
  { name: "consumer", description: "Reading a registry" },
  { name: "publish", description: "Publishing and deleting entries of a managed source" },
  { name: "admin", description: "Managing sources and registries" },
  {
    name: "entries",
    description: "ToolHive's /v1 entry API: publishing, claims and entry listings",
  },
  { name: "public", description: "Probes, version, metrics and this document" },
];

const SWAGGER_OPTIONS = {
  openapi: {
    openapi: "3.1.0",
    info: {
      title: "mcpfleet registry server",
      version: projectVersion(),
      description: DESCRIPTION,
    },
    tags: TAGS,
  },
  refResolver: {
    buildLocalReference: (json: { $id?: unknown }, _base: unknown, _frag: unknown, i: number) =>
      typeof json.$id === "string" ? json.$id : `def-${i}`,
  },
};

/** A server's routes, noted as they are added, and its OpenAPI document built from them. */
export class OpenApiDocument {
  private readonly routes: RouteOptions[] = [];
  private app: FastifyInstance | undefined;
  private json: Promise<string> | undefined;

  /** Adds the shared schemas routes refer to, and notes every route added after it. */
  readonly plugin: FastifyPluginAsync = serverWide((app) => {
    this.app = app;
    app.addSchema(PROBLEM_SCHEMA);
    for (const schema of [...serverJsonSchemas(), ...adminBodySchemas()]) app.addSchema(schema);
    // Kept as they are: the onRoute hooks of later plugins still change them (the catalog's
    // pages hide themselves).
    app.addHook("onRoute", (route) => void this.routes.push(route));
    return Promise.resolve();
  });

  /** The document as JSON text, built on first use (every route exists by the first request). */
  text(): Promise<string> {
    this.json ??= this.build().catch((err: unknown) => {
      this.json = undefined;
      throw err;
    });
    return this.json;
  }

  private async build(): Promise<string> {
    const [{ default: Fastify }, { default: swagger }] = await Promise.all([
      import("fastify"),
      import("@fastify/swagger"),
    ]);
    const described = Fastify({ exposeHeadRoutes: false });
    // Nothing is served: no validator or serializer is compiled.
    described.setValidatorCompiler(() => () => true);
    described.setSerializerCompiler(() => (data) => JSON.stringify(data));
    for (const schema of Object.values(this.app?.getSchemas() ?? {})) {
      described.addSchema(schema);
    }
    await described.register(swagger, SWAGGER_OPTIONS);
    const handler = (): undefined => undefined;
    for (const { method, url, schema, config } of this.routes) {
      // HEAD routes are Fastify's copies of GET routes; swagger leaves them out, as hidden ones.
      if (method === "HEAD" || schema?.hide === true) continue;
      described.route({ method, url, schema, config, handler });
    }
    await described.ready();
    try {
      return JSON.stringify(described.swagger());
    } finally {
      await described.close();
    }
  }
}

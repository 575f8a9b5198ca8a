// The OpenAPI document of the whole server, built by @fastify/swagger from the route schemas
// and served at /openapi.json (see public.ts).
import swagger from "@fastify/swagger";
import type { FastifyPluginAsync } from "fastify";
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

export const openApi: FastifyPluginAsync = serverWide(async (app) => {
  app.addSchema(PROBLEM_SCHEMA);
  for (const schema of [...serverJsonSchemas(), ...adminBodySchemas()]) app.addSchema(schema);
  await app.register(swagger, {
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
      buildLocalReference: (json, _base, _frag, i) =>
        typeof json.$id === "string" ? json.$id : `def-${i}`,
    },
  });
});

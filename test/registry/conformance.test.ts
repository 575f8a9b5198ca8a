// Conformance with the two registry APIs this server claims to serve, measured against their
// own published descriptions (read from ../shared): every operation of the official MCP
// registry's v0.1 OpenAPI answers at the root for the default registry with a body valid
// against the official schema, and ToolHive's 27 documented operations are counted in ours.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parse } from "yaml";
import type { RegistryServer } from "../../src/registry/server.js";
import { describeWithSharedData, sharedPath } from "../support/shared-data.js";
import { startServer, untilReady } from "./helpers.js";

// ajv-formats is CommonJS: at run time the default import is the plugin itself.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const formats = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formats.default ?? formats;

const PEER = sharedPath("peer-registry");
const FIXTURE = join(import.meta.dirname, "fixtures", "catalog-upstream.json");

interface OpenApi {
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown> };
}

const METHODS = ["get", "put", "post", "delete", "patch"];

/** `METHOD /path/{}` for every operation, parameter names left out. */
function operations(doc: OpenApi): string[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${path.replace(/\{[^}]+\}/g, "{}")}`),
  );
}

describeWithSharedData("conformance with the official and ToolHive APIs", PEER, () => {
  let dir: string;
  let server: RegistryServer;
  const official = parse(
    readFileSync(join(PEER, "mcp-registry-openapi.v0.1.yaml"), "utf8"),
  ) as OpenApi;
  const toolhive = parse(
    readFileSync(join(PEER, "toolhive-registry-server.swagger.yaml"), "utf8"),
  ) as OpenApi;
  // The later draft of the spec (whose status operations we serve) adds statusMessage and
  // statusChangedAt to the official metadata the v0.1 snapshot closes: allow those two only.
  const meta = (
    official.components?.schemas?.ServerResponse as {
      properties: { _meta: { properties: Record<string, { properties: object }> } };
    }
  ).properties._meta.properties["io.modelcontextprotocol.registry/official"];
  if (meta !== undefined) {
    meta.properties = {
      ...meta.properties,
      statusMessage: { type: "string" },
      statusChangedAt: { type: "string", format: "date-time" },
    };
  }
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "official", components: official.components }, "official");
  const validBody = (schema: string, body: unknown) => {
    const validate = ajv.getSchema(`official#/components/schemas/${schema}`);
    if (validate === undefined) throw new Error(`no schema ${schema}`);
    return validate(body) ? [] : (validate.errors ?? []);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "conformance-"));
    server = await startServer(
      `
sources:
  - name: catalog
    format: upstream
    file: { path: ${FIXTURE} }
  - name: team
    managed: {}
registries:
  - name: main
    sources: [catalog, team]
defaultRegistry: main
auth: { mode: anonymous }
`,
      dir,
    );
    await untilReady(server.url);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers every official v0.1 operation at the root with a body the official schema accepts", async () => {
    const name = "io.github.acme/conformance";
    const doc = {
      $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
      name,
      version: "1.0.0",
      description: "Conformance",
      packages: [
        {
          registryType: "npm",
          identifier: "@acme/conformance",
          version: "1.0.0",
          transport: { type: "stdio" },
        },
      ],
    };
    const enc = encodeURIComponent(name);
    // Each official operation, in an order where each can succeed.
    const calls: [string, string, string, unknown?][] = [
      ["POST /v0.1/publish", "/v0.1/publish", "ServerResponse", doc],
      ["GET /v0.1/servers", "/v0.1/servers?limit=100", "ServerList"],
      ["GET /v0.1/servers", "/v0.1/servers?version=1.0.0&search=conformance", "ServerList"],
      ["GET /v0.1/servers/{}/versions", `/v0.1/servers/${enc}/versions`, "ServerList"],
      ["GET /v0.1/servers/{}/versions/{}", `/v0.1/servers/${enc}/versions/1.0.0`, "ServerResponse"],
      [
        "GET /v0.1/servers/{}/versions/{}",
        `/v0.1/servers/${enc}/versions/latest`,
        "ServerResponse",
      ],
      [
        "DELETE /v0.1/servers/{}/versions/{}",
        `/v0.1/servers/${enc}/versions/1.0.0`,
        "ServerResponse",
      ],
    ];
    const answered = new Set<string>();
    for (const [op, path, schema, body] of calls) {
      const method = op.split(" ")[0] as string;
      const r = await fetch(`${server.url}${path}`, {
        method,
        ...(body !== undefined
          ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }
          : {}),
      });
      expect(r.status, `${op}: ${await r.clone().text()}`).toBe(200);
      expect(validBody(schema, await r.json()), op).toEqual([]);
      answered.add(op);
    }
    const all = operations(official);
    console.log(`official v0.1: ${answered.size}/${all.length} operations answered as specified`);
    expect([...answered].sort()).toEqual([...all].sort());
  });

  it("serves ToolHive's documented operations except its skill and plugin extensions", async () => {
    const ours = (await (await fetch(`${server.url}/openapi.json`)).json()) as OpenApi;
    // Ours documents /{registry}/v0.1 and hides the /registry/{registry}/v0.1 spelling.
    const mine = new Set(
      operations(ours).flatMap((op) => [op, op.replace(" /{}/v0.1/", " /registry/{}/v0.1/")]),
    );
    const theirs = operations(toolhive);
    const missing = theirs.filter((op) => !mine.has(op));
    console.log(
      `ToolHive: ${theirs.length - missing.length}/${theirs.length} operations at the same path and method`,
    );
    expect(theirs).toHaveLength(27);
    expect(missing.every((op) => /\/x\/dev\.toolhive\/(skills|plugins)/.test(op))).toBe(true);
    expect(missing).toHaveLength(8);
    // The hidden spelling is really served, not only counted.
    const r = await fetch(`${server.url}/registry/main/v0.1/servers?limit=1`);
    expect(r.status).toBe(200);
  });
});

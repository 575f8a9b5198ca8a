// The server.json rules at publish: every document the official server.json schema rejects is
// refused with 400 and a problem naming each offending field, and the official schema (read
// from ../shared) is checked to reject the same documents and to accept our valid ones.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, expect, it } from "vitest";
import { serverJsonProblems } from "../../src/registry/formats/publish.js";
import type { RegistryServer } from "../../src/registry/server.js";
import { describeWithSharedData, sharedPath } from "../support/shared-data.js";
import { TEAM_ONLY, startServer } from "./helpers.js";

const PEER = sharedPath("peer-registry");

// ajv-formats is CommonJS: at run time the default import is the plugin itself.
type FormatsPlugin = (ajv: Ajv) => Ajv;
const formats = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formats.default ?? formats;

function officialValidator(file: string): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(JSON.parse(readFileSync(join(PEER, file), "utf8")) as object);
}

const base = {
  $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
  name: "io.github.acme/weather",
  version: "1.0.0",
  description: "Weather forecasts",
};
const npm = { registryType: "npm", identifier: "@acme/weather", version: "1.0.0" };
const stdio = { type: "stdio" };

/** Documents that keep every rule. */
const VALID: Record<string, Record<string, unknown>> = {
  remote: { ...base, remotes: [{ type: "streamable-http", url: "https://mcp.acme.dev/mcp" }] },
  package: {
    ...base,
    title: "Weather",
    websiteUrl: "https://acme.dev",
    repository: { url: "https://github.com/acme/weather", source: "github" },
    icons: [{ src: "https://acme.dev/icon.png", mimeType: "image/png", sizes: ["48x48"] }],
    packages: [
      {
        ...npm,
        transport: stdio,
        packageArguments: [
          { type: "positional", valueHint: "dir" },
          { type: "named", name: "--port", value: "8080" },
        ],
        environmentVariables: [{ name: "API_KEY", isSecret: true, isRequired: true }],
      },
    ],
  },
  "sse remote with variables": {
    ...base,
    remotes: [
      {
        type: "sse",
        url: "https://mcp.acme.dev/sse",
        variables: { tenant: { isRequired: true } },
        headers: [{ name: "X-Key", isSecret: true }],
      },
    ],
  },
  "described named argument, stdio transport with more fields": {
    ...base,
    packages: [
      {
        ...npm,
        transport: { type: "stdio", headers: [] },
        runtimeArguments: [
          { type: "named", name: "--port", description: "Port to listen on", isRequired: true },
        ],
      },
    ],
  },
  "http package": {
    ...base,
    packages: [
      { ...npm, transport: { type: "streamable-http", url: "http://localhost:{port}/mcp" } },
    ],
  },
};

/** Documents that break one rule each, with the field the problem must name. */
const INVALID: [string, Record<string, unknown>, string][] = [
  ["over-long description", { ...VALID.remote, description: "d".repeat(101) }, "body.description"],
  ["over-long title", { ...VALID.remote, title: "t".repeat(101) }, "body.title"],
  [
    "package version latest",
    { ...base, packages: [{ ...npm, version: "latest", transport: stdio }] },
    "body.packages[0].version",
  ],
  ["package without transport", { ...base, packages: [npm] }, "body.packages[0].transport"],
  [
    "ftp remote",
    { ...base, remotes: [{ type: "streamable-http", url: "ftp://files.acme.dev/mcp" }] },
    "body.remotes[0].url",
  ],
  [
    "unknown transport type",
    { ...base, remotes: [{ type: "websocket", url: "https://mcp.acme.dev/ws" }] },
    "body.remotes[0].type",
  ],
  [
    "no description",
    { name: base.name, version: base.version, remotes: VALID.remote?.remotes },
    "body.description",
  ],
  ["name without namespace", { ...VALID.remote, name: "weather" }, "body.name"],
  [
    "http package transport without url",
    { ...base, packages: [{ ...npm, transport: { type: "sse" } }] },
    "body.packages[0].transport.url",
  ],
  [
    "icon of an unknown MIME type",
    { ...VALID.remote, icons: [{ src: "https://acme.dev/i.gif", mimeType: "image/gif" }] },
    "body.icons[0].mimeType",
  ],
  [
    "repository without source",
    { ...VALID.remote, repository: { url: "https://github.com/acme/weather" } },
    "body.repository.source",
  ],
  [
    "named argument without its name",
    { ...base, packages: [{ ...npm, transport: stdio, runtimeArguments: [{ type: "named" }] }] },
    "body.packages[0].runtimeArguments[0].name",
  ],
];

describeWithSharedData("server.json rules at publish", PEER, () => {
  let dir: string;
  let server: RegistryServer;
  const official = officialValidator("server.schema.2025-12-11.json");
  const previous = officialValidator("server.schema.2025-10-17.json");
  const publish = (body: unknown) =>
    fetch(`${server.url}/default/v0.1/publish`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "server-json-"));
    server = await startServer(`${TEAM_ONLY}auth: { mode: anonymous }\n`, dir);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(Object.entries(VALID))(
    "accepts a valid document (%s), as the official schemas do",
    async (label, doc) => {
      expect(official(doc), JSON.stringify(official.errors)).toBe(true);
      expect(previous(doc), JSON.stringify(previous.errors)).toBe(true);
      expect(serverJsonProblems(doc)).toEqual([]);
      const r = await publish({ ...doc, version: `1.0.${label.length}` });
      expect(r.status, await r.clone().text()).toBe(200);
    },
  );

  it.each(INVALID)(
    "refuses %s with 400 naming the field, as the official schema does",
    async (_label, doc, field) => {
      expect(official(doc)).toBe(false);
      const r = await publish(doc);
      expect(r.status).toBe(400);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const p = (await r.json()) as {
        code: string;
        detail: string;
        errors: { location: string }[];
      };
      expect(p.code).toBe("ERR_INVALID_ENTRY");
      expect(p.errors.map((e) => e.location)).toContain(field);
      expect(p.detail).toContain(field);
    },
  );

  it("names every offending field of one document", async () => {
    const r = await publish({
      ...base,
      title: "t".repeat(101),
      description: "d".repeat(101),
      remotes: [{ type: "websocket", url: "ftp://x" }],
    });
    expect(r.status).toBe(400);
    const p = (await r.json()) as { errors: { location: string }[] };
    expect(p.errors.map((e) => e.location).sort()).toEqual([
      "body.description",
      "body.remotes[0].type",
      "body.remotes[0].url",
      "body.title",
    ]);
  });

  it("serves none of the refused documents", async () => {
    const r = await fetch(`${server.url}/default/v0.1/servers?limit=100`);
    const page = (await r.json()) as { servers: { server: Record<string, unknown> }[] };
    for (const { server: s } of page.servers) expect(official(s)).toBe(true);
    expect(page.servers).toHaveLength(Object.keys(VALID).length);
  });
});

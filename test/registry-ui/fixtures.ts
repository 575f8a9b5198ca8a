// The catalog tests' registry: the example catalog file, a managed source filled through the
// publish API with servers of every package type and transport, a server with a deprecated
// and a deleted version, and a source whose sync fails (its file is missing).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RegistryServer } from "../../src/registry/server.js";
import { startServer, untilReady } from "../registry/helpers.js";

export const EXAMPLE = join(import.meta.dirname, "../../examples/registry/data/registry.json");
/** A one-pixel PNG: an icon the page can show without a request to another host. */
export const ICON =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
export const GENERATED = 43;
const SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
const KINDS = [
  { type: "oci", transport: "stdio" },
  { type: "npm", transport: "stdio" },
  { type: "pypi", transport: "stdio" },
  { type: "remote", transport: "streamable-http" },
  { type: "remote", transport: "sse" },
  { type: "oci", transport: "streamable-http" },
] as const;

export function generatedServer(i: number, version = "1.0.0"): Record<string, unknown> {
  const n = String(i).padStart(2, "0");
  const kind = KINDS[i % KINDS.length] ?? KINDS[0];
  const name = `io.example.fleet/srv-${n}`;
  const base = {
    $schema: SCHEMA,
    name,
    version,
    title: `Fleet server ${n}`,
    description: `Generated server ${n} (${kind.type}, ${kind.transport})`,
  };
  if (kind.type === "remote") {
    return {
      ...base,
      remotes: [{ type: kind.transport, url: `https://mcp.example.com/srv-${n}/mcp` }],
    };
  }
  const identifier =
    kind.type === "oci" ? `ghcr.io/example-fleet/srv-${n}:${version}` : `example-fleet-srv-${n}`;
  return {
    ...base,
    packages: [
      {
        registryType: kind.type,
        identifier,
        version,
        transport:
          kind.transport === "stdio"
            ? { type: "stdio" }
            : { type: kind.transport, url: "http://localhost:8080/mcp" },
      },
    ],
  };
}

export const LEGACY = "io.example.fleet/legacy-weather";

function legacy(version: string): Record<string, unknown> {
  return {
    $schema: SCHEMA,
    name: LEGACY,
    version,
    title: "Legacy Weather",
    description: "Weather lookups, kept for old clients",
    icons: [{ src: ICON, mimeType: "image/png" }],
    repository: { url: "https://github.com/example-fleet/legacy-weather", source: "github" },
    websiteUrl: "https://example-fleet.dev/legacy-weather",
    packages: [
      {
        registryType: "oci",
        identifier: `ghcr.io/example-fleet/legacy-weather:${version}`,
        version,
        transport: { type: "stdio" },
        runtimeArguments: [
          { type: "named", name: "--units", value: "metric", description: "Units of measure" },
        ],
        environmentVariables: [
          {
            name: "WEATHER_TOKEN",
            description: "Token of the weather service",
            isRequired: true,
            isSecret: true,
          },
          { name: "LOG_LEVEL", description: "Log verbosity", default: "info" },
        ],
      },
    ],
  };
}

export const DEPRECATION =
  "Replaced by io.example.fleet/srv-00; this version stops working in March.";

export interface Fixture {
  server: RegistryServer;
  url: string;
  /** The latest version of every server in the default registry, as the API lists them. */
  latest: Record<string, unknown>[];
}

async function post(url: string, body: unknown, method = "POST"): Promise<void> {
  const res = await fetch(url, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
}

export async function startCatalog(extraYaml = ""): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), "mcpfleet-ui-"));
  const server = await startServer(
    `sources:
  - name: catalog
    format: upstream
    file: { path: ${JSON.stringify(EXAMPLE)} }
  - name: team
    managed: {}
  - name: partners
    format: upstream
    file: { path: ${JSON.stringify(join(dir, "missing.json"))} }
registries:
  - name: default
    sources: [catalog, team]
  - name: partners
    sources: [partners]
auth:
  mode: anonymous
${extraYaml}`,
    dir,
  );
  await untilReady(server.url);
  const pub = `${server.url}/default/v0.1/publish`;
  for (let i = 0; i < GENERATED; i++) await post(pub, generatedServer(i));
  for (const v of ["0.9.0", "1.0.0", "2.0.0"]) await post(pub, legacy(v));
  const versions = `${server.url}/default/v0.1/servers/${encodeURIComponent(LEGACY)}/versions`;
  await post(
    `${versions}/2.0.0/status`,
    { status: "deprecated", statusMessage: DEPRECATION },
    "PATCH",
  );
  await post(
    `${versions}/0.9.0/status`,
    { status: "deleted", statusMessage: "Leaked a token" },
    "PATCH",
  );
  const list = (await (
    await fetch(`${server.url}/default/v0.1/servers?version=latest&limit=100`)
  ).json()) as { servers: { server: Record<string, unknown> }[] };
  return { server, url: server.url, latest: list.servers.map((s) => s.server) };
}

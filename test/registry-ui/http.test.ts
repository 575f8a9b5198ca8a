// The catalog over plain HTTP (no browser, so no JavaScript): the redirect of `/`, `ui: false`,
// security headers, escaping of what publishers write, filters answered by the server alone,
// and the pages kept out of the OpenAPI document.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { startServer } from "../registry/helpers.js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../support/postgres.js";

const SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
const CONFIG = `sources:
  - name: team
    managed: {}
registries:
  - name: default
    sources: [team]
auth:
  mode: anonymous
`;

async function publish(url: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${url}/default/v0.1/publish`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ $schema: SCHEMA, ...body }),
  });
  expect(res.status).toBe(200);
}

/** The `database:` section of each store the catalog is tested on ("" is the embedded one). */
interface Store {
  name: string;
  database(dir: string): Promise<string>;
}
let pg: PostgresServer | undefined;
const STORES: Store[] = [
  { name: "embedded store", database: () => Promise.resolve("") },
  ...(postgresAvailable()
    ? [
        {
          name: "PostgreSQL",
          async database(dir: string): Promise<string> {
            pg = await startPostgres();
            await pg.createDatabase("catalog");
            writeFileSync(join(dir, "app-pw"), `${pg.appPassword}\n`);
            writeFileSync(join(dir, "mig-pw"), `${pg.migrationPassword}\n`);
            return `database:
  host: 127.0.0.1
  port: ${pg.port}
  database: catalog
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable
`;
          },
        },
      ]
    : []),
];

describe.each(STORES)("web catalog over HTTP ($name)", (store) => {
  let server: RegistryServer;
  let off: RegistryServer;
  const html = { accept: "text/html,application/xhtml+xml" };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpfleet-ui-http-"));
    const database = await store.database(dir);
    server = await startServer(`${CONFIG}${database}`, dir);
    off = await startServer(`${CONFIG}${database}ui: false\n`, dir);
    await publish(server.url, {
      name: "io.example.x/hostile",
      version: "1.0.0",
      title: "<script>alert(1)</script>",
      description: '"><img src=x onerror=alert(2)>',
      remotes: [
        {
          type: "sse",
          url: "https://mcp.example.com/sse",
          headers: [{ name: "X-Api-Key", description: "The caller's key", isSecret: true }],
        },
      ],
    });
    await publish(server.url, {
      name: "io.example.x/plain",
      version: "1.0.0",
      description: "A plain stdio server",
      packages: [
        {
          registryType: "npm",
          identifier: "plain-mcp",
          version: "1.0.0",
          transport: { type: "stdio" },
        },
      ],
    });
  });

  afterAll(async () => {
    await server?.close();
    await off?.close();
    await pg?.stop();
    pg = undefined;
  });

  it("redirects a browser asking for / to /ui/, and answers API clients as before", async () => {
    const res = await fetch(`${server.url}/`, { headers: html, redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/ui/");
    const api = await fetch(`${server.url}/`, { headers: { accept: "application/json" } });
    expect(api.status).toBe(404);
    expect(((await api.json()) as { code: string }).code).toBe("ERR_NOT_FOUND");
  });

  it("is off with ui: false", async () => {
    expect((await fetch(`${off.url}/ui/`, { headers: html })).status).toBe(404);
    expect((await fetch(`${off.url}/`, { headers: html, redirect: "manual" })).status).toBe(404);
  });

  it("sends security headers: no inline script, no framing, no sniffing", async () => {
    for (const path of ["/ui/", "/ui/static/app.js", "/ui/operators"]) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(200);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/default-src 'none'/);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  it("escapes what publishers wrote", async () => {
    const body = await (await fetch(`${server.url}/ui/`)).text();
    expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(body).toContain("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;");
    expect(body).not.toContain("<script>alert");
    expect(body).not.toContain("<img src=x");
    const page = await (
      await fetch(`${server.url}/ui/server?registry=default&name=io.example.x%2Fhostile`)
    ).text();
    expect(page).not.toContain("<script>alert");
    // A remote's headers are listed, the secret one marked.
    expect(page).toMatch(/<dt>Headers<\/dt>[\s\S]*X-Api-Key[\s\S]*class="badge secret"/);
  });

  it("searches and filters with the form alone (the server renders the answer)", async () => {
    const count = async (q: string): Promise<string | undefined> =>
      /<p class="count"[^>]*>\s*([^<]*?)\s*<\/p>/.exec(
        await (await fetch(`${server.url}/ui/${q}`)).text(),
      )?.[1];
    expect(await count("")).toBe("2 servers");
    expect(await count("?q=PLAIN")).toBe("1 server");
    expect(await count("?transport=sse")).toBe("1 server");
    expect(await count("?type=npm&transport=sse")).toBe("0 servers");
    // Unknown values fall back to no filter rather than failing.
    expect(await count("?type=rpm&page=-3&sort=x")).toBe("2 servers");
  });

  it("answers a missing server or registry with a page saying so", async () => {
    const res = await fetch(`${server.url}/ui/server?registry=default&name=io.example.x%2Fnone`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("has no server");
    expect((await fetch(`${server.url}/ui/?registry=nope`)).status).toBe(404);
  });

  it("keeps its pages out of the OpenAPI document", async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths).filter((p) => p === "/" || p.startsWith("/ui"))).toEqual([]);
  });
});

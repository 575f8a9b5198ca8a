import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { startServer, untilReady } from "./helpers.js";

const FIXTURES = join(import.meta.dirname, "fixtures");

/**
 * A toolhive catalog of `count` generated servers; every 20th is tagged `deprecated`, so more
 * than a page of 100 is left in the `all` view after the source's filter.
 */
function toolhiveCatalog(count: number): string {
  const servers: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const short = `tool-${String(i).padStart(3, "0")}`;
    servers[short] = {
      description: `Generated tool server ${i}`,
      status: "Active",
      transport: "stdio",
      image: `ghcr.io/example-fleet/${short}:1.0.0`,
      tags: i % 20 === 19 ? ["generated", "deprecated"] : ["generated"],
    };
  }
  return JSON.stringify({ version: "1.0.0", last_updated: "2026-01-15T08:00:00Z", servers });
}

const config = (dir: string) => `
sources:
  - name: catalog
    format: upstream
    file: { path: ${join(FIXTURES, "catalog-upstream.json")} }
    syncPolicy: { interval: 1h }
  - name: toolhive
    file: { path: ${join(dir, "toolhive.json")} }
    filter: { tags: { exclude: [deprecated] } }
  - name: team
    managed: {}
registries:
  - name: default
    sources: [catalog, team]
  - name: all
    sources: [team, catalog, toolhive]
adminSources: { fileRoots: ["."] }
auth: { mode: anonymous }
database:
  embedded: {}
  maxMetaSize: 1024
`;

const OFFICIAL = "io.modelcontextprotocol.registry/official";
const SERVER_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

interface Page {
  servers: { server: Record<string, unknown>; _meta: Record<string, Record<string, unknown>> }[];
  metadata: { count: number; nextCursor?: string };
}

describe("registry HTTP API", () => {
  let dir: string;
  let server: RegistryServer;
  let base: string;
  const get = (path: string, init?: RequestInit) => fetch(`${base}${path}`, init);
  const json = async <T = Page>(path: string): Promise<T> => {
    const r = await get(path);
    expect(r.status, `${path}: ${r.status}`).toBe(200);
    return (await r.json()) as T;
  };
  // A publish names its server.json schema (required, as the official registry has it).
  const publish = (body: unknown, registry = "default") =>
    get(`/${registry}/v0.1/publish`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(
        typeof body === "object" && body !== null && !Array.isArray(body) && !("$schema" in body)
          ? { $schema: SERVER_SCHEMA, ...body }
          : body,
      ),
    });
  const expectProblem = async (r: Response, status: number, code: string) => {
    expect(r.status).toBe(status);
    expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const p = (await r.json()) as Record<string, unknown>;
    expect(p).toMatchObject({
      status,
      code,
      title: expect.any(String) as unknown,
      detail: expect.any(String) as unknown,
    });
    return p;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "http-"));
    writeFileSync(join(dir, "toolhive.json"), toolhiveCatalog(100));
    server = await startServer(config(dir), dir);
    base = server.url;
    await untilReady(base);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers the probes, version and metrics", async () => {
    expect(await json("/health")).toEqual({ status: "ok" });
    expect(await json("/readiness")).toEqual({ status: "ready" });
    expect(await json("/version")).toMatchObject({
      name: "mcpfleet-registry",
      store: expect.any(String) as unknown,
    });
    await get("/default/v0.1/servers");
    const m = await (await get("/metrics")).text();
    expect(m).toMatch(
      /mcpfleet_registry_http_requests_total\{method="GET",route="\/:registry\/v0.1\/servers",status="200"\} \d+/,
    );
    expect(m).toMatch(/mcpfleet_registry_syncs_total\{source="catalog",outcome="updated"\} 1/);
    expect(m).toMatch(/mcpfleet_registry_source_entries\{source="catalog"\} 12/);
    expect(m).toMatch(/mcpfleet_registry_source_entries\{source="toolhive"\} 95/);
    expect(m).toMatch(
      /mcpfleet_registry_sync_duration_seconds_count\{source="toolhive",outcome="updated"\} 1/,
    );
  });

  it("lists servers in the official v0.1 shape on both path forms", async () => {
    const page = await json("/default/v0.1/servers");
    expect(page.metadata).toEqual({ count: 12 });
    const first = page.servers[0];
    expect(first?.server.name).toBe("io.github.stacklok/analytics-sql");
    expect(first?._meta["io.modelcontextprotocol.registry/official"]).toMatchObject({
      status: "active",
      isLatest: true,
      publishedAt: expect.stringMatching(/Z$/) as unknown,
    });
    expect(await json("/registry/default/v0.1/servers")).toEqual(page);
    const all = await json("/all/v0.1/servers?limit=100");
    expect(all.servers.length).toBe(100);
    expect(all.metadata.nextCursor).toBeDefined();
  });

  it("pages with an opaque cursor that stays stable under concurrent writes", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const p: Page = await json(`/all/v0.1/servers?limit=40${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...p.servers.map((s) => String(s.server.name)));
      cursor = p.metadata.nextCursor;
      if (pages++ === 0) {
        // A name sorting before the cursor appears between pages: it must not shift the pages.
        expect(
          (
            await publish(
              {
                name: "aaa.first/inserted",
                version: "1.0.0",
                url: "https://a.example/mcp",
                description: "Inserted",
              },
              "all",
            )
          ).status,
        ).toBe(200);
      }
    } while (cursor !== undefined);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).not.toContain("aaa.first/inserted");
    expect(seen.length).toBeGreaterThan(90);
    expect(
      (await get("/all/v0.1/servers/aaa.first%2Finserted/versions/1.0.0", { method: "DELETE" }))
        .status,
    ).toBe(200);
  });

  it("searches case-insensitively over name, title and description", async () => {
    const p = await json("/default/v0.1/servers?search=QUARRY");
    expect(p.servers.map((s) => s.server.title)).toEqual(["analytics-sql"]);
    expect(
      (await json("/default/v0.1/servers?search=git-m")).servers.map((s) => s.server.title),
    ).toEqual(["git-mirror"]);
    expect((await json("/default/v0.1/servers?search=%25")).servers).toEqual([]);
  });

  it("filters by updated_since and version=latest", async () => {
    expect(
      (await json("/default/v0.1/servers?updated_since=2000-01-01T00:00:00Z")).metadata.count,
    ).toBe(12);
    expect(
      (await json("/default/v0.1/servers?updated_since=2999-01-01T00:00:00%2B02:00")).metadata
        .count,
    ).toBe(0);
    expect((await json("/default/v0.1/servers?version=latest")).metadata.count).toBe(12);
  });

  it("serves versions of one server, with latest", async () => {
    const v = await json("/default/v0.1/servers/io.github.stacklok%2Ffetch/versions");
    expect(v.servers.map((s) => s.server.version)).toEqual(["1.0.0"]);
    const one = await json<Page["servers"][number]>(
      "/default/v0.1/servers/io.github.stacklok%2Ffetch/versions/latest",
    );
    expect(one.server.title).toBe("fetch");
    await expectProblem(
      await get("/default/v0.1/servers/io.github.stacklok%2Fnope/versions"),
      404,
      "ERR_SERVER_NOT_FOUND",
    );
    await expectProblem(
      await get("/default/v0.1/servers/io.github.stacklok%2Ffetch/versions/9.9.9"),
      404,
      "ERR_VERSION_NOT_FOUND",
    );
  });

  it("sets ETag and Cache-Control and answers 304", async () => {
    const r = await get("/default/v0.1/servers?limit=5");
    const etag = r.headers.get("etag");
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(r.headers.get("cache-control")).toBe("public, max-age=0, must-revalidate");
    const again = await get("/default/v0.1/servers?limit=5", {
      headers: { "if-none-match": etag ?? "" },
    });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(
      (
        await publish({
          name: "a.b/first",
          version: "1.0.0",
          url: "https://x.example/mcp",
          description: "First",
        })
      ).status,
    ).toBe(200);
    const changed = await get("/default/v0.1/servers?limit=5", {
      headers: { "if-none-match": etag ?? "" },
    });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    const one = await get("/default/v0.1/servers/a.b%2Ffirst/versions/1.0.0");
    expect(one.headers.get("etag")).toBeTruthy();
    expect(
      (await get("/default/v0.1/servers/a.b%2Ffirst/versions/1.0.0", { method: "DELETE" })).status,
    ).toBe(200);
  });

  it("publishes immutable versions and recomputes latest semver-aware; deletes", async () => {
    const name = "com.example.team/weather";
    const r = await publish({
      name,
      version: "1.9.0",
      url: "https://w.example/mcp",
      description: "Weather",
      claims: { team: "a" },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("location")).toBe(
      "/default/v0.1/servers/com.example.team%2Fweather/versions/1.9.0",
    );
    const body = (await r.json()) as Page["servers"][number];
    expect(body.server).toMatchObject({
      name,
      version: "1.9.0",
      remotes: [{ type: "streamable-http", url: "https://w.example/mcp" }],
    });
    expect(
      (
        await publish({
          name,
          version: "1.10.0",
          url: "https://w.example/mcp",
          description: "Weather",
          claims: { team: "a" },
        })
      ).status,
    ).toBe(200);
    await expectProblem(
      await publish({
        name,
        version: "1.10.0",
        url: "https://w.example/mcp",
        description: "Weather",
        claims: { team: "a" },
      }),
      409,
      "ERR_VERSION_EXISTS",
    );
    await expectProblem(
      await publish({
        name,
        version: "2.0.0",
        url: "https://w.example/mcp",
        description: "Weather",
        claims: { team: "b" },
      }),
      409,
      "ERR_CLAIMS_MISMATCH",
    );
    const latest = await json<Page["servers"][number]>(
      `/default/v0.1/servers/${encodeURIComponent(name)}/versions/latest`,
    );
    expect(latest.server.version).toBe("1.10.0");
    expect(
      (
        await get(`/default/v0.1/servers/${encodeURIComponent(name)}/versions/1.10.0`, {
          method: "DELETE",
        })
      ).status,
    ).toBe(200);
    const after = await json<Page["servers"][number]>(
      `/default/v0.1/servers/${encodeURIComponent(name)}/versions/latest`,
    );
    expect(after.server.version).toBe("1.9.0");
    // Deleting is setting the status: the version is still read by its exact number, and
    // deleting it again changes nothing.
    const gone = await json<Page["servers"][number]>(
      `/default/v0.1/servers/${encodeURIComponent(name)}/versions/1.10.0`,
    );
    expect(gone._meta[OFFICIAL]).toMatchObject({ status: "deleted", isLatest: false });
    const again = await get(`/default/v0.1/servers/${encodeURIComponent(name)}/versions/1.10.0`, {
      method: "DELETE",
    });
    expect(again.status).toBe(200);
    await expectProblem(
      await get(`/default/v0.1/servers/${encodeURIComponent(name)}/versions/9.9.9`, {
        method: "DELETE",
      }),
      404,
      "ERR_VERSION_NOT_FOUND",
    );
    expect(
      (
        await get(`/default/v0.1/servers/${encodeURIComponent(name)}/versions/1.9.0`, {
          method: "DELETE",
        })
      ).status,
    ).toBe(200);
    await expectProblem(
      await get(`/default/v0.1/servers/${encodeURIComponent(name)}/versions`),
      404,
      "ERR_SERVER_NOT_FOUND",
    );
    await expectProblem(
      await get(`/default/v0.1/servers/${encodeURIComponent(name)}/versions/latest`),
      404,
      "ERR_SERVER_NOT_FOUND",
    );
    const both = await json(
      `/default/v0.1/servers/${encodeURIComponent(name)}/versions?include_deleted=true`,
    );
    expect(both.servers.map((x) => x.server.version)).toEqual(["1.10.0", "1.9.0"]);
    // A deleted version's number stays taken: versions are immutable.
    await expectProblem(
      await publish({
        name,
        version: "1.9.0",
        url: "https://w.example/mcp",
        description: "Weather",
        claims: { team: "a" },
      }),
      409,
      "ERR_VERSION_EXISTS",
    );
  });

  it("answers every client mistake with a 4xx problem, never a 500", async () => {
    await expectProblem(await get("/default/v0.1/servers?limit=0"), 400, "ERR_INVALID_PARAMETER");
    await expectProblem(await get("/default/v0.1/servers?limit=101"), 400, "ERR_INVALID_PARAMETER");
    await expectProblem(await get("/default/v0.1/servers?limit=abc"), 400, "ERR_INVALID_PARAMETER");
    // ajv turns 1e999 into Infinity and skips its range checks on it.
    await expectProblem(
      await get("/default/v0.1/servers?limit=1e999"),
      400,
      "ERR_INVALID_PARAMETER",
    );
    await expectProblem(
      await get("/default/v0.1/servers?cursor=%21%21"),
      400,
      "ERR_INVALID_CURSOR",
    );
    await expectProblem(
      await get("/default/v0.1/servers?cursor=eyJhIjoxfQ"),
      400,
      "ERR_INVALID_CURSOR",
    );
    await expectProblem(
      await get("/default/v0.1/servers?updated_since=yesterday"),
      400,
      "ERR_INVALID_PARAMETER",
    );
    await expectProblem(
      await get("/default/v0.1/servers?include_deleted=yes"),
      400,
      "ERR_INVALID_PARAMETER",
    );
    await expectProblem(await get("/nope/v0.1/servers"), 404, "ERR_REGISTRY_NOT_FOUND");
    await expectProblem(await get("/nope/v9/whatever"), 404, "ERR_NOT_FOUND");
    const post = (body: string, type = "application/json") =>
      get("/default/v0.1/publish", { method: "POST", headers: { "content-type": type }, body });
    await expectProblem(await post("{not json"), 400, "ERR_BAD_REQUEST");
    await expectProblem(
      await post("name=x", "application/x-www-form-urlencoded"),
      415,
      "ERR_UNSUPPORTED_MEDIA_TYPE",
    );
    await expectProblem(
      await post(JSON.stringify({ name: "x".repeat(70_000) })),
      413,
      "ERR_PAYLOAD_TOO_LARGE",
    );
    await expectProblem(
      await publish({
        name: "a.b/c",
        version: "1.0.0",
        url: "https://c.example",
        _meta: { big: "x".repeat(2000) },
      }),
      413,
      "ERR_META_TOO_LARGE",
    );
    await expectProblem(
      await publish({ name: "nonamespace", version: "1.0.0", url: "https://c.example" }),
      400,
      "ERR_INVALID_ENTRY",
    );
    await expectProblem(
      await publish({ name: "a.b/c", version: "^1.0", url: "https://c.example" }),
      400,
      "ERR_INVALID_ENTRY",
    );
    await expectProblem(
      await publish({ name: "a.b/c", version: "1.0.0" }),
      400,
      "ERR_INVALID_ENTRY",
    );
    await expectProblem(
      await publish({ name: "a.b/c", version: "1.0.0", url: "ftp://c" }),
      400,
      "ERR_INVALID_ENTRY",
    );
    await expectProblem(await publish({ version: "1.0.0" }), 400, "ERR_INVALID_ENTRY");
    await expectProblem(await post("[1,2]"), 400, "ERR_INVALID_ENTRY");
    await expectProblem(await post("null"), 400, "ERR_INVALID_ENTRY");
  });

  it("manages sources and registries through the admin API", async () => {
    const list = await json<{
      sources: { name: string; readOnly: boolean; status: { phase: string } }[];
    }>("/v1/sources");
    expect(list.sources.map((s) => s.name)).toEqual(["catalog", "team", "toolhive"]);
    const cat = await json<Record<string, unknown>>("/v1/sources/catalog");
    expect(cat).toMatchObject({
      kind: "file",
      origin: "config",
      readOnly: true,
      status: { phase: "Ready", entryCount: 12 },
    });
    const put = (path: string, body: unknown) =>
      get(path, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await expectProblem(
      await put("/v1/sources/catalog", { file: { path: "x.json" } }),
      403,
      "ERR_CONFIG_RESOURCE_READONLY",
    );
    await expectProblem(
      await get("/v1/sources/catalog", { method: "DELETE" }),
      403,
      "ERR_CONFIG_RESOURCE_READONLY",
    );
    await expectProblem(await put("/v1/sources/extra", { file: {} }), 400, "ERR_INVALID_RESOURCE");
    await expectProblem(
      await put("/v1/sources/Bad_Name", { managed: {} }),
      400,
      "ERR_INVALID_RESOURCE",
    );
    await expectProblem(
      await put("/v1/sources/second", { managed: {} }),
      409,
      "ERR_MANAGED_SOURCE_EXISTS",
    );
    writeFileSync(
      join(dir, "extra.json"),
      JSON.stringify({ servers: [{ name: "io.extra/one", version: "1.0.0" }] }),
    );
    const created = await put("/v1/sources/extra", { file: { path: "extra.json" } });
    expect(created.status).toBe(201);
    const synced = await get("/v1/sources/extra/sync?wait=true", { method: "POST" });
    expect(synced.status).toBe(200);
    expect(await synced.json()).toMatchObject({ status: { phase: "Ready", entryCount: 1 } });
    expect((await get("/v1/sources/extra/sync", { method: "POST" })).status).toBe(202);
    await expectProblem(
      await get("/v1/sources/team/sync", { method: "POST" }),
      409,
      "ERR_SOURCE_NOT_SYNCED",
    );
    expect(
      (
        await put("/v1/sources/extra", {
          file: { path: "extra.json" },
          filter: { names: { exclude: ["*"] } },
        })
      ).status,
    ).toBe(200);

    await expectProblem(
      await put("/v1/registries/mine", { sources: ["nope"] }),
      400,
      "ERR_INVALID_RESOURCE",
    );
    await expectProblem(
      await put("/v1/registries/default", { sources: ["extra"] }),
      403,
      "ERR_CONFIG_RESOURCE_READONLY",
    );
    expect((await put("/v1/registries/mine", { sources: ["extra", "catalog"] })).status).toBe(201);
    expect(await json("/v1/registries/mine")).toMatchObject({
      name: "mine",
      sources: ["extra", "catalog"],
      origin: "api",
      readOnly: false,
    });
    await expectProblem(
      await get("/v1/sources/extra", { method: "DELETE" }),
      409,
      "ERR_SOURCE_IN_USE",
    );
    // The changed filter was re-applied: the view has only the catalog now.
    await get("/v1/sources/extra/sync?wait=true", { method: "POST" });
    expect((await json("/mine/v0.1/servers")).metadata.count).toBe(12);
    expect((await get("/v1/registries/mine", { method: "DELETE" })).status).toBe(204);
    await expectProblem(await get("/mine/v0.1/servers"), 404, "ERR_REGISTRY_NOT_FOUND");
    expect((await get("/v1/sources/extra", { method: "DELETE" })).status).toBe(204);
    await expectProblem(await get("/v1/sources/extra"), 404, "ERR_SOURCE_NOT_FOUND");
    expect((await json<{ registries: unknown[] }>("/v1/registries")).registries).toHaveLength(2);
  });
});

describe("graceful shutdown", () => {
  it("finishes in-flight requests, then refuses new connections", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shutdown-"));
    const slow = createServer((_req, res) => {
      setTimeout(() => res.writeHead(200).end(JSON.stringify({ servers: [] })), 800);
    });
    await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
    const port = (slow.address() as AddressInfo).port;
    writeFileSync(join(dir, "toolhive.json"), toolhiveCatalog(100));
    const server = await startServer(
      config(dir).replace(
        "  - name: team\n",
        `  - name: slow\n    url: { url: "http://127.0.0.1:${port}/r.json" }\n  - name: team\n`,
      ),
      dir,
    );
    try {
      await new Promise((r) => setTimeout(r, 1200));
      const inflight = fetch(`${server.url}/v1/sources/slow/sync?wait=true`, { method: "POST" });
      await new Promise((r) => setTimeout(r, 200));
      const closing = server.close();
      const res = await inflight;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ outcome: { outcome: "unchanged" } });
      await closing;
      await expect(fetch(`${server.url}/health`)).rejects.toThrow();
    } finally {
      await server.close();
      slow.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a drop-in for clients of the official registry", () => {
  let dir: string;
  let server: RegistryServer;
  const at = (path: string, init?: RequestInit) => fetch(`${server.url}${path}`, init);
  const publishAt = (path: string, body: Record<string, unknown>) =>
    at(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const doc = (name: string, version: string) => ({
    $schema: SERVER_SCHEMA,
    name,
    version,
    description: "A server",
    url: "https://c.example/mcp",
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "dropin-"));
    // One registry and no defaultRegistry: the root paths serve it.
    server = await startServer(
      `
sources:
  - name: catalog
    file: { path: ${join(FIXTURES, "catalog-upstream.json")} }
  - name: team
    managed: {}
registries:
  - name: only
    sources: [catalog, team]
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

  it("serves the only registry at /v0.1 and /v0, beside its own prefixes, and health there", async () => {
    expect((await publishAt("/v0/publish", doc("io.example/dropin", "1.0.0"))).status).toBe(200);
    for (const prefix of ["/v0.1", "/v0", "/only/v0.1", "/only/v0", "/registry/only/v0"]) {
      const r = await at(`${prefix}/servers/io.example%2Fdropin/versions/latest`);
      expect(r.status, prefix).toBe(200);
    }
    for (const path of ["/v0.1/health", "/v0/health"]) {
      const r = await at(path);
      expect(r.status, path).toBe(200);
      expect(await r.json()).toEqual({ status: "ok" });
    }
  });

  it("dates every version's status from its publish on", async () => {
    const r = await at("/v0.1/servers/io.example%2Fdropin/versions/1.0.0");
    const meta = ((await r.json()) as { _meta: Record<string, Record<string, unknown>> })._meta[
      OFFICIAL
    ];
    expect(meta?.statusChangedAt).toBe(meta?.publishedAt);
    const listed = (await (await at("/v0.1/servers?limit=100")).json()) as Page;
    for (const item of listed.servers) {
      expect(item._meta[OFFICIAL]?.statusChangedAt, String(item.server.name)).toEqual(
        expect.any(String),
      );
    }
  });

  it("requires a known $schema on publish, naming the field", async () => {
    const { $schema: _omitted, ...bare } = doc("io.example/noschema", "1.0.0");
    for (const body of [bare, { ...bare, $schema: "https://example.com/other.json" }]) {
      const r = await publishAt("/v0.1/publish", body);
      expect(r.status).toBe(400);
      const p = (await r.json()) as { code: string; errors: { location: string }[] };
      expect(p.code).toBe("ERR_INVALID_ENTRY");
      expect(p.errors.map((e) => e.location)).toContain("body.$schema");
    }
    const older = "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json";
    expect((await publishAt("/v0.1/publish", { ...bare, $schema: older })).status).toBe(200);
  });

  it("answers a known path asked with another method 405 with Allow", async () => {
    for (const [method, path, allow] of [
      ["DELETE", "/v0.1/servers", "GET, HEAD"],
      ["POST", "/v0/servers", "GET, HEAD"],
      ["GET", "/v0.1/publish", "POST"],
      ["PUT", "/only/v0.1/servers/io.example%2Fdropin/versions/1.0.0", "DELETE, GET, HEAD"],
      ["DELETE", "/v0.1/health", "GET, HEAD"],
      ["POST", "/v1/sources", "GET, HEAD"],
    ] as const) {
      const r = await at(path, { method });
      expect(r.status, `${method} ${path}`).toBe(405);
      expect(r.headers.get("allow"), `${method} ${path}`).toBe(allow);
      expect(((await r.json()) as { code: string }).code).toBe("ERR_METHOD_NOT_ALLOWED");
    }
    expect((await at("/v0.1/nope", { method: "DELETE" })).status).toBe(404);
  });

  it("answers an oversized body 413 every time, never with a reset (50 in a row)", async () => {
    // 6 MB against a 64 KiB limit, written whole before the answer is read (as most clients
    // do): the 413 comes before the body is read, and the rest must be taken off the
    // connection rather than the connection reset under the sender (EPIPE).
    const body = Buffer.from(
      JSON.stringify({ ...doc("io.example/big", "1.0.0"), pad: "x".repeat(6_000_000) }),
    );
    const { port } = new URL(server.url);
    const head = (n: number) =>
      `POST /v0.1/publish HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${n}\r\n\r\n`;
    // Done when the whole body was written and the answer read; a reset fails the attempt.
    const once = () =>
      new Promise<string>((ok, fail) => {
        const sock = connect(Number(port), "127.0.0.1");
        let got = "";
        let sent = false;
        const settle = () => {
          if (!sent || !got.includes('"code"')) return;
          sock.destroy();
          ok(got);
        };
        sock.on("data", (d: Buffer) => {
          got += d.toString();
          settle();
        });
        sock.on("error", fail);
        sock.on("close", () => fail(new Error(`closed (body sent: ${sent}): ${got}`)));
        sock.write(head(body.length));
        sock.write(body, (err) => {
          sent = err === undefined || err === null;
          settle();
        });
      });
    for (let i = 0; i < 50; i++) {
      const answer = await once();
      expect(answer.split("\r\n")[0], `attempt ${i + 1}`).toBe("HTTP/1.1 413 Payload Too Large");
      expect(answer, `attempt ${i + 1}`).toContain("ERR_PAYLOAD_TOO_LARGE");
    }
  });
});

describe("OpenAPI document", () => {
  it("documents every route and error and compiles", async () => {
    const dir = mkdtempSync(join(tmpdir(), "openapi-"));
    writeFileSync(join(dir, "toolhive.json"), toolhiveCatalog(100));
    const server = await startServer(config(dir), dir);
    try {
      const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
        openapi: string;
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
        components: { schemas: Record<string, unknown> };
      };
      expect(doc.openapi).toBe("3.1.0");
      const ops = Object.entries(doc.paths).flatMap(([p, methods]) =>
        Object.entries(methods).map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, op })),
      );
      const keys = ops.map((o) => o.key);
      for (const want of [
        "GET /{registry}/v0.1/servers",
        "GET /{registry}/v0.1/servers/{name}/versions",
        "GET /{registry}/v0.1/servers/{name}/versions/{version}",
        "DELETE /{registry}/v0.1/servers/{name}/versions/{version}",
        "POST /{registry}/v0.1/publish",
        "GET /v1/sources",
        "GET /v1/sources/{name}",
        "PUT /v1/sources/{name}",
        "DELETE /v1/sources/{name}",
        "POST /v1/sources/{name}/sync",
        "GET /v1/registries",
        "PUT /v1/registries/{name}",
        "DELETE /v1/registries/{name}",
        "GET /health",
        "GET /readiness",
        "GET /version",
        "GET /metrics",
        "GET /openapi.json",
      ]) {
        expect(keys).toContain(want);
      }
      const ajv = new Ajv2020({ strict: false, validateFormats: false });
      ajv.addSchema({
        $id: "https://doc.test/openapi.json",
        $defs: JSON.parse(
          JSON.stringify(doc.components.schemas).replace(/"#\/components\/schemas\//g, '"#/$defs/'),
        ) as object,
      });
      const text = JSON.stringify(doc);
      // Every $ref resolves inside the document.
      for (const m of text.matchAll(/"\$ref":"#\/([^"]+)"/g)) {
        let node: unknown = doc;
        for (const seg of (m[1] ?? "").split("/")) node = (node as Record<string, unknown>)[seg];
        expect(node, m[1]).toBeDefined();
      }
      for (const { key, op } of ops) {
        expect(Object.keys(op.responses).length, key).toBeGreaterThan(0);
        if (!/health|readiness|version|metrics|openapi/.test(key)) {
          expect(Object.keys(op.responses), key).toContain("400");
          expect(JSON.stringify(op.responses["400"]), key).toContain("Problem");
        }
      }
      // Every request and response schema compiles (JSON Schema 2020-12, as OpenAPI 3.1 says).
      let compiled = 0;
      const walk = (node: unknown): void => {
        if (node === null || typeof node !== "object") return;
        const n = node as Record<string, unknown>;
        if (n.schema !== undefined && typeof n.schema === "object") {
          const text = JSON.stringify(n.schema).replace(
            /"#\/components\/schemas\//g,
            '"https://doc.test/openapi.json#/$defs/',
          );
          ajv.compile(JSON.parse(text) as object);
          compiled++;
        }
        for (const v of Object.values(n)) walk(v);
      };
      walk(doc.paths);
      expect(compiled).toBeGreaterThan(40);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

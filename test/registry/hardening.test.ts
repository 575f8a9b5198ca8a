// Hostile client input against the anonymous-mode server, on both stores: deep and NUL-laden
// bodies and parameters, out-of-range dates, odd content types, names that shadow a synced
// source, an upstream with a NUL, and a store that goes away. Every answer is a 4xx problem or
// a correct 2xx, never a 500, and nothing stored breaks a later read.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../support/postgres.js";
import { startServer, untilReady } from "./helpers.js";

const SERVER_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

const FIXTURE = join(import.meta.dirname, "fixtures/upstream.json");

function nested(depth: number, leaf: string): string {
  return `${'{"a":'.repeat(depth)}${leaf}${"}".repeat(depth)}`;
}

/** Nested lists: one byte a level, so depths in the tens of thousands fit the body limit. */
function nestedList(depth: number): string {
  return `${"[".repeat(depth)}1${"]".repeat(depth)}`;
}

const stores: { name: string; database: (dir: string) => Promise<string> }[] = [
  { name: "embedded", database: () => Promise.resolve("") },
];
let pg: PostgresServer | undefined;
if (postgresAvailable()) {
  stores.push({
    name: "postgres",
    database: async (dir) => {
      pg ??= await startPostgres();
      await pg.createDatabase("hardening");
      writeFileSync(join(dir, "app-pw"), `${pg.appPassword}\n`);
      writeFileSync(join(dir, "mig-pw"), `${pg.migrationPassword}\n`);
      return `database:
  host: 127.0.0.1
  port: ${pg.port}
  database: hardening
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable`;
    },
  });
}

describe.each(stores)("hostile input ($name store)", (store) => {
  let dir: string;
  let server: RegistryServer;
  const get = (path: string, init?: RequestInit) => fetch(`${server.url}${path}`, init);
  const post = (path: string, body: string, type = "application/json") =>
    get(path, { method: "POST", headers: { "content-type": type }, body });
  // A publish names its server.json schema (required, as the official registry has it).
  const publish = (body: Record<string, unknown>, registry = "default") =>
    post(`/${registry}/v0.1/publish`, JSON.stringify({ $schema: SERVER_SCHEMA, ...body }));
  const expectProblem = async (r: Response | Promise<Response>, status: number, code?: string) => {
    const res = await r;
    const text = await res.text();
    expect(res.status, text).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    if (code !== undefined) expect((JSON.parse(text) as { code: string }).code).toBe(code);
  };
  const ok = {
    name: "io.fuzz/ok",
    version: "1.0.0",
    url: "https://ok.example/mcp",
    description: "Fuzzed",
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hardening-"));
    writeFileSync(join(dir, "late.json"), JSON.stringify({ servers: [] }));
    // An upstream whose second entry holds a NUL (JSON escapes it; the store cannot keep it).
    writeFileSync(
      join(dir, "nul.json"),
      JSON.stringify({
        servers: [
          { ...ok, name: "io.nul/good", description: "fine" },
          { ...ok, name: "io.nul/bad", description: "a\u0000b" },
        ],
      }),
    );
    server = await startServer(
      `
sources:
  - name: catalog
    format: upstream
    file: { path: ${FIXTURE} }
  - name: nul
    file: { path: nul.json }
  - name: late
    file: { path: late.json }
  - name: team
    managed: {}
registries:
  - name: default
    sources: [catalog, team]
  - name: all
    sources: [team, catalog, nul]
  - name: late
    sources: [team, late]
auth: { mode: anonymous }
${await store.database(dir)}
`,
      dir,
    );
    await untilReady(server.url);
  }, 120_000);
  afterAll(async () => {
    await server?.close().catch(() => undefined);
    if (store.name === "postgres") await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a deeply nested publish, and no later read fails", async () => {
    await expectProblem(
      post(
        "/default/v0.1/publish",
        `{"name":"io.deep/x","version":"1.0.0","url":"https://d.example","_meta":${nested(4_400, '"x"')}}`,
      ),
      400,
      "ERR_INPUT_LIMIT",
    );
    for (const field of ["_meta", "remotes", "repository", "packages"]) {
      await expectProblem(
        post(
          "/default/v0.1/publish",
          `{"name":"io.deep/y","version":"1.0.0","url":"https://d.example","${field}":${nestedList(30_000)}}`,
        ),
        400,
        "ERR_INPUT_LIMIT",
      );
    }
    await expectProblem(
      get("/v1/sources/deep", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: `{"managed":{},"claims":{"team":${nestedList(30_000)}}}`,
      }),
      400,
      "ERR_INPUT_LIMIT",
    );
    expect((await get("/default/v0.1/servers")).status).toBe(200);
    expect((await get("/all/v0.1/servers")).status).toBe(200);
  });

  it("answers NUL bytes anywhere with 400", async () => {
    await expectProblem(get("/default/v0.1/servers/io.test%2Falpha%00/versions"), 400);
    await expectProblem(get("/default/v0.1/servers/io.test%2Falpha/versions/1.0.0%00"), 400);
    await expectProblem(get("/default%00/v0.1/servers"), 400);
    await expectProblem(get("/default/v0.1/servers?search=a%00b"), 400);
    await expectProblem(get("/v1/sources/cat%00alog"), 400);
    const forged = Buffer.from(JSON.stringify(["io.test/alpha\u0000", "1.0.0"])).toString(
      "base64url",
    );
    await expectProblem(get(`/default/v0.1/servers?cursor=${forged}`), 400, "ERR_INVALID_CURSOR");
    for (const field of ["description", "title", "version"]) {
      await expectProblem(publish({ ...ok, [field]: "1.0.0\u0000" }), 400);
    }
    await expectProblem(publish({ ...ok, claims: { team: "a\u0000" } }), 400);
    await expectProblem(publish({ ...ok, claims: { "t\u0000": "a" } }), 400);
    await expectProblem(
      get("/v1/sources/nulclaims", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ managed: {}, claims: { team: "\u0000" } }),
      }),
      400,
    );
    expect((await get("/default/v0.1/servers")).status).toBe(200);
  });

  it("takes dates before the store's range and answers them as the epoch", async () => {
    for (const since of ["0000-01-01T00:00:00Z", "0001-01-01T00:00:00%2B01:00"]) {
      const r = await get(`/default/v0.1/servers?updated_since=${since}`);
      expect(r.status, since).toBe(200);
      expect(((await r.json()) as { metadata: { count: number } }).metadata.count).toBe(3);
    }
  });

  it("refuses an empty limit whether or not an answer is cached", async () => {
    expect((await get("/default/v0.1/servers")).status).toBe(200);
    expect((await get("/default/v0.1/servers")).status).toBe(200);
    await expectProblem(get("/default/v0.1/servers?limit="), 400, "ERR_INVALID_PARAMETER");
  });

  it("answers a text/plain body with 415", async () => {
    await expectProblem(
      post("/default/v0.1/publish", JSON.stringify(ok), "text/plain"),
      415,
      "ERR_UNSUPPORTED_MEDIA_TYPE",
    );
  });

  it("refuses remotes that are not http(s) objects", async () => {
    const { url: _url, ...noUrl } = ok;
    for (const remotes of [
      [{ type: "streamable-http", url: "javascript:alert(1)" }],
      [{ type: "sse", url: "file:///etc/passwd" }],
      ["https://x.example"],
      [1],
      [{ url: "https://x.example" }],
    ]) {
      await expectProblem(publish({ ...noUrl, remotes }), 400, "ERR_INVALID_ENTRY");
    }
  });

  it("refuses a publish that would shadow a synced name; the synced source wins", async () => {
    // "all" lists the managed source first.
    await expectProblem(
      publish({ ...ok, name: "io.test/alpha", version: "0.0.1" }, "all"),
      409,
      "ERR_NAME_TAKEN",
    );
    // A name published first and synced later: the synced entry is served.
    expect((await publish({ ...ok, name: "io.late/x" }, "late")).status).toBe(200);
    writeFileSync(
      join(dir, "late.json"),
      JSON.stringify({ servers: [{ ...ok, name: "io.late/x", description: "curated" }] }),
    );
    expect((await get("/v1/sources/late/sync?wait=true", { method: "POST" })).status).toBe(200);
    const r = await get(`/late/v0.1/servers/${encodeURIComponent("io.late/x")}/versions/latest`);
    expect(r.status).toBe(200);
    expect(((await r.json()) as { server: { description?: string } }).server.description).toBe(
      "curated",
    );
  });

  it("skips an upstream entry with a NUL and finishes the sync", async () => {
    const r = await get("/v1/sources/nul");
    const view = (await r.json()) as {
      status: { phase: string; entryCount: number; message?: string };
    };
    expect(view.status.phase).toBe("Ready");
    expect(view.status.entryCount).toBe(1);
    expect(view.status.message).toMatch(/skipped 1 invalid entry/);
  });

  it("answers 503 with Retry-After while the store is down, and /readiness says nothing more", async () => {
    await server.store.close();
    const r = await get("/default/v0.1/servers?search=after-outage");
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
    const ready = await get("/readiness");
    expect(ready.status).toBe(503);
    expect(ready.headers.get("retry-after")).toMatch(/^\d+$/);
    const text = await ready.text();
    expect(JSON.parse(text)).toEqual({ status: "not ready" });
    expect(text).not.toMatch(/127\.0\.0\.1|port|closed|ECONN/i);
  });
});

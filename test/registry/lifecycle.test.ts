// The official registry's v0.1 API beyond reading: exact-version filter, lifecycle status of
// one version and of all versions (statusMessage, statusChangedAt, include_deleted, deleted
// never latest), versions newest-published first, and the default registry at the root.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { startServer } from "./helpers.js";

const SERVER_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

const OFFICIAL = "io.modelcontextprotocol.registry/official";

interface Item {
  server: { name: string; version: string };
  _meta: Record<string, Record<string, unknown>>;
}
interface Page {
  servers: Item[];
  metadata: { count: number; nextCursor?: string };
}

describe("lifecycle status and the default registry", () => {
  let dir: string;
  let server: RegistryServer;
  const call = (path: string, method = "GET", body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      ...(body !== undefined
        ? {
            headers: { "content-type": "application/json" },
            // A publish names its server.json schema (required, as the official registry has it).
            body: JSON.stringify(
              path.endsWith("/publish") ? { $schema: SERVER_SCHEMA, ...(body as object) } : body,
            ),
          }
        : {}),
    });
  const ok = async <T>(path: string, method = "GET", body?: unknown): Promise<T> => {
    const r = await call(path, method, body);
    expect(r.status, `${method} ${path}: ${await r.clone().text()}`).toBe(200);
    return (await r.json()) as T;
  };
  const NAME = "io.github.acme/files";
  const enc = encodeURIComponent(NAME);
  const versions = (p: Page) => p.servers.map((s) => s.server.version);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "lifecycle-"));
    server = await startServer(
      `
sources:
  - name: team
    managed: {}
registries:
  - name: main
    sources: [team]
defaultRegistry: main
auth: { mode: anonymous }
`,
      dir,
    );
    // Published out of semver order: the listing follows publication, newest first.
    for (const version of ["1.0.0", "2.0.0", "1.5.0"]) {
      await ok("/v0.1/publish", "POST", {
        name: NAME,
        version,
        description: "Files",
        url: "https://files.acme.dev/mcp",
      });
    }
    await ok("/main/v0.1/publish", "POST", {
      name: "io.github.acme/other",
      version: "1.0.0",
      description: "Other",
      url: "https://other.acme.dev/mcp",
    });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the default registry at the root as under its name", async () => {
    const root = await ok<Page>("/v0.1/servers");
    const named = await ok<Page>("/main/v0.1/servers");
    expect(root).toEqual(named);
    expect(root.metadata.count).toBe(4);
    const doc = await ok<{ paths: Record<string, unknown> }>("/openapi.json");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v0.1/servers",
        "/v0.1/publish",
        "/v0.1/servers/{name}/status",
        "/v0.1/servers/{name}/versions/{version}/status",
        "/{registry}/v0.1/servers/{name}/versions/{version}/status",
      ]),
    );
  });

  it("filters by exact version, and by latest", async () => {
    const exact = await ok<Page>("/v0.1/servers?version=1.5.0");
    expect(exact.servers.map((s) => `${s.server.name}@${s.server.version}`)).toEqual([
      `${NAME}@1.5.0`,
    ]);
    const one = await ok<Page>("/v0.1/servers?version=1.0.0");
    expect(one.servers.map((s) => s.server.name).sort()).toEqual([NAME, "io.github.acme/other"]);
    expect((await ok<Page>("/v0.1/servers?version=9.9.9")).servers).toEqual([]);
    const latest = await ok<Page>("/v0.1/servers?version=latest");
    expect(latest.servers.find((s) => s.server.name === NAME)?.server.version).toBe("2.0.0");
  });

  it("lists versions newest-published first", async () => {
    expect(versions(await ok<Page>(`/v0.1/servers/${enc}/versions`))).toEqual([
      "1.5.0",
      "2.0.0",
      "1.0.0",
    ]);
  });

  it("deprecates one version with a message, still served and still latest", async () => {
    const item = await ok<Item>(`/v0.1/servers/${enc}/versions/2.0.0/status`, "PATCH", {
      status: "deprecated",
      statusMessage: "use 3.x when it ships",
    });
    const meta = item._meta[OFFICIAL];
    expect(meta).toMatchObject({
      status: "deprecated",
      statusMessage: "use 3.x when it ships",
      isLatest: true,
    });
    expect(Date.parse(String(meta?.statusChangedAt))).not.toBeNaN();
    const read = await ok<Item>(`/main/v0.1/servers/${enc}/versions/2.0.0`);
    expect(read._meta[OFFICIAL]).toMatchObject({ status: "deprecated" });
  });

  it("hides a deleted version by default and never makes it latest", async () => {
    await ok(`/v0.1/servers/${enc}/versions/2.0.0/status`, "PATCH", { status: "deleted" });
    expect(versions(await ok<Page>(`/v0.1/servers/${enc}/versions`))).toEqual(["1.5.0", "1.0.0"]);
    expect(versions(await ok<Page>(`/v0.1/servers/${enc}/versions?include_deleted=true`))).toEqual([
      "1.5.0",
      "2.0.0",
      "1.0.0",
    ]);
    const latest = await ok<Item>(`/v0.1/servers/${enc}/versions/latest`);
    expect(latest.server.version).toBe("1.5.0");
    const listed = await ok<Page>(`/v0.1/servers?search=files`);
    expect(versions(listed).sort()).toEqual(["1.0.0", "1.5.0"]);
    const all = await ok<Page>(`/v0.1/servers?search=files&include_deleted=true`);
    expect(versions(all).sort()).toEqual(["1.0.0", "1.5.0", "2.0.0"]);
    // The message of the earlier status is cleared when a new status comes without one.
    const pinned = await ok<Item>(`/v0.1/servers/${enc}/versions/2.0.0`);
    expect(pinned._meta[OFFICIAL]).toMatchObject({ status: "deleted", isLatest: false });
    expect(pinned._meta[OFFICIAL]).not.toHaveProperty("statusMessage");
    // Restored, it is latest again.
    await ok(`/v0.1/servers/${enc}/versions/2.0.0/status`, "PATCH", { status: "active" });
    expect((await ok<Item>(`/v0.1/servers/${enc}/versions/latest`)).server.version).toBe("2.0.0");
  });

  it("sets the status of every version of a server at once", async () => {
    const page = await ok<Page>(`/v0.1/servers/${enc}/status`, "PATCH", {
      status: "deprecated",
      statusMessage: "moved to io.github.acme/files2",
    });
    expect(versions(page).sort()).toEqual(["1.0.0", "1.5.0", "2.0.0"]);
    for (const s of page.servers) {
      expect(s._meta[OFFICIAL]).toMatchObject({
        status: "deprecated",
        statusMessage: "moved to io.github.acme/files2",
      });
    }
    const other = await ok<Item>(`/v0.1/servers/io.github.acme%2Fother/versions/1.0.0`);
    expect(other._meta[OFFICIAL]).toMatchObject({ status: "active" });
  });

  it("refuses a bad status change with a problem", async () => {
    for (const [path, body, status] of [
      [`/v0.1/servers/${enc}/versions/2.0.0/status`, { status: "retired" }, 400],
      [`/v0.1/servers/${enc}/versions/2.0.0/status`, {}, 400],
      [`/v0.1/servers/${enc}/versions/7.0.0/status`, { status: "active" }, 404],
      [`/v0.1/servers/io.github.acme%2Fnone/status`, { status: "active" }, 404],
      // "all" names every version in the store's status operation: never one version.
      [`/v0.1/servers/${enc}/versions/all/status`, { status: "deleted" }, 404],
    ] as const) {
      const r = await call(path, "PATCH", body);
      expect(r.status, path).toBe(status);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
    const all = await call("/v0.1/publish", "POST", {
      name: NAME,
      version: "all",
      description: "Files",
      url: "https://files.acme.dev/mcp",
    });
    expect(all.status).toBe(400);
    expect(versions(await ok<Page>(`/v0.1/servers/${enc}/versions`))).toHaveLength(3);
  });
});

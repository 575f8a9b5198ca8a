// The bounds of one sync against hostile upstreams: endless fresh cursors, a huge cursor, a
// gzip bomb, a page that never ends, an upstream that never answers (the readiness gate has a
// deadline). Each fails its sync, keeps the last good data and says why.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SourceConfig } from "../../src/registry/config/types.js";
import { httpGet } from "../../src/registry/sources/fetch.js";
import type { LocationPolicy } from "../../src/registry/sources/location.js";
import { runSync, type SyncContext } from "../../src/registry/sources/sync.js";
import type { Store } from "../../src/registry/store/store.js";
import { makeRepo, publishRepo, startGitServer, type GitServer } from "../support/git-server.js";
import { sqliteFactory, startServer } from "./helpers.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function listen(handler: Handler): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const item = (i: number) => ({
  server: {
    name: `io.example/s-${i}`,
    version: "1.0.0",
    remotes: [{ type: "sse", url: "https://x.example/sse" }],
  },
});

describe("sync limits", () => {
  const factory = sqliteFactory();
  let store: Store;
  const ctx: SyncContext = { baseDir: tmpdir(), cacheDir: join(tmpdir(), "unused-git-cache") };
  const servers: Server[] = [];
  beforeAll(async () => {
    store = await factory.open();
  });
  afterAll(async () => {
    for (const s of servers) s.closeAllConnections();
    for (const s of servers) s.close();
    await factory.teardown();
  });

  async function source(name: string, cfg: Omit<SourceConfig, "name">): Promise<SourceConfig> {
    const kind = Object.keys(cfg).find((k) => ["api", "url"].includes(k)) ?? "url";
    await store.putSource(name, kind, cfg, "api");
    return { name, ...cfg };
  }

  it("stops an api upstream that hands out a fresh cursor for ever", async () => {
    let pages = 0;
    const { url, server } = await listen((req, res) => {
      pages++;
      const cursor = new URL(req.url ?? "/", "http://x").searchParams.get("cursor") ?? "0";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          servers: [item(pages)],
          metadata: { nextCursor: `${Number(cursor) + 1}` },
        }),
      );
    });
    servers.push(server);
    const cfg = await source("endless", { api: { endpoint: url } });
    const outcome = await runSync(store, cfg, { ...ctx, limits: { maxPages: 40 } });
    expect(outcome).toMatchObject({ outcome: "failed" });
    expect((outcome as { message: string }).message).toMatch(/more than 40 pages/);
    expect(pages).toBe(40);
    expect(await store.countEntries("endless")).toBe(0);
  });

  it("refuses a cursor longer than the limit", async () => {
    const { url, server } = await listen((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ servers: [item(1)], metadata: { nextCursor: "c".repeat(5000) } }));
    });
    servers.push(server);
    const cfg = await source("long-cursor", { api: { endpoint: url } });
    const outcome = await runSync(store, cfg, ctx);
    expect((outcome as { message: string }).message).toMatch(/cursor longer than 1024/);
  });

  it("caps the decompressed size of a gzip bomb while it streams", async () => {
    // 80 MiB of spaces compress to about 80 KiB.
    const bomb = gzipSync(Buffer.alloc(80 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const { url, server } = await listen((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(bomb);
    });
    servers.push(server);
    const cfg = await source("bomb", { url: { url: `${url}/registry.json` } });
    const outcome = await runSync(store, cfg, { ...ctx, limits: { maxFileBytes: 1024 * 1024 } });
    expect((outcome as { message: string }).message).toMatch(/larger than 1048576 bytes/);
    // The same bound by default, below what the bomb expands to.
    const byDefault = await runSync(store, cfg, ctx);
    expect((byDefault as { message: string }).message).toMatch(/larger than \d+ bytes/);
  });

  it("refuses a registry file over the limit from a git repository", async () => {
    const repo = mkdtempSync(join(tmpdir(), "big-repo-"));
    try {
      const big = { servers: Array.from({ length: 20_000 }, (_, i) => item(i).server) };
      writeFileSync(join(repo, "registry.json"), JSON.stringify(big));
      const git = (...args: string[]) =>
        execFileSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", ...args]);
      git("init", "-q", "-b", "main");
      git("add", "registry.json");
      git("commit", "-q", "-m", "big");
      const cfg = await source("big-git", { git: { repository: `file://${repo}` } });
      const outcome = await runSync(store, cfg, { ...ctx, limits: { maxFileBytes: 1024 * 1024 } });
      expect((outcome as { message: string }).message).toMatch(/larger than 1048576 bytes/);
      expect(await runSync(store, cfg, ctx)).toMatchObject({ outcome: "updated", entries: 20_000 });
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it("ends a sync that outlives its deadline", async () => {
    const { url, server } = await listen((_req, res) => {
      // Headers, then nothing: the body never ends.
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"servers": [');
    });
    servers.push(server);
    const cfg = await source("slow", { url: { url: `${url}/registry.json`, timeout: "10m" } });
    const outcome = await runSync(store, cfg, { ...ctx, limits: { timeoutMs: 300 } });
    expect(outcome).toMatchObject({ outcome: "failed" });
    expect((await store.getStatus("slow"))?.phase).toBe("Failed");
  });

  it("ends an api sync whose upstream accepts and never answers at the sync's deadline", async () => {
    const { url, server } = await listen(() => undefined);
    servers.push(server);
    const cfg = await source("silent-api", { api: { endpoint: url } });
    const started = Date.now();
    const outcome = await runSync(store, cfg, { ...ctx, limits: { timeoutMs: 300 } });
    expect(outcome).toMatchObject({ outcome: "failed" });
    expect((outcome as { message: string }).message).toMatch(/longer than 300 ms/);
    // Well before the 60 s time limit of one page.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe("fetches of sources created through the admin API", () => {
  let target: { url: string; server: Server };
  let redirector: { url: string; server: Server };
  beforeAll(async () => {
    target = await listen((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ servers: [item(1).server] }));
    });
    const port = (target.server.address() as AddressInfo).port;
    // An allowed host that sends the client on to another one (here: by name, to loopback).
    redirector = await listen((_req, res) => {
      res.writeHead(302, { location: `http://localhost:${port}/registry.json` }).end();
    });
  });
  afterAll(() => {
    target.server.close();
    redirector.server.close();
  });
  const get = (url: string, guard: LocationPolicy) =>
    httpGet(new URL(url), { signal: AbortSignal.timeout(5000), maxBytes: 1 << 20, guard });

  it("refuses a redirect to a host the policy does not allow", async () => {
    const guard = { fileRoots: [], hosts: ["127.0.0.1"], allowPrivateIP: true };
    expect((await get(`${target.url}/registry.json`, guard)).length).toBeGreaterThan(0);
    await expect(get(`${redirector.url}/registry.json`, guard)).rejects.toThrow(
      /host localhost is not in adminSources.hosts/,
    );
  });

  it("refuses, when connecting, an allowed name that resolves to a private address", async () => {
    const port = (target.server.address() as AddressInfo).port;
    const guard = { fileRoots: [], hosts: ["localhost"], allowPrivateIP: false };
    await expect(get(`http://localhost:${port}/registry.json`, guard)).rejects.toThrow(
      /private address/,
    );
  });
});

describe("git fetches of sources created through the admin API", () => {
  const factory = sqliteFactory();
  let store: Store;
  let git: GitServer;
  let work: string;
  beforeAll(async () => {
    store = await factory.open();
    git = await startGitServer();
    work = mkdtempSync(join(tmpdir(), "guarded-git-"));
    makeRepo(work, {
      "registry.json": JSON.stringify({
        servers: Array.from({ length: 2_000 }, (_, i) => ({
          ...item(i).server,
          // Incompressible text, so the pack is as large as the file.
          description: randomBytes(32).toString("hex"),
        })),
      }),
    });
    publishRepo(git, work, "catalog.git");
  });
  afterAll(async () => {
    await git.stop();
    await factory.teardown();
    rmSync(work, { recursive: true, force: true });
  });

  const sync = async (name: string, guard: LocationPolicy, limits = {}) => {
    const cfg: SourceConfig = { name, git: { repository: `${git.url}/catalog.git` } };
    await store.putSource(name, "git", { git: cfg.git }, "api");
    const cacheDir = mkdtempSync(join(tmpdir(), "guarded-cache-"));
    return runSync(store, cfg, { baseDir: tmpdir(), cacheDir, guard, limits });
  };

  it("fetches from an allowed host and address", async () => {
    const guard = { fileRoots: [], hosts: ["127.0.0.1"], allowPrivateIP: true };
    expect(await sync("allowed", guard)).toMatchObject({ outcome: "updated", entries: 2_000 });
  });

  it("refuses a loopback address unless allowed", async () => {
    const guard = { fileRoots: [], hosts: ["127.0.0.1"], allowPrivateIP: false };
    const outcome = await sync("loopback", guard);
    expect((outcome as { message: string }).message).toMatch(/private or loopback/);
  });

  it("stops a fetch that receives more than the limit", async () => {
    const guard = { fileRoots: [], hosts: ["127.0.0.1"], allowPrivateIP: true };
    const outcome = await sync("huge", guard, { maxTotalBytes: 64 * 1024 });
    expect((outcome as { message: string }).message).toMatch(/larger than 65536 bytes/);
  });
});

describe("the first-sync readiness gate", () => {
  let dir: string;
  let hung: Server;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gate-"));
    ({ server: hung } = await listen(() => undefined));
  });
  afterAll(() => {
    hung.closeAllConnections();
    hung.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("opens after its deadline even when a source never answers", async () => {
    const address = hung.address() as AddressInfo;
    const server = await startServer(
      `
sources:
  - name: hung
    url: { url: "http://127.0.0.1:${address.port}/registry.json", timeout: 10m }
  - name: team
    managed: {}
registries:
  - name: default
    sources: [hung, team]
adminSources: { hosts: [127.0.0.1], allowPrivateIP: true }
auth: { mode: anonymous }
`,
      dir,
      { firstSyncDeadlineMs: 500 },
    );
    try {
      // Without the deadline the gate would stay shut until the source's 10-minute timeout.
      let status = 503;
      for (let i = 0; i < 200 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await fetch(`${server.url}/readiness`)).status;
      }
      expect(status).toBe(200);
      // The source itself is still syncing: only the gate opened.
      const view = (await (await fetch(`${server.url}/v1/sources/hung`)).json()) as {
        status: { phase: string };
      };
      expect(view.status.phase).toBe("Syncing");
      // A source created later, just as slow, does not close the gate again.
      const created = await fetch(`${server.url}/v1/sources/later`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          url: { url: `http://127.0.0.1:${address.port}/later.json`, timeout: "10m" },
        }),
      });
      expect(created.status).toBe(201);
      expect((await fetch(`${server.url}/readiness`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

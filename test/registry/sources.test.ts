import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SourceConfig } from "../../src/registry/config/types.js";
import { SyncScheduler } from "../../src/registry/sources/scheduler.js";
import { runSync, type SyncContext } from "../../src/registry/sources/sync.js";
import type { Store } from "../../src/registry/store/store.js";
import {
  commitFiles,
  makeRepo,
  publishRepo,
  pushRepo,
  startGitServer,
  type GitServer,
} from "../support/git-server.js";
import { sqliteFactory } from "./helpers.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
// The same 12 servers in both formats.
const SMALL_UPSTREAM = readFileSync(join(FIXTURES, "catalog-upstream.json"), "utf8");
const SMALL_TOOLHIVE = readFileSync(join(FIXTURES, "catalog-toolhive.json"), "utf8");

function listen(
  handler: Parameters<typeof createServer>[1],
): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }),
    ),
  );
}

/** An upstream-shaped registry API serving `count` generated servers. */
export function upstreamApi(count: number) {
  return listen((req, res) => {
    const u = new URL(req.url ?? "/", "http://x");
    if (u.pathname !== "/v0.1/servers") {
      res.writeHead(404).end();
      return;
    }
    const limit = Number(u.searchParams.get("limit") ?? 30);
    const start = Number(u.searchParams.get("cursor") ?? 0);
    const servers = [];
    for (let i = start; i < Math.min(start + limit, count); i++) {
      servers.push({
        server: {
          name: `io.example/server-${String(i).padStart(6, "0")}`,
          version: "1.0.0",
          description: `generated server ${i}`,
        },
        _meta: {
          "io.modelcontextprotocol.registry/official": { status: "active", isLatest: true },
        },
      });
    }
    const next = start + limit < count ? String(start + limit) : undefined;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ servers, metadata: { count: servers.length, nextCursor: next } }));
  });
}

describe("sources", () => {
  const factory = sqliteFactory();
  let store: Store;
  let dir: string;
  let ctx: SyncContext;
  let git: GitServer;
  beforeAll(async () => {
    store = await factory.open();
    dir = mkdtempSync(join(tmpdir(), "sources-"));
    ctx = { baseDir: dir, cacheDir: join(dir, "git-cache") };
    git = await startGitServer({ username: "git", password: "s3cret" });
  });
  afterAll(async () => {
    await factory.teardown();
    await git.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function add(cfg: SourceConfig): Promise<void> {
    const { name, ...rest } = cfg;
    await store.putSource(
      name,
      Object.keys(rest).find(
        (k) => k !== "format" && k !== "filter" && k !== "claims" && k !== "syncPolicy",
      ) ?? "file",
      rest,
      "api",
    );
  }
  const names = async (source: string) =>
    (await store.listEntries([source], { limit: 100 })).map((e) => e.name.split("/")[1]);

  it("syncs a file, writes nothing when unchanged, re-applies a changed filter", async () => {
    writeFileSync(join(dir, "reg.json"), SMALL_UPSTREAM);
    const cfg: SourceConfig = { name: "files", file: { path: "reg.json" } };
    await add(cfg);
    expect(await runSync(store, cfg, ctx)).toEqual({ outcome: "updated", entries: 12, skipped: 0 });
    const before = await store.listEntries(["files"], { limit: 100 });
    const gen = store.generation;
    expect(await runSync(store, cfg, ctx)).toEqual({ outcome: "unchanged" });
    expect(store.generation).toBe(gen);
    expect(await store.listEntries(["files"], { limit: 100 })).toEqual(before);
    const filtered: SourceConfig = { ...cfg, filter: { names: { include: ["*/git*"] } } };
    expect(await runSync(store, filtered, ctx)).toMatchObject({ outcome: "updated", entries: 2 });
    expect(await names("files")).toEqual(["git-forge", "git-mirror"]);
    expect((await store.getStatus("files"))?.message).toBe("10 filtered out");
  });

  it("keeps the last good data when a sync fails", async () => {
    const cfg: SourceConfig = { name: "files", file: { path: "missing.json" } };
    expect(await runSync(store, cfg, ctx)).toMatchObject({ outcome: "failed" });
    const st = await store.getStatus("files");
    expect(st).toMatchObject({ phase: "Failed", entryCount: 2 });
    // The reason, never the server path.
    expect(st?.message).toMatch(/cannot read file.path: it does not exist/);
    expect(st?.message).not.toMatch(/missing\.json/);
    expect(await names("files")).toEqual(["git-forge", "git-mirror"]);
    writeFileSync(join(dir, "bad.json"), "{ nope");
    expect(await runSync(store, { name: "files", file: { path: "bad.json" } }, ctx)).toMatchObject({
      outcome: "failed",
      message: expect.stringMatching(/not JSON/) as unknown,
    });
    expect(await names("files")).toEqual(["git-forge", "git-mirror"]);
  });

  it("syncs a URL with headers and gives entries the source's claims", async () => {
    let seen = "";
    const { url, server } = await listen((req, res) => {
      seen = String(req.headers["x-token"]);
      res.writeHead(200, { "content-type": "application/json" }).end(SMALL_TOOLHIVE);
    });
    try {
      const cfg: SourceConfig = {
        name: "web",
        url: { url: `${url}/registry.json`, headers: { "x-token": "abc" } },
        claims: { org: "acme" },
      };
      await add(cfg);
      expect(await runSync(store, cfg, ctx)).toMatchObject({ outcome: "updated", entries: 12 });
      expect(seen).toBe("abc");
      const e = await store.listEntries(["web"], { limit: 1 });
      expect(e[0]?.claims).toEqual({ org: "acme" });
      const bad: SourceConfig = { name: "web", url: { url: `${url.replace(/\d+$/, "1")}/x` } };
      expect(await runSync(store, bad, ctx)).toMatchObject({ outcome: "failed" });
    } finally {
      server.close();
    }
  });

  it("syncs from Git over HTTP with basic auth, reusing its clone, by branch and tag", async () => {
    const work = join(dir, "work");
    makeRepo(work, { "catalog/registry.json": SMALL_UPSTREAM });
    const { execFileSync } = await import("node:child_process");
    execFileSync("git", ["tag", "v1"], { cwd: work });
    publishRepo(git, work, "reg.git");
    writeFileSync(join(dir, "git-pw"), "s3cret\n");
    const cfg: SourceConfig = {
      name: "gitsrc",
      git: {
        repository: `${git.url}/reg.git`,
        branch: "main",
        path: "catalog/registry.json",
        auth: { username: "git", passwordFile: "git-pw" },
      },
    };
    await add(cfg);
    const first = await runSync(store, cfg, ctx);
    expect(first, JSON.stringify(first)).toMatchObject({ outcome: "updated", entries: 12 });
    const trimmed = JSON.parse(SMALL_UPSTREAM) as { data: { servers: unknown[] } };
    trimmed.data.servers = trimmed.data.servers.slice(0, 3);
    commitFiles(work, { "catalog/registry.json": JSON.stringify(trimmed) }, "trim");
    pushRepo(git, work, "reg.git");
    expect(await runSync(store, cfg, ctx)).toMatchObject({ outcome: "updated", entries: 3 });
    expect(await runSync(store, cfg, ctx)).toEqual({ outcome: "unchanged" });
    expect(readdirSync(join(dir, "git-cache"))).toHaveLength(1);
    const tagged: SourceConfig = { ...cfg, git: { ...cfg.git!, branch: undefined, tag: "v1" } };
    delete tagged.git!.branch;
    expect(await runSync(store, tagged, ctx)).toMatchObject({ outcome: "updated", entries: 12 });
    const noAuth: SourceConfig = { ...cfg, git: { ...cfg.git!, auth: undefined } };
    delete noAuth.git!.auth;
    const r = await runSync(store, noAuth, { ...ctx, cacheDir: join(dir, "other-cache") });
    expect(r).toMatchObject({
      outcome: "failed",
      message: expect.stringMatching(/401/) as unknown,
    });
  });

  it("reads a file:// repository in place", async () => {
    const work = join(dir, "local");
    makeRepo(work, { "registry.json": SMALL_TOOLHIVE });
    const cfg: SourceConfig = { name: "localgit", git: { repository: `file://${work}` } };
    await add(cfg);
    expect(await runSync(store, cfg, ctx)).toMatchObject({ outcome: "updated", entries: 12 });
    const missing: SourceConfig = {
      name: "localgit",
      git: { repository: `file://${work}`, path: "nope.json" },
    };
    expect(await runSync(store, missing, ctx)).toMatchObject({ outcome: "failed" });
  });

  it("pages through another registry's API in batches", async () => {
    const { url, server } = await upstreamApi(2500);
    try {
      const cfg: SourceConfig = {
        name: "upstream",
        api: { endpoint: url },
        filter: { names: { exclude: ["*-000000"] } },
      };
      await add(cfg);
      expect(await runSync(store, cfg, { ...ctx, apiPageSize: 100 })).toMatchObject({
        outcome: "updated",
        entries: 2499,
      });
      expect(await runSync(store, cfg, { ...ctx, apiPageSize: 100 })).toEqual({
        outcome: "unchanged",
      });
      expect(await store.db.query(`SELECT 1 FROM entries_staging`)).toEqual({ rows: [] });
    } finally {
      server.close();
    }
  });

  it("schedules each source on its own interval: a slow source delays no other", async () => {
    const { url, server } = await listen((_req, res) => {
      setTimeout(() => res.writeHead(200).end(SMALL_UPSTREAM), 2500);
    });
    copyFileSync(join(dir, "reg.json"), join(dir, "fast.json"));
    await add({ name: "slow", url: { url, timeout: "10s" }, syncPolicy: { interval: "1s" } });
    await add({ name: "fast", file: { path: "fast.json" }, syncPolicy: { interval: "1s" } });
    const seen: string[] = [];
    const sched = new SyncScheduler({
      store,
      ctx,
      log: pino({ level: "silent" }),
      jitter: 0,
      initialDelayMs: 0,
      observe: (s) => seen.push(s),
    });
    try {
      await sched.reconcile();
      await new Promise((r) => setTimeout(r, 2200));
      expect(seen.filter((s) => s === "fast").length).toBeGreaterThanOrEqual(2);
      expect(seen).not.toContain("slow");
      expect(sched.allAttempted()).toBe(false);
      expect(sched.pending()).toContain("slow");
    } finally {
      await sched.stop();
      server.closeAllConnections();
      server.close();
    }
  });
});

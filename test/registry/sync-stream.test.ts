// The streamed `api` sync and the staging path it writes through: entries are swapped in
// atomically (readers see the old set until the commit), a failure mid-way keeps the last good
// data, the latest version is found across batches, and the HTTP GET underneath follows
// redirects, decodes compressed bodies and refuses oversized ones.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SourceConfig } from "../../src/registry/config/types.js";
import { httpGet } from "../../src/registry/sources/fetch.js";
import { API_BATCH_SIZE, runSync, type SyncContext } from "../../src/registry/sources/sync.js";
import { STAGE_ROWS, type Store } from "../../src/registry/store/store.js";
import { entry, storeFactories } from "./helpers.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

async function listen(handler: Handler): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface Item {
  name: string;
  version: string;
  description?: string;
}

/**
 * An upstream-shaped API over `items()` (read at each request, so a test can change the data
 * between syncs); `before(page)` runs before a page is answered and may hold it or fail it.
 */
async function upstream(
  items: () => Item[],
  before?: (page: number, res: ServerResponse) => Promise<boolean> | boolean,
) {
  return listen(async (req, res) => {
    const u = new URL(req.url ?? "/", "http://x");
    const limit = Number(u.searchParams.get("limit") ?? 30);
    const start = Number(u.searchParams.get("cursor") ?? 0);
    if (before !== undefined && !(await before(start / limit, res))) return;
    const all = items();
    const servers = all.slice(start, start + limit).map((s) => ({
      server: { description: `server ${s.name}`, ...s },
      _meta: { "io.modelcontextprotocol.registry/official": { status: "active" } },
    }));
    const next = start + limit < all.length ? String(start + limit) : undefined;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ servers, metadata: { nextCursor: next } }));
  });
}

const numbered = (n: number, description = "first"): Item[] =>
  Array.from({ length: n }, (_, i) => ({
    name: `io.example/s-${String(i).padStart(5, "0")}`,
    version: "1.0.0",
    description,
  }));

for (const factory of storeFactories()) {
  describe(`api sync through staging (${factory.driver})`, () => {
    let store: Store;
    const ctx: SyncContext = { baseDir: tmpdir(), cacheDir: join(tmpdir(), "unused-git-cache") };
    beforeAll(async () => {
      store = await factory.open();
    });
    afterAll(async () => {
      await factory.teardown();
    });

    async function add(name: string, endpoint: string): Promise<SourceConfig> {
      const cfg: SourceConfig = { name, api: { endpoint } };
      await store.putSource(name, "api", { api: { endpoint } }, "api");
      return cfg;
    }
    const descriptions = async (source: string) =>
      new Set(
        (await store.listEntries([source], { limit: 10_000 })).map((e) => e.server.description),
      );
    const stagingRows = async () =>
      Number(
        (await store.db.query<{ n: string }>(`SELECT count(*) AS n FROM entries_staging`)).rows[0]
          ?.n,
      );

    it("swaps a source's entries in at the commit: readers see the old set until then", async () => {
      let data = numbered(1200, "first");
      let hold: (() => void) | undefined;
      let held: (() => void) | undefined;
      const heldAt = new Promise<void>((r) => (held = r));
      const { url, server } = await upstream(
        () => data,
        async (page) => {
          if (hold !== undefined && page === 8) {
            held?.();
            await new Promise<void>((r) => (hold = r));
          }
          return true;
        },
      );
      try {
        const cfg = await add("swap", url);
        expect(await runSync(store, cfg, { ...ctx, apiPageSize: 100 })).toMatchObject({
          outcome: "updated",
          entries: 1200,
        });
        data = numbered(1100, "second");
        hold = () => undefined;
        const second = runSync(store, cfg, { ...ctx, apiPageSize: 100 });
        await heldAt;
        // Eight pages (more than one batch) are staged, none of them visible yet.
        expect(await stagingRows()).toBeGreaterThanOrEqual(API_BATCH_SIZE);
        expect(await descriptions("swap")).toEqual(new Set(["first"]));
        expect(await store.countEntries("swap")).toBe(1200);
        hold();
        expect(await second).toMatchObject({ outcome: "updated", entries: 1100 });
        expect(await descriptions("swap")).toEqual(new Set(["second"]));
        expect(await store.countEntries("swap")).toBe(1100);
        expect(await stagingRows()).toBe(0);
      } finally {
        server.close();
      }
    });

    it("keeps the last good data when the upstream fails mid-way, leaving nothing staged", async () => {
      let failAt = -1;
      let data = numbered(900, "good");
      const { url, server } = await upstream(
        () => data,
        (page, res) => {
          if (page !== failAt) return true;
          res.writeHead(500).end();
          return false;
        },
      );
      try {
        const cfg = await add("flaky", url);
        expect(await runSync(store, cfg, { ...ctx, apiPageSize: 100 })).toMatchObject({
          outcome: "updated",
          entries: 900,
        });
        data = numbered(900, "bad");
        failAt = 6;
        const r = await runSync(store, cfg, { ...ctx, apiPageSize: 100 });
        expect(r).toMatchObject({ outcome: "failed" });
        expect(r.outcome === "failed" && r.message).toMatch(/cursor=600.*HTTP 500/);
        expect(await descriptions("flaky")).toEqual(new Set(["good"]));
        expect(await store.countEntries("flaky")).toBe(900);
        expect(await store.getStatus("flaky")).toMatchObject({ phase: "Failed", entryCount: 900 });
        expect(await stagingRows()).toBe(0);
      } finally {
        server.close();
      }
    });

    it("a file catalog broken past its first batches keeps the last good data, nothing staged", async () => {
      const dir = mkdtempSync(join(tmpdir(), "stream-file-"));
      const catalog = (items: Item[]) =>
        JSON.stringify({ servers: items.map((s) => ({ server: s })) }, null, 1);
      try {
        writeFileSync(join(dir, "catalog.json"), catalog(numbered(900, "good")));
        const cfg: SourceConfig = { name: "file-stream", file: { path: "catalog.json" } };
        await store.putSource(cfg.name, "file", { file: cfg.file }, "api");
        const fileCtx = { ...ctx, baseDir: dir };
        expect(await runSync(store, cfg, fileCtx)).toMatchObject({
          outcome: "updated",
          entries: 900,
        });
        // Server 650 of 900 is not JSON (its brackets and quotes still balance, so the outer
        // scan passes): six batches of 100 are staged before it is read.
        const text = catalog(numbered(900, "bad"));
        const at = text.indexOf('"io.example/s-00650"');
        writeFileSync(join(dir, "catalog.json"), `${text.slice(0, at)}nope${text.slice(at)}`);
        const r = await runSync(store, cfg, fileCtx);
        expect(r).toMatchObject({ outcome: "failed" });
        expect(r.outcome === "failed" && r.message).toMatch(/not JSON/);
        expect(await descriptions(cfg.name)).toEqual(new Set(["good"]));
        expect(await store.getStatus(cfg.name)).toMatchObject({ phase: "Failed", entryCount: 900 });
        expect(await stagingRows()).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("finds the latest version of a name across batches and keeps the first of duplicates", async () => {
      const data = numbered(STAGE_ROWS + API_BATCH_SIZE + 50);
      const multi = "io.example/multi";
      data[3] = { name: multi, version: "1.0.0" };
      data[API_BATCH_SIZE + 10] = { name: multi, version: "2.0.0", description: "first 2.0.0" };
      data[STAGE_ROWS + 20] = { name: multi, version: "1.10.0" };
      data[STAGE_ROWS + 30] = { name: multi, version: "2.0.0", description: "second 2.0.0" };
      data[STAGE_ROWS + 40] = { name: multi, version: "3.0.0-rc.1" };
      const { url, server } = await upstream(() => data);
      try {
        const cfg = await add("multi", url);
        const r = await runSync(store, cfg, { ...ctx, apiPageSize: 100 });
        expect(r).toMatchObject({ outcome: "updated", entries: data.length - 5 + 4 });
        const versions = await store.listVersions(["multi"], multi);
        expect(versions.map((v) => `${v.version}:${v.isLatest}`)).toEqual([
          "3.0.0-rc.1:false",
          "2.0.0:true",
          "1.10.0:false",
          "1.0.0:false",
        ]);
        expect(versions[1]?.server.description).toBe("first 2.0.0");
        const single = await store.listEntries(["multi"], { limit: 10_000, latestOnly: true });
        expect(single).toHaveLength(data.length - 5 + 1);
      } finally {
        server.close();
      }
    });

    it("stores each entry's digest as sha256 of [server, claims, status]", async () => {
      await store.putSource("digests", "file", { file: { path: "x.json" } }, "api");
      const plain = entry("io.d/plain", "1.0.0");
      const claimed = entry("io.d/claimed", "1.0.0", {
        claims: { org: "acme" },
        status: "deprecated",
      });
      const id = store.beginStaging();
      await store.stageBatch(id, [plain, claimed]);
      await store.commitStaging(id, "digests", "h");
      const rows = await store.db.query<{ name: string; digest: string }>(
        `SELECT name, digest FROM entries WHERE source = 'digests' ORDER BY name`,
      );
      const expected = (e: typeof plain) =>
        createHash("sha256")
          .update(JSON.stringify([e.server, e.claims ?? null, e.status]))
          .digest("base64url");
      expect(rows.rows).toEqual([
        { name: "io.d/claimed", digest: expected(claimed) },
        { name: "io.d/plain", digest: expected(plain) },
      ]);
    });
  });
}

describe("httpGet", () => {
  const servers: Server[] = [];
  const serve = async (handler: Handler) => {
    const s = await listen(handler);
    servers.push(s.server);
    return s.url;
  };
  afterAll(() => {
    for (const s of servers) s.close();
  });
  const get = (url: string, opts: { headers?: Record<string, string>; maxBytes?: number } = {}) =>
    httpGet(new URL(url), {
      signal: AbortSignal.timeout(10_000),
      maxBytes: opts.maxBytes ?? 1_000_000,
      ...(opts.headers !== undefined ? { headers: opts.headers } : {}),
    }).then((b) => b.toString("utf8"));

  it("follows redirects, sending credentials only to the first origin", async () => {
    const seen: (string | undefined)[] = [];
    const other = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res.end(`other ${req.url}`);
    });
    const first = await serve((req, res) => {
      seen.push(req.headers.authorization);
      if (req.url === "/start") res.writeHead(302, { location: "/middle" }).end();
      else if (req.url === "/middle") res.writeHead(307, { location: `${other}/end` }).end();
      else res.writeHead(404).end();
    });
    expect(await get(`${first}/start`, { headers: { authorization: "Bearer t" } })).toBe(
      "other /end",
    );
    expect(seen).toEqual(["Bearer t", "Bearer t", undefined]);
  });

  it("refuses a redirect loop and reports HTTP errors", async () => {
    const url = await serve((req, res) => {
      if (req.url === "/missing") res.writeHead(404).end("no");
      else res.writeHead(301, { location: req.url ?? "/" }).end();
    });
    await expect(get(`${url}/loop`)).rejects.toThrow("more than 5 redirects");
    await expect(get(`${url}/missing`)).rejects.toThrow("HTTP 404");
  });

  it("decodes gzip and br bodies", async () => {
    const body = JSON.stringify({ servers: numbered(50) });
    const url = await serve((req, res) => {
      if (req.url === "/gz") res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync(body));
      else res.writeHead(200, { "content-encoding": "br" }).end(brotliCompressSync(body));
    });
    expect(await get(`${url}/gz`)).toBe(body);
    expect(await get(`${url}/br`)).toBe(body);
  });

  it("refuses a body over the limit, announced or not", async () => {
    const url = await serve((req, res) => {
      if (req.url === "/announced") res.end("x".repeat(2000));
      else {
        res.writeHead(200, { "transfer-encoding": "chunked" });
        for (let i = 0; i < 20; i++) res.write("y".repeat(100));
        res.end();
      }
    });
    await expect(get(`${url}/announced`, { maxBytes: 1000 })).rejects.toThrow(
      "larger than 1000 bytes",
    );
    await expect(get(`${url}/chunked`, { maxBytes: 1000 })).rejects.toThrow(
      "larger than 1000 bytes",
    );
    expect(await get(`${url}/chunked`, { maxBytes: 2000 })).toHaveLength(2000);
  });
});

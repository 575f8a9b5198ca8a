// The registry's git source on the one git layer: a server that stops answering ends the sync
// at its deadline (the last good data stays), and a large file beside the catalog costs no
// memory to fetch or read, git processes included.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SourceConfig } from "../../src/registry/config/types.js";
import { runSync, type SyncContext } from "../../src/registry/sources/sync.js";
import type { Store } from "../../src/registry/store/store.js";
import {
  makeRepo,
  publishRepo,
  startGitServerProcess,
  type GitServer,
} from "../support/git-server.js";
import { makeRepoWithBigFile, measurePeak } from "../support/process-memory.js";
import { sqliteFactory } from "./helpers.js";

// 12 servers.
const CATALOG = readFileSync(
  join(import.meta.dirname, "fixtures", "catalog-toolhive.json"),
  "utf8",
);
const BIG_BYTES = 200 * 1024 * 1024;
const LIMIT_MB = 50;

describe("the registry's git source", () => {
  const factory = sqliteFactory();
  let store: Store;
  let dir: string;
  let git: GitServer;
  let silent: Server;
  let silentUrl: string;
  let bigWork: string;
  const ctx = (): SyncContext => ({ baseDir: dir, cacheDir: mkdtempSync(join(dir, "cache-")) });

  beforeAll(async () => {
    store = await factory.open();
    dir = mkdtempSync(join(tmpdir(), "registry-git-"));
    git = await startGitServerProcess();
    makeRepo(join(dir, "small"), { "registry.json": CATALOG });
    publishRepo(git, join(dir, "small"), "catalog.git");
    bigWork = join(dir, "big");
    await makeRepoWithBigFile(bigWork, { "registry.json": CATALOG }, "data/big.bin", BIG_BYTES);
    publishRepo(git, bigWork, "big.git");
    // Accepts the connection and the request, and never answers.
    silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/catalog.git`;
  }, 120_000);
  afterAll(async () => {
    silent.closeAllConnections();
    await new Promise((r) => silent.close(r));
    await git.stop();
    await factory.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  async function add(cfg: SourceConfig): Promise<void> {
    await store.putSource(cfg.name, "git", { git: cfg.git }, "api");
  }

  it("ends at the sync's deadline when the server stops answering; the last good data stays", async () => {
    const good: SourceConfig = { name: "team", git: { repository: `${git.url}/catalog.git` } };
    await add(good);
    expect(await runSync(store, good, ctx())).toMatchObject({ outcome: "updated", entries: 12 });

    const hung: SourceConfig = { name: "team", git: { repository: silentUrl } };
    const started = performance.now();
    const outcome = await runSync(store, hung, { ...ctx(), limits: { timeoutMs: 1_500 } });
    const seconds = (performance.now() - started) / 1000;
    expect(outcome.outcome).toBe("failed");
    const message = (outcome as { message: string }).message;
    expect(message).toBe(`git source team (${silentUrl}): the sync took longer than 1500 ms`);
    expect(message).not.toContain("\n");
    expect(seconds).toBeLessThan(5);
    expect(await store.listEntries(["team"], { limit: 100 })).toHaveLength(12);
    expect(await store.getStatus("team")).toMatchObject({ message, entryCount: 12 });
  });

  it("stops at once when the sync is cancelled", async () => {
    const hung: SourceConfig = { name: "cancelled", git: { repository: silentUrl } };
    await add(hung);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error("the server is shutting down")), 300);
    const started = performance.now();
    const outcome = await runSync(store, hung, { ...ctx(), signal: stop.signal });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect((outcome as { message: string }).message).toBe(
      `git source cancelled (${silentUrl}): the server is shutting down`,
    );
  });

  it("connects a source created through the admin API only to the addresses it checked", async () => {
    // A name, not an address: resolved by the registry, checked, and pinned for git.
    const repository = `${git.url.replace("127.0.0.1", "localhost")}/catalog.git`;
    const cfg: SourceConfig = { name: "guarded", git: { repository } };
    await add(cfg);
    const sync = (allowPrivateIP: boolean) =>
      runSync(store, cfg, {
        ...ctx(),
        guard: { fileRoots: [], hosts: ["localhost"], allowPrivateIP },
      });
    const refused = await sync(false);
    expect((refused as { message: string }).message).toMatch(/localhost resolves to a private/);
    expect(await sync(true)).toMatchObject({ outcome: "updated", entries: 12 });
    const otherHost = await runSync(store, cfg, {
      ...ctx(),
      guard: { fileRoots: [], hosts: ["git.example.com"], allowPrivateIP: true },
    });
    expect((otherHost as { message: string }).message).toMatch(/not in adminSources.hosts/);
  });

  for (const transport of ["HTTP", "file://"] as const) {
    it(`reads the catalog beside a 200 MB file over ${transport} in bounded memory`, async () => {
      const cfg: SourceConfig = {
        name: `big-${transport === "HTTP" ? "http" : "file"}`,
        git: {
          repository: transport === "HTTP" ? `${git.url}/big.git` : pathToFileURL(bigWork).href,
        },
      };
      await add(cfg);
      const { result, peak } = await measurePeak(() => runSync(store, cfg, ctx()));
      expect(result).toMatchObject({ outcome: "updated", entries: 12 });
      const mb = (n: number) => Math.round(n / (1024 * 1024));
      console.log(
        `registry git source over ${transport}: +${Math.round(peak.addedMb)} MB (this process +${mb(peak.self - peak.baseline)}, git processes ${mb(peak.children)})`,
      );
      if (transport === "HTTP") expect(peak.children).toBeGreaterThan(0);
      expect(peak.addedMb).toBeLessThan(LIMIT_MB);
    }, 60_000);
  }
});

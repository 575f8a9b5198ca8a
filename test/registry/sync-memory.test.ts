// Memory returns after a sync: a url and an api source each sync a catalog of tens of MB into
// a registry server running alone in a child process, and what the server holds after full
// collections must come back near what it held before. What it holds is V8's heap plus the
// memory outside it that JavaScript owns (`external`: buffers, and large strings, which Node
// keeps outside the heap). Not RSS: freed memory is not always handed back to the system, and
// the embedded store's page cache (SQLite's, bounded) lives there too.
import { fork, type ChildProcess } from "node:child_process";
import { untilReady } from "./helpers.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Upstream } from "./memory/upstream.js";

const MB = 1024 * 1024;
const BIG = 30_000;
const SMALL = 200;

interface Usage {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

const held = (u: Usage) => u.heapUsed + u.external;

describe("memory after a sync", () => {
  const upstream = new Upstream(SMALL);
  let dir: string;
  let child: ChildProcess;
  let url: string;

  const measure = () =>
    new Promise<Usage>((resolve) => {
      child.once("message", (m) => resolve(m as Usage));
      child.send("measure");
    });
  const sync = async (source: string) => {
    const r = await fetch(`${url}/v1/sources/${source}/sync?wait=true`, { method: "POST" });
    expect(r.status).toBe(200);
    return (await r.json()) as {
      outcome: { outcome: string };
      status: { phase: string; entryCount: number };
    };
  };
  const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
  const show = (u: Usage) =>
    `held ${mb(held(u))} (heapUsed ${mb(u.heapUsed)}, external ${mb(u.external)}), rss ${mb(u.rss)}`;

  beforeAll(async () => {
    await new Promise<void>((r) => upstream.http.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(upstream.http.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), "sync-memory-"));
    const config = join(dir, "config.yaml");
    // A data directory: the stored rows live in files, not in the process.
    writeFileSync(
      config,
      `sources:
  - name: by-url
    url: { url: "${base}/catalog.json", timeout: 2m }
    syncPolicy: { interval: 24h }
  - name: by-api
    api: { endpoint: "${base}" }
    syncPolicy: { interval: 24h }
registries:
  - name: default
    sources: [by-url, by-api]
auth: { mode: anonymous }
database: { embedded: { dataDir: ${join(dir, "data")} } }
`,
    );
    child = fork(join(import.meta.dirname, "memory/sync-memory-child.ts"), [config], {
      execArgv: ["--expose-gc", "--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    url = await new Promise<string>((resolve, reject) => {
      child.once("message", (m) => resolve(m as string));
      child.once("exit", (code) => reject(new Error(`registry exited with ${String(code)}`)));
    });
    await untilReady(url, 60_000);
  }, 120_000);

  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.send("stop");
      await exited;
    }
    upstream.http.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives back the memory a large url and api sync used", async () => {
    // Warm-up: both sources synced from the small catalog at start, and once more through the
    // route, so that the code the syncs run is loaded and compiled before the baseline.
    expect((await sync("by-url")).status).toMatchObject({ phase: "Ready", entryCount: SMALL });
    expect((await sync("by-api")).status).toMatchObject({ phase: "Ready", entryCount: SMALL });
    const before = await measure();

    upstream.setCount(BIG);
    const catalogMb = upstream.fileBytes / MB;
    expect(catalogMb).toBeGreaterThan(30);
    const byUrl = await sync("by-url");
    expect(byUrl).toMatchObject({
      outcome: { outcome: "updated" },
      status: { phase: "Ready", entryCount: BIG },
    });
    const afterUrl = await measure();
    const byApi = await sync("by-api");
    expect(byApi).toMatchObject({
      outcome: { outcome: "updated" },
      status: { phase: "Ready", entryCount: BIG },
    });
    const afterApi = await measure();

    const report = [
      `catalog ${catalogMb.toFixed(1)} MB of ${BIG} servers`,
      `before: ${show(before)}`,
      `after the url sync: ${show(afterUrl)}`,
      `after the api sync: ${show(afterApi)}`,
    ].join("\n");
    console.log(report);
    // Holding the body as a string, the parsed document or the entries would each keep at least
    // the catalog's size; a quarter of it leaves room for caches and compiled code.
    const margin = (catalogMb / 4) * MB;
    expect(held(afterUrl) - held(before), report).toBeLessThan(margin);
    expect(held(afterApi) - held(before), report).toBeLessThan(margin);
  }, 180_000);
});

// The web catalog on a registry of 10,000 entries (the real command in its own process):
// (a) the catalog's first page, server render time as seen by a client one request at a time
// (median and p99), against the JSON listing of the same page (GET /{registry}/v0.1/servers
// with the same page size); target ratio <= 1.5. (b) The first page's transfer size, HTML,
// script and stylesheet, uncompressed; target <= 100 KB. (c) The search page under load (a
// different term on every request, so nothing is served from a cache), against the JSON
// listing's search under the same load.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PAGE_SIZE } from "../src/registry/ui/catalog.js";
import {
  catalogConfig,
  line,
  load,
  spawnRegistry,
  waitReady,
  writeCatalog,
} from "./registry-common.js";

const ENTRIES = 10_000;
const SAMPLES = 400;
const RENDER_TARGET = 1.5;
const SIZE_TARGET_KB = 100;

async function timed(url: string, headers: Record<string, string> = {}): Promise<number> {
  const t0 = process.hrtime.bigint();
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

/** Alternating samples of two URLs, so that drift on a shared machine hits both alike. */
async function paired(a: string, b: string): Promise<[number[], number[]]> {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < 50; i++) await Promise.all([timed(a), timed(b)]);
  for (let i = 0; i < SAMPLES; i++) {
    xs.push(await timed(a));
    ys.push(await timed(b));
  }
  return [xs, ys];
}

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-bench-ui-"));
try {
  writeCatalog(join(dir, "catalog.json"), ENTRIES);
  const config = join(dir, "config.yaml");
  writeFileSync(config, catalogConfig());
  const server = await spawnRegistry(config);
  try {
    await waitReady(server.url);
    const ui = `${server.url}/ui/`;
    const json = `${server.url}/default/v0.1/servers?limit=${PAGE_SIZE}`;
    const probe = await fetch(ui);
    if (probe.status !== 200) {
      throw new Error(
        `${ui} answered ${probe.status}: is build/ older than the catalog? (make build)`,
      );
    }
    const html = await probe.text();

    const [uiMs, jsonMs] = await paired(ui, json);
    const median = quantile(uiMs, 0.5);
    const ratio = median / quantile(jsonMs, 0.5);
    line(
      "ui-catalog-render-median",
      median,
      "ms",
      ratio,
      `catalog page / JSON listing of the same ${PAGE_SIZE} entries, ${ENTRIES} entries, ${server.how}; target <= ${RENDER_TARGET}`,
    );
    line(
      "ui-catalog-render-p99",
      quantile(uiMs, 0.99),
      "ms",
      quantile(uiMs, 0.99) / quantile(jsonMs, 0.99),
      "p99 of the catalog page / p99 of the JSON listing",
    );

    const assets = await Promise.all(
      [...html.matchAll(/(?:href|src)="(\/ui\/static\/[^"]+)"/g)].map(
        async (m) =>
          (await (await fetch(`${server.url}${(m[1] ?? "").replace(/&amp;/g, "&")}`)).arrayBuffer())
            .byteLength,
      ),
    );
    const kb = (Buffer.byteLength(html) + assets.reduce((a, b) => a + b, 0)) / 1024;
    line(
      "ui-first-page-size",
      kb,
      "KB",
      kb / SIZE_TARGET_KB,
      `HTML + ${assets.length} static files, uncompressed, no images / target ${SIZE_TARGET_KB} KB`,
    );

    let n = 0;
    // Never the same term twice (the letters' case varies), so every request of either side
    // misses its cache, and each term matches one server.
    const term = (): string => {
      const id = String(n % ENTRIES).padStart(6, "0");
      const mask = Math.floor(n++ / ENTRIES);
      const word = [..."server"].map((c, i) => ((mask >> i) & 1 ? c.toUpperCase() : c)).join("");
      return `${word}-${id}`;
    };
    const uiSearch = await load({
      url: server.url,
      requests: [{ method: "GET", setupRequest: (r) => ({ ...r, path: `/ui/?q=${term()}` }) }],
    });
    const jsonSearch = await load({
      url: server.url,
      requests: [
        {
          method: "GET",
          setupRequest: (r) => ({
            ...r,
            path: `/default/v0.1/servers?limit=${PAGE_SIZE}&search=${term()}`,
          }),
        },
      ],
    });
    if (uiSearch.errors + uiSearch.non2xx + jsonSearch.errors + jsonSearch.non2xx > 0) {
      throw new Error(`search load had failures: ${JSON.stringify({ uiSearch, jsonSearch })}`);
    }
    line(
      "ui-search-load",
      Math.round(uiSearch.rps),
      "req/s",
      uiSearch.rps / jsonSearch.rps,
      `catalog search page / JSON listing search (${Math.round(jsonSearch.rps)} req/s), 20 connections, a new term each request`,
    );
  } finally {
    await server.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// (d) The embedded store's footprint: `mcpfleet registry serve` in its own process with no
// `database` section (a temporary embedded store) and one file source, the 102-entry ToolHive catalog of
// ../shared/data. Reported: the time from starting the process to /readiness answering 200
// (target <= 1 s), and the process's peak RSS after it has served every page of the catalog and
// a few searches (target <= 150 MB).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sharedPath } from "../test/support/shared-data.js";
import { line, peakRssMb, spawnRegistry } from "./registry-common.js";

const READY_LIMIT_S = 1;
const PEAK_LIMIT_MB = 150;
const catalog = sharedPath("toolhive-format", "registry.json");

if (existsSync(catalog)) {
  await main();
} else {
  console.log(
    `bench: registry-startup-sqlite skipped (${catalog} is absent: public test data kept beside the repository)`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-startup-"));
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `sources:
  - name: catalog
    file: { path: ${JSON.stringify(catalog)} }
    syncPolicy: { interval: 1h }
registries:
  - name: default
    sources: [catalog]
auth: { mode: anonymous }
`,
  );
  const t = performance.now();
  const registry = await spawnRegistry(config);
  try {
    while ((await fetch(`${registry.url}/readiness`)).status !== 200) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const readyS = (performance.now() - t) / 1000;
    let served = 0;
    let cursor: string | undefined;
    do {
      const page = (await (
        await fetch(
          `${registry.url}/default/v0.1/servers?limit=100${cursor === undefined ? "" : `&cursor=${cursor}`}`,
        )
      ).json()) as { servers: unknown[]; metadata: { nextCursor?: string } };
      served += page.servers.length;
      cursor = page.metadata.nextCursor;
    } while (cursor !== undefined);
    for (const term of ["git", "database", "k8s", "search", "fetch"]) {
      await fetch(`${registry.url}/default/v0.1/servers?search=${term}`);
    }
    const peak = peakRssMb(registry.child.pid ?? 0);
    line(
      "registry-startup-ready-sqlite",
      Number(readyS.toFixed(2)),
      "s",
      readyS / READY_LIMIT_S,
      `process start to /readiness 200 with the temporary embedded store and a file source of ${served} entries (${registry.how}); target <= ${READY_LIMIT_S} s, ratio <= 1 meets it`,
    );
    line(
      "registry-startup-peak-rss-sqlite",
      Math.round(peak),
      "MB",
      peak / PEAK_LIMIT_MB,
      `peak RSS (VmHWM) of that process after serving all ${served} entries and some searches; target <= ${PEAK_LIMIT_MB} MB, ratio <= 1 meets it`,
    );
  } finally {
    await registry.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

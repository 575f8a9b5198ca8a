import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { McpfleetError } from "../../src/errors.js";
import { GitSource, type Revision } from "../../src/infra/git/source.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import { DirTarget } from "../../src/controller/render-target.js";
import { ControllerStatus } from "../../src/controller/status.js";
import { commitFiles, exampleRepo, tmp } from "./helpers.js";

const ROOT = join(import.meta.dirname, "..", "..");

describe("drift correction and source outages", () => {
  it("re-applies an unchanged revision once --drift-interval has passed", async () => {
    const repo = exampleRepo();
    const out = join(tmp("drift"), "out");
    let now = 1_000_000;
    const source = new GitSource({
      url: pathToFileURL(repo.dir).href,
      ref: { branch: "main" },
      path: "fleet",
      cacheDir: tmp("cache"),
    });
    const applier = new DirTarget(out);
    const r = new Reconciler({
      source,
      applier,
      status: new ControllerStatus(source.refName, applier.target),
      driftIntervalMs: 3_600_000,
      now: () => now,
    });
    expect((await r.sync()).kind).toBe("applied");
    const file = join(out, "default.yaml");
    const good = readFileSync(file, "utf8");
    writeFileSync(
      file,
      good.replace(/ghcr.io\/github\/github-mcp-server/g, "example.com/tampered"),
    );
    now += 60_000;
    expect((await r.sync()).kind).toBe("unchanged");
    expect(readFileSync(file, "utf8")).not.toBe(good);
    now += 3_600_000;
    const outcome = await r.sync();
    expect(outcome.kind).toBe("applied");
    if (outcome.kind === "applied") expect(outcome.result.applied).toBeGreaterThan(0);
    expect(readFileSync(file, "utf8")).toBe(good);

    // An invalid head is reported once; drift correction does not validate it again.
    commitFiles(repo.dir, { "fleet/broken.yaml": "kind: [\n" }, "break");
    expect((await r.sync()).kind).toBe("invalid");
    now += 2 * 3_600_000;
    expect((await r.sync()).kind).toBe("unchanged");
    expect(readFileSync(file, "utf8")).toBe(good);
  }, 30_000);

  it("reports a fetch failure in status and converges once the source is back", async () => {
    const repo = exampleRepo();
    const real = new GitSource({
      url: pathToFileURL(repo.dir).href,
      ref: { branch: "main" },
      path: "fleet",
      cacheDir: tmp("cache"),
    });
    let down = true;
    const source = {
      resolve: (): Promise<Revision> =>
        down
          ? Promise.reject(new McpfleetError("ERR_GIT_UNREACHABLE", "git server down"))
          : real.resolve(),
      checkout: real.checkout.bind(real),
    };
    const applier = new DirTarget(join(tmp("outage"), "out"));
    const status = new ControllerStatus("branch main", applier.target);
    const r = new Reconciler({ source, applier, status });
    expect(await r.sync()).toMatchObject({ kind: "failed", stage: "fetch" });
    expect(status.ready).toBe(false);
    expect(status.lastError).toMatchObject({ stage: "fetch", code: "ERR_GIT_UNREACHABLE" });
    const metrics = await status.metrics.registry.metrics();
    expect(metrics).toMatch(/failures_total\{stage="fetch",code="ERR_GIT_UNREACHABLE"\} 1/);
    down = false;
    expect((await r.sync()).kind).toBe("applied");
    expect(status.ready).toBe(true);
    expect(status.lastError).toBeUndefined();
  }, 30_000);
});

describe("the controller process", () => {
  it("exits 0 on SIGTERM after serving", async () => {
    const repo = exampleRepo();
    const dir = tmp("proc");
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(ROOT, "src/cli/main.ts"),
        "controller",
        "--repo",
        pathToFileURL(repo.dir).href,
        "--path",
        "fleet",
        "--target",
        `dir:${join(dir, "out")}`,
        "--listen",
        "127.0.0.1:0",
        "--interval",
        "1h",
        "--cache-dir",
        join(dir, "cache"),
        "--log-format",
        "text",
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    const deadline = Date.now() + 30_000;
    let ready = false;
    while (!ready && Date.now() < deadline) {
      const m = /controller started address=(\S+)/.exec(stderr);
      if (m?.[1] !== undefined) {
        const r = await fetch(`${m[1]}/readyz`).catch(() => undefined);
        ready = r?.status === 200;
      }
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready).toBe(true);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/^info stopped$/m);
  }, 60_000);
});

// The Controller as a library: one options object, runOnce, and start/stop owning every component
// (the schedule, the HTTP server, the Git source), with the logger it was given.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseControllerArgs } from "../../src/cli/controller.js";
import { Controller, type ControllerOptions } from "../../src/controller/controller.js";
import { textLogger } from "../../src/controller/logger.js";
import { dirTargetArgs, exampleRepo, snapshot, tmp } from "./helpers.js";

function options(extra: string[]): { opts: ControllerOptions; out: string; lines: string[] } {
  const repo = exampleRepo();
  const out = join(tmp("out"), "rendered");
  const config = parseControllerArgs([...dirTargetArgs(repo.dir, out, tmp("cache")), ...extra]);
  if (config === undefined) throw new Error("no config");
  const lines: string[] = [];
  const push = (l: string) => void lines.push(l);
  return { opts: { ...config, log: textLogger(push), stdout: push, stderr: push }, out, lines };
}

describe("Controller", () => {
  it("runOnce syncs, reports one summary line and resolves with the exit code", async () => {
    const { opts, out, lines } = options(["--once"]);
    expect(await new Controller(opts).runOnce()).toBe(0);
    expect(lines.at(-1)).toMatch(/^applied revision [0-9a-f]{40} \(HEAD\) to dir:/);
    expect(lines).toContainEqual(expect.stringMatching(/^info syncing revision revision=/));
    expect(Object.keys(snapshot(out))).toContain("default.yaml");
  }, 60_000);

  it("start serves the probes and syncs at once; stop lets it finish and closes everything", async () => {
    let port = 0;
    const { opts, out, lines } = options(["--listen", "127.0.0.1:0", "--interval", "1h"]);
    const controller = new Controller({ ...opts, onListening: (a) => (port = a.port) });
    await controller.start();
    expect(port).toBeGreaterThan(0);
    const deadline = Date.now() + 20_000;
    while (!controller.status.ready && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    await controller.stop();
    expect(lines.at(-1)).toBe("info stopped");
    expect(lines).toContainEqual(expect.stringMatching(/^info controller started address=/));
    expect(Object.keys(snapshot(out))).toContain("revision.txt");
    await expect(fetch(`http://127.0.0.1:${port}/readyz`)).rejects.toThrow();
  }, 60_000);
});

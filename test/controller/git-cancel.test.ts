// SIGTERM reaches a fetch in flight: a controller polling a Git server that accepted the
// connection and never answers stops at once, not when the fetch's deadline passes.
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root } from "../cli/helpers.js";
import { tmp } from "./helpers.js";

describe("mcpfleet controller and SIGTERM during a fetch", () => {
  let silent: Server;
  let url: string;
  let asked: () => void;
  const firstRequest = new Promise<void>((resolve) => (asked = resolve));
  beforeAll(async () => {
    silent = createServer(() => asked()); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/fleet.git`;
  });
  afterAll(async () => {
    silent.closeAllConnections();
    await new Promise((r) => silent.close(r));
  });

  // With a 10-minute fetch deadline, only cancellation lets it exit within the test's timeout.
  it("cancels the fetch and exits 0", { timeout: 60_000 }, async () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        join(root, "node_modules/tsx/dist/loader.mjs"),
        join(root, "src/cli/main.ts"),
        "controller",
        "--repo",
        url,
        "--git-timeout",
        "10m",
        "--cache-dir",
        tmp("cancel-cache"),
        "--target",
        `dir:${join(tmp("cancel-out"), "out")}`,
        "--listen",
        "127.0.0.1:0",
        "--log-format",
        "text",
      ],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
    );
    const err: Buffer[] = [];
    child.stderr.on("data", (c: Buffer) => err.push(c));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    await firstRequest;
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const log = Buffer.concat(err).toString();
    expect(log).toMatch(/ERR_INTERRUPTED|shutting down/);
    expect(log).toMatch(/stopped/);
  });
});

import { spawn, spawnSync } from "node:child_process";
import { untilReady } from "./helpers.js";
import { listeningUrl } from "../support/listening.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const MAIN = join(ROOT, "src/cli/main.ts");
const NODE = [process.execPath, "--import", "tsx", MAIN];

describe("mcpfleet registry serve", () => {
  it("serves the example configuration and stops cleanly on SIGTERM", async () => {
    const child = spawn(
      NODE[0] as string,
      [
        ...NODE.slice(1),
        "registry",
        "serve",
        "--config",
        "examples/registry/config-anonymous.yaml",
        "--port",
        "0",
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    try {
      const url = await listeningUrl(child);
      await untilReady(url);
      const res = await fetch(`${url}/default/v0.1/servers`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { servers: { server: { name: string } }[] };
      expect(body.servers.length).toBeGreaterThan(0);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(out).toContain("registry server stopped");
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("reports configuration errors with file, line and key, and exits non-zero", () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-"));
    try {
      const cfg = join(dir, "bad.yaml");
      writeFileSync(
        cfg,
        "sources:\n  - name: a\n    managed: {}\nregistries:\n  - name: r\n    sources: [b]\n",
      );
      const r = spawnSync(
        NODE[0] as string,
        [...NODE.slice(1), "registry", "serve", "--config", cfg, "--check"],
        {
          encoding: "utf8",
        },
      );
      // The diagnostics of `validate --registry-config`: line and column, the source named.
      expect(r.status).toBe(1);
      const validate = spawnSync(
        NODE[0] as string,
        [...NODE.slice(1), "validate", "--registry-config", "--unknown-fields=warn", cfg],
        { encoding: "utf8" },
      );
      expect(r.stdout).toBe(validate.stdout);
      expect(r.stdout).toMatch(new RegExp(`${cfg}:\\d+:\\d+: .*/auth`));
      expect(r.stdout).toContain(
        `${cfg}:6:15: RegistryServerConfig/-/bad: /registries/0/sources/0: registry "r" names source "b", which is not defined in sources`,
      );
      // A file source whose file is not there.
      writeFileSync(
        cfg,
        "sources:\n  - name: a\n    file: { path: gone.json }\nregistries:\n  - name: r\n    sources: [a]\nauth: { mode: anonymous }\n",
      );
      const missing = spawnSync(
        NODE[0] as string,
        [...NODE.slice(1), "registry", "serve", "--config", cfg, "--check"],
        { encoding: "utf8" },
      );
      expect(missing.status).toBe(1);
      expect(missing.stdout).toContain(
        `${cfg}:3:19: /sources/0/file/path: source "a" reads gone.json, which does not exist`,
      );
      writeFileSync(join(dir, "gone.json"), '{"servers": []}');
      const ok = spawnSync(
        NODE[0] as string,
        [...NODE.slice(1), "registry", "serve", "--config", cfg, "--check"],
        { encoding: "utf8" },
      );
      expect(ok.stdout).toContain(`${cfg}: valid`);
      expect(ok.status).toBe(0);
      const usage = spawnSync(NODE[0] as string, [...NODE.slice(1), "registry", "serve"], {
        encoding: "utf8",
      });
      expect(usage.status).toBe(2);
      expect(usage.stderr).toMatch(/--config (FILE )?is required/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

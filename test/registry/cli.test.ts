import { spawn, spawnSync } from "node:child_process";
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
      let url: string | undefined;
      for (let i = 0; i < 300 && url === undefined; i++) {
        url = /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1];
        if (url === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(url, out).toBeDefined();
      for (let i = 0; i < 100 && (await fetch(`${url}/readiness`)).status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
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
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${cfg}:1: /auth: auth is required`);
      expect(r.stderr).toContain(
        `${cfg}:5: /registries: every source a registry names must be defined`,
      );
      // One line a problem, for a person: no error code appended.
      expect(r.stderr).not.toContain("(ERR_");
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

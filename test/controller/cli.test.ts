import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseControllerArgs, runController } from "../../src/cli/controller.js";
import { isMcpfleetError } from "../../src/errors.js";
import {
  makeRepo,
  publishRepo,
  pushRepo,
  startGitServer,
  type GitServer,
} from "../support/git-server.js";
import { commitFiles, dirTargetArgs, exampleRepo, snapshot, tmp } from "./helpers.js";

const ROOT = join(import.meta.dirname, "..", "..");
const run = promisify(execFile);

/** Runs `mcpfleet ARGS` from source through the real entry point (src/cli/main.ts). */
async function mcpfleet(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--import", "tsx", join(ROOT, "src/cli/main.ts"), ...args],
      { cwd: ROOT },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function usageError(argv: string[]): string {
  try {
    parseControllerArgs(argv);
  } catch (err) {
    if (isMcpfleetError(err) && err.code === "ERR_USAGE") return err.message;
    throw err;
  }
  throw new Error(`no usage error for ${argv.join(" ")}`);
}

describe("controller flags", () => {
  const repo = ["--repo", "file:///tmp/x"];

  it("has defaults for everything but --repo", () => {
    const c = parseControllerArgs([...repo, "--cache-dir", "/tmp/c"]);
    expect(c).toMatchObject({
      repo: "file:///tmp/x",
      ref: {},
      path: "",
      intervalMs: 60_000,
      jitterMs: 6_000,
      driftIntervalMs: 3_600_000,
      once: false,
      target: { kind: "cluster" },
      cluster: { fieldManager: "mcpfleet", prune: false, forceRecreate: false },
      dryRun: false,
      namespace: "default",
      listen: { host: "0.0.0.0", port: 8080 },
      logFormat: "json",
    });
  });

  it("parses every flag", () => {
    const c = parseControllerArgs([
      ...repo,
      "--tag",
      "v1.2.0",
      "--path",
      "clusters/prod",
      "--schedule",
      "*/5 * * * *",
      "--jitter",
      "30s",
      "--drift-interval",
      "2h",
      "--prune",
      "--dry-run",
      "--once",
      "--kubeconfig",
      "/k",
      "--field-manager",
      "fleet",
      "--force-recreate",
      "--target",
      "dir:out",
      "--listen",
      "127.0.0.1:9000",
      "--username",
      "bot",
      "--token-file",
      "/t",
      "--ca-file",
      "/ca.pem",
      "-n",
      "mcp",
    ]);
    expect(c).toMatchObject({
      ref: { tag: "v1.2.0" },
      path: "clusters/prod",
      cron: "*/5 * * * *",
      jitterMs: 30_000,
      driftIntervalMs: 7_200_000,
      once: true,
      target: { kind: "dir", path: "out" },
      cluster: { kubeconfig: "/k", fieldManager: "fleet", prune: true, forceRecreate: true },
      dryRun: true,
      namespace: "mcp",
      listen: { host: "127.0.0.1", port: 9000 },
      auth: { username: "bot", tokenFile: "/t" },
      caFile: "/ca.pem",
      logFormat: "text",
    });
    expect(c?.intervalMs).toBeUndefined();
    expect(parseControllerArgs([...repo, "--commit", "ABCDEF1"])?.ref).toEqual({
      commit: "abcdef1",
    });
  });

  it("refuses bad combinations with a usage error that names the flag", () => {
    expect(usageError([])).toMatch(/--repo URL is required/);
    expect(usageError([...repo, "--branch", "a", "--tag", "b"])).toMatch(/at most one of --branch/);
    expect(usageError([...repo, "--commit", "main"])).toMatch(/--commit must be a hex SHA/);
    expect(usageError([...repo, "--interval", "1m", "--schedule", "* * * * *"])).toMatch(
      /--interval and --schedule/,
    );
    expect(usageError([...repo, "--interval", "5 minutes"])).toMatch(/--interval/);
    expect(usageError([...repo, "--interval", "10ms"])).toMatch(/at least 1s/);
    expect(usageError([...repo, "--drift-interval", "1d"])).toMatch(/--drift-interval/);
    expect(usageError([...repo, "--schedule", "every day"])).toMatch(/--schedule/);
    expect(usageError([...repo, "--target", "s3:bucket"])).toMatch(
      /--target must be cluster or dir/,
    );
    expect(usageError([...repo, "--listen", "nowhere"])).toMatch(/--listen/);
    expect(usageError([...repo, "--password-file", "a", "--token-file", "b"])).toMatch(
      /--password-file and --token-file/,
    );
    expect(usageError([...repo, "--once", "--webhook-secret-file", "s"])).toMatch(/--once/);
    expect(usageError([...repo, "--log-format", "xml"])).toMatch(/--log-format/);
    expect(usageError([...repo, "--bogus"])).toMatch(/bogus/);
    expect(usageError([...repo, "extra"])).toMatch(/controller:/);
  });
});

describe("mcpfleet controller --once --target dir:PATH", () => {
  it("renders a file:// repository made from the examples through the real CLI", async () => {
    const repo = exampleRepo();
    const out = join(tmp("cli"), "out");
    const args = ["controller", "--once", ...dirTargetArgs(repo.dir, out, tmp("cache"))];
    const first = await mcpfleet(args);
    expect(first.stderr).not.toMatch(/^error/m);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`applied revision ${repo.head} \\(HEAD\\) to dir:`));
    expect(first.stderr).toMatch(/^info Deployment default\/github created/m);
    const files = snapshot(out);
    expect(files["revision.txt"]).toBe(`${repo.head}\n`);
    expect(files["default.yaml"]).toMatch(/kind: Deployment/);

    const server = readFileSync(join(repo.dir, "fleet", "mcpserver-github.yaml"), "utf8");
    commitFiles(
      repo.dir,
      {
        "fleet/mcpserver-github.yaml": server.replace(
          "transport: stdio",
          "transport: carrier-pigeon",
        ),
      },
      "break",
    );
    // The same command in-process (main's argument parsing and runController), to save a start-up.
    const lines: string[] = [];
    const config = parseControllerArgs(args.slice(1));
    if (config === undefined) throw new Error("no config");
    const code = await runController(config, {
      stdout: (l) => lines.push(l),
      stderr: (l) => lines.push(l),
    });
    expect(code).toBe(1);
    const stderr = lines.join("\n");
    expect(stderr).toMatch(/^fleet\/mcpserver-github\.yaml:\d+:\d+: .*\/spec\/transport/m);
    expect(stderr).toMatch(/is invalid \(\d+ errors\); nothing was applied/);
    expect(snapshot(out)).toEqual(files);
  }, 60_000);

  it("refuses a revision with an MCPServer in kube-system as the cluster target does, writing nothing", async () => {
    const repo = tmp("kube-system-repo");
    makeRepo(repo, {
      "fleet/system.yaml": `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: sneaky
  namespace: kube-system
spec:
  image: ghcr.io/stackloklabs/gofetch/server:1.0.1
  transport: streamable-http
  proxyPort: 8080
  mcpPort: 8080
`,
    });
    const out = join(tmp("kube-system-out"), "manifests");
    const config = parseControllerArgs([
      "--once",
      "--target",
      `dir:${out}`,
      "--repo",
      pathToFileURL(repo).href,
      "--path",
      "fleet",
      "--cache-dir",
      tmp("cache"),
    ]);
    if (config === undefined) throw new Error("no config");
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runController(config, {
      stdout: (l) => stdout.push(l),
      stderr: (l) => stderr.push(l),
    });
    expect(code).toBe(1);
    expect(stdout).toEqual([]);
    const why = stderr.filter((l) => l.startsWith("error refused: "));
    expect(why).toHaveLength(1);
    expect(why[0]).toMatch(
      /^error refused: namespace kube-system belongs to the cluster; allow it by name with --namespace-allow .*object=MCPServer kube-system\/sneaky$/,
    );
    expect(stderr.at(-1)).toMatch(
      /was refused \(1 objects outside what this controller may apply\); nothing was applied$/,
    );
    expect(existsSync(out) ? snapshot(out) : {}).toEqual({});
  }, 60_000);

  it("exits 2 on a usage error and 1 for an unreadable kubeconfig, each in one line", async () => {
    const [usage, cluster, help] = await Promise.all([
      mcpfleet(["controller", "--repo", "file:///x", "--interval", "soon"]),
      mcpfleet(["controller", "--once", "--repo", "file:///x", "--kubeconfig", "/nonexistent/kc"]),
      mcpfleet(["controller", "--help"]),
    ]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(
      /^mcpfleet: controller: --interval: .*; see mcpfleet help controller\n$/,
    );
    expect(cluster.code).toBe(1);
    expect(cluster.stderr).toMatch(
      /^mcpfleet: cannot load the kubeconfig \/nonexistent\/kc: no such file .*\n$/,
    );
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--webhook-secret-file/);
  }, 60_000);
});

describe("long-running controller over HTTP with a webhook", () => {
  let server: GitServer;
  beforeAll(async () => {
    server = await startGitServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("renders at start, re-renders on a signed push, serves probes and stops cleanly", async () => {
    const repo = exampleRepo();
    publishRepo(server, repo.dir, "fleet.git");
    const dir = tmp("serve");
    const out = join(dir, "out");
    const secretFile = join(dir, "secret");
    writeFileSync(secretFile, "hook-secret\n");
    const config = parseControllerArgs([
      "--repo",
      `${server.url}/fleet.git`,
      "--branch",
      "main",
      "--path",
      "fleet",
      "--interval",
      "1h",
      "--target",
      `dir:${out}`,
      "--listen",
      "127.0.0.1:0",
      "--webhook-secret-file",
      secretFile,
      "--cache-dir",
      join(dir, "cache"),
      "--log-format",
      "text",
    ]);
    if (config === undefined) throw new Error("no config");
    const abort = new AbortController();
    const logs: string[] = [];
    let port = 0;
    const exited = runController(config, {
      signal: abort.signal,
      stdout: (l) => logs.push(l),
      stderr: (l) => logs.push(l),
      onListening: (a) => (port = a.port),
    });
    const base = () => `http://127.0.0.1:${port}`;
    await until("readiness", async () => {
      if (port === 0) return undefined;
      const r = await fetch(`${base()}/readyz`);
      return r.status === 200 ? true : undefined;
    });
    expect(readFileSync(join(out, "revision.txt"), "utf8")).toBe(`${repo.head}\n`);

    const next = commitFiles(
      repo.dir,
      { "fleet/mcpserver-stdio.yaml": "" },
      "drop the time server",
    );
    pushRepo(server, repo.dir, "fleet.git");
    const body = JSON.stringify({ ref: "refs/heads/main", after: next });
    const hook = await fetch(`${base()}/hook`, {
      method: "POST",
      body,
      headers: {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-hub-signature-256": `sha256=${createHmac("sha256", "hook-secret").update(body).digest("hex")}`,
      },
    });
    expect(hook.status).toBe(202);
    await until("the pushed revision", () =>
      existsSync(join(out, "revision.txt")) &&
      readFileSync(join(out, "revision.txt"), "utf8") === `${next}\n`
        ? true
        : undefined,
    );
    expect(readFileSync(join(out, "default.yaml"), "utf8")).not.toMatch(/name: time\n/);
    const health = (await (await fetch(`${base()}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ lastAppliedRevision: next, lastAttemptedRevision: next });
    const metrics = await (await fetch(`${base()}/metrics`)).text();
    expect(metrics).toContain(`mcpfleet_controller_last_applied_revision{revision="${next}"`);
    expect(logs.some((l) => /Deployment default\/time pruned/.test(l))).toBe(true);

    abort.abort();
    expect(await exited).toBe(0);
    await expect(fetch(`${base()}/healthz`)).rejects.toThrow();
  }, 60_000);
});

// The commands a new user tries first, each run as a process through a given command line (a
// Node with bin/mcpfleet.js, or the single executable), with its exit code: shared by
// floor.test.ts (the lowest Node of engines.node) and executable.test.ts.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect } from "vitest";
import { stopServer } from "../../src/cli/validate-client.js";
import { makeRepo } from "../support/git-server.js";
import { timeServer } from "../support/fixtures.js";
import type { CliResult } from "./helpers.js";
import { examples } from "./helpers.js";

/** A way to run mcpfleet: the program and the arguments before the command's own. */
export interface Cli {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function scratch(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `mcpfleet-${prefix}-`));
  dirs.push(d);
  return d;
}

/** Runs `mcpfleet ARGS` through `cli` and collects its exit code and streams. */
export function run(cli: Cli, args: readonly string[], cwd = tmpdir()): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [program, ...rest] = cli.argv;
    const child = spawn(program!, [...rest, ...args], {
      cwd,
      // No validate server unless asked (validatesOnServer): none left behind.
      env: { NO_COLOR: "1", MCPFLEET_VALIDATE_SERVER: "off", ...cli.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", reject);
    child.on("close", (status) =>
      resolve({
        status,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
}

/**
 * `validate examples`: every example valid, exit 0, nothing on stderr. Also the resources alone,
 * with none of the Kubernetes models that load from node_modules: the bundled code then loads
 * what they would have, and a built-in taken for a package (punycode) printed Node's
 * deprecation warning.
 */
export async function validatesExamples(cli: Cli): Promise<void> {
  for (const dir of [examples, join(examples, "resources")]) {
    const r = await run(cli, ["validate", "--summary", dir]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/ 0 invalid\b.*; 0 errors/);
    expect(r.status).toBe(0);
  }
}

/**
 * A validate run starts a validate server as it exits, and the next run is served by it with
 * the same output; the server then stops when asked, saying it ran that one run. In a runtime
 * directory of the test's own.
 */
export async function validatesOnServer(cli: Cli): Promise<void> {
  const runtime = join(scratch("smoke-runtime"), "run");
  mkdirSync(runtime, { mode: 0o700 });
  const served: Cli = {
    ...cli,
    env: { ...cli.env, MCPFLEET_VALIDATE_SERVER: "on", XDG_RUNTIME_DIR: runtime },
  };
  const first = await run(served, ["validate", "--summary", examples]);
  expect(first.status, first.stderr).toBe(0);
  const dir = join(runtime, "mcpfleet");
  let socket: string | undefined;
  for (let i = 0; i < 200 && socket === undefined; i++) {
    const found = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith(".sock")) : undefined;
    if (found !== undefined) socket = join(dir, found);
    else await new Promise((r) => setTimeout(r, 50));
  }
  expect(socket, "a server started by the first run").toBeDefined();
  expect(await run(served, ["validate", "--summary", examples])).toEqual(first);
  expect(await stopServer(socket!)).toBe(1);
}

/** `synth examples -d DIR`: one manifest per namespace written, exit 0. */
export async function synthesizesExamples(cli: Cli): Promise<void> {
  const out = join(scratch("smoke-synth"), "dist");
  const r = await run(cli, ["synth", examples, "-d", out]);
  expect(r.status, r.stderr).toBe(0);
  expect(readdirSync(out).filter((f) => f.endsWith(".yaml")).length).toBeGreaterThan(0);
}

/** `apply --dry-run=client`: the objects listed, no cluster contacted, exit 0. */
export async function appliesDryRun(cli: Cli): Promise<void> {
  const r = await run(cli, ["apply", "--dry-run=client", join(examples, "resources")]);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/\(dry run, client\)/);
  expect(r.stderr).toMatch(/the cluster was not contacted/);
}

/**
 * `registry serve` on the embedded store (SQLite in memory): it syncs the example catalog and
 * serves it, then stops on SIGTERM with exit 0.
 */
export async function servesRegistry(cli: Cli): Promise<void> {
  const [program, ...rest] = cli.argv;
  const config = join(examples, "registry", "config-anonymous.yaml");
  const child = spawn(program!, [...rest, "registry", "serve", "--config", config, "--port", "0"], {
    cwd: tmpdir(),
    env: { NO_COLOR: "1", ...cli.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let seen = "";
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      const match = /"url":"(http:\/\/[^"]+)"[^\n]*registry server listening/.exec(seen);
      if (match !== null) resolve(match[1]!);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`registry serve exited ${code}: ${seen}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  try {
    expect((await fetch(`${url}/health`)).status).toBe(200);
    // The catalog's first sync may still be running: wait for its entries.
    let servers: unknown[] = [];
    for (let i = 0; i < 100 && servers.length === 0; i++) {
      const body = (await (await fetch(`${url}/default/v0.1/servers`)).json()) as {
        servers?: unknown[];
      };
      servers = body.servers ?? [];
      if (servers.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(servers.length).toBeGreaterThan(0);
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exited, seen).toBe(0);
  expect(seen).not.toMatch(/cannot open/);
}

/** An MCPServer for the cluster commands. */
const SERVER = timeServer();

/**
 * Against the test cluster, in namespace `ns` (CRDs installed): `diff` of a server not there yet
 * (exit 1: changes), `controller --once` applying it from a Git repository (exit 0), `status`
 * naming the applied revision (exit 0), `diff` again (exit 0: no changes).
 */
export async function clusterCommands(cli: Cli, kubeconfig: string, ns: string): Promise<void> {
  const repo = join(scratch("smoke-repo"), "repo");
  const revision = makeRepo(repo, { "fleet/time.yaml": SERVER });
  const target = ["--kubeconfig", kubeconfig, "-n", ns, "--controller-namespace", ns];

  const before = await run(cli, ["diff", join(repo, "fleet"), ...target]);
  expect(before.stdout).toMatch(/time/);
  expect(before.stderr).toMatch(/^[1-9]\d* to create, 0 to change, 0 to delete/m);
  expect(before.status).toBe(1);

  const controller = await run(cli, [
    "controller",
    "--repo",
    pathToFileURL(repo).href,
    "--branch",
    "main",
    "--path",
    "fleet",
    "--target",
    "cluster",
    "--prune",
    "--once",
    "--cache-dir",
    scratch("smoke-cache"),
    ...target,
  ]);
  expect(controller.status, controller.stderr + controller.stdout).toBe(0);

  const status = await run(cli, [
    "status",
    "--kubeconfig",
    kubeconfig,
    "--controller-namespace",
    ns,
    "-o",
    "json",
  ]);
  expect(status.status, status.stderr).toBe(0);
  expect(status.stdout).toContain(revision);

  const after = await run(cli, ["diff", join(repo, "fleet"), ...target]);
  expect(after.status, after.stdout + after.stderr).toBe(0);
}

// Our OpenAPI document tells the truth about the server: schemathesis (make schemathesis-tool,
// pinned in tools/schemathesis/) generates requests from /openapi.json, valid and invalid, and
// checks every answer against it: status declared, content type and body as declared, valid
// requests accepted and invalid ones refused, 405 with Allow for undeclared methods, no 5xx.
// The server runs as its pod runs it: the image's tree, `registry serve --config=FILE` (and a
// free port).
// Without schemathesis the test skips with one line, unless REQUIRE_SCHEMATHESIS=1 (CI).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildImageTree } from "../support/image.js";
import { freePort } from "../support/ports.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const TOOL = join(ROOT, ".tools", "schemathesis", "current", "bin", "schemathesis");
const TOOLS = join(ROOT, "tools", "schemathesis");
const CATALOG = join(ROOT, "examples", "registry", "data", "registry.json");

function schemathesisMissing(): string | undefined {
  if (existsSync(TOOL)) return undefined;
  const reason = `schemathesis is not installed (${TOOL} missing; run make schemathesis-tool)`;
  if (process.env.REQUIRE_SCHEMATHESIS === "1") {
    throw new Error(`REQUIRE_SCHEMATHESIS=1: ${reason}`);
  }
  return reason;
}

/** Anonymous, in memory: a small synced catalog and the managed source publishes go into. */
function configYaml(): string {
  return `sources:
  - name: catalog
    format: upstream
    file:
      path: ${JSON.stringify(CATALOG)}
  - name: team
    managed: {}
registries:
  - name: default
    sources: [catalog, team]
auth:
  mode: anonymous
database:
  embedded: {}
`;
}

interface Server {
  url: string;
  child: ChildProcess;
  log: () => string;
}

/** `registry serve --config=FILE` from the image's tree, once it answers /readiness. */
async function startServer(tree: string, config: string, port: number): Promise<Server> {
  const child = spawn(
    process.execPath,
    [join(tree, "bin", "mcpfleet.js"), "registry", "serve", `--config=${config}`, `--port=${port}`],
    { cwd: tree, env: { PATH: process.env.PATH ?? "", NODE_ENV: "production" }, stdio: "pipe" },
  );
  let seen = "";
  child.stdout?.on("data", (c: Buffer) => (seen += c.toString("utf8")));
  child.stderr?.on("data", (c: Buffer) => (seen += c.toString("utf8")));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`registry serve exited: ${seen}`);
    const ok = await fetch(`${url}/readiness`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, child, log: () => seen };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGTERM");
  throw new Error(`registry serve did not get ready: ${seen}`);
}

const missing = schemathesisMissing();
if (missing !== undefined) console.warn(`SKIPPED the schemathesis run: ${missing}`);

describe.runIf(missing === undefined)("the OpenAPI document, checked by schemathesis", () => {
  let dir = "";
  let server: Server | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "openapi-schemathesis-"));
    const port = await freePort();
    writeFileSync(join(dir, "config.yaml"), configYaml());
    server = await startServer(buildImageTree(), join(dir, "config.yaml"), port);
  }, 130_000);

  afterAll(() => {
    server?.child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  });

  it("finds no answer the document does not describe", () => {
    const run = spawnSync(
      TOOL,
      [
        `--config-file=${join(TOOLS, "schemathesis.toml")}`,
        "run",
        `${server!.url}/openapi.json`,
        "--checks=all",
        // A DELETE of the official API marks a version deleted and PATCH restores it: the
        // version stays addressable, as the official registry's does.
        "--exclude-checks=use_after_free",
        "--phases=examples,coverage,fuzzing,stateful",
        "--max-examples=15",
        // The publish bodies' rules (an exact version, an http(s) url that is also a URI, the
        // server.json patterns) leave few random draws valid: hypothesis filters more than this
        // health check (about generation speed, not the API) likes.
        "--suppress-health-check=filter_too_much",
        "--seed=20261128",
        "--generation-database=none",
        // One worker: CPython 3.11's parser is not safe across threads (hypothesis parses).
        "--workers=1",
        "--request-timeout=10",
        "--no-color",
      ],
      {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, SCHEMATHESIS_HOOKS: join(TOOLS, "hooks.py") },
        timeout: 110_000,
      },
    );
    const report = `${run.stdout}\n${run.stderr}`;
    expect(run.status, report).toBe(0);
    // Every case generated passed: no failure and no error (warnings are only advice).
    expect(report).toMatch(/^\s*(\d+) generated, \1 passed\s*$/m);
    expect(report).not.toMatch(/\b\d+ (failures?|errors?)\b/);
  }, 130_000);
});

// Our OpenAPI document tells the truth about the server: schemathesis (make schemathesis-tool,
// pinned in tools/schemathesis/) generates requests from /openapi.json, valid and invalid, and
// checks every answer against it: status declared, content type and body as declared, valid
// requests accepted and invalid ones refused, 405 with Allow for undeclared methods, no 5xx.
// The server runs as its pod runs it: the image's tree, `registry serve --config=FILE` (and a
// free port): anonymous, then in oauth mode against a real OpenID provider, once with a
// super admin's token from its token endpoint and once with none (every protected operation
// then answers 401, which the document must declare with its WWW-Authenticate header).
// Without schemathesis the test skips with one line, unless REQUIRE_SCHEMATHESIS=1 (CI).
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildImageTree } from "../support/image.js";
import { oauthAuthBlock, startIssuer, type TestIssuer } from "../support/oidc.js";
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

/** In memory: a small synced catalog and the managed source publishes go into; `auth` block. */
function configYaml(auth = "auth:\n  mode: anonymous\n"): string {
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
${auth}database:
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

/**
 * schemathesis over the server's own document; its report when a check failed. Run without
 * blocking: the OpenID provider of the oauth run answers in this process.
 */
async function runSchemathesis(url: string, cwd: string, extra: string[]): Promise<string> {
  const child = spawn(
    TOOL,
    [
      `--config-file=${join(TOOLS, "schemathesis.toml")}`,
      "run",
      `${url}/openapi.json`,
      "--checks=all",
      // A DELETE of the official API marks a version deleted and PATCH restores it: the
      // version stays addressable, as the official registry's does.
      "--exclude-checks=use_after_free",
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
      ...extra,
    ],
    {
      cwd,
      env: { ...process.env, SCHEMATHESIS_HOOKS: join(TOOLS, "hooks.py") },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let report = "";
  child.stdout.on("data", (c: Buffer) => (report += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (report += c.toString("utf8")));
  const killer = setTimeout(() => child.kill("SIGKILL"), 150_000);
  const [status] = (await once(child, "exit")) as [number | null];
  clearTimeout(killer);
  expect(status, report).toBe(0);
  // Every case generated passed: no failure and no error (warnings are only advice).
  expect(report).toMatch(/^\s*(\d+) generated, \1 passed\s*$/m);
  expect(report).not.toMatch(/\b\d+ (failures?|errors?)\b/);
  return report;
}

const EVERY_PHASE = ["--phases=examples,coverage,fuzzing,stateful", "--max-examples=15"];

describe.runIf(missing === undefined)("the OpenAPI document, checked by schemathesis", () => {
  let dir = "";
  let issuer: TestIssuer | undefined;
  const servers: Server[] = [];

  /** A server of the image's tree with `auth` (an auth block) in its configuration. */
  async function serve(name: string, auth?: string): Promise<Server> {
    writeFileSync(join(dir, `${name}.yaml`), configYaml(auth));
    const server = await startServer(buildImageTree(), join(dir, `${name}.yaml`), await freePort());
    servers.push(server);
    return server;
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "openapi-schemathesis-"));
  });

  afterAll(async () => {
    for (const server of servers) server.child.kill("SIGTERM");
    await issuer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("finds no answer the document does not describe (anonymous)", async () => {
    const server = await serve("anonymous");
    await runSchemathesis(server.url, dir, EVERY_PHASE);
  }, 240_000);

  it("finds none in oauth mode, with a super admin's token and with none", async () => {
    issuer = await startIssuer({ root: { groups: ["root"] } });
    const server = await serve("oauth", oauthAuthBlock(issuer));
    const token = await issuer.token("root");
    const report = await runSchemathesis(server.url, dir, [
      ...EVERY_PHASE,
      `--header=Authorization: Bearer ${token}`,
    ]);
    // The token was taken: no operation answered only 401 (a PUT of a source may answer only
    // 403: what an API-created source may read is refused until adminSources allows it).
    expect(report).not.toMatch(/401 Unauthorized \(\d+ operations?\)/);
    // Without a token: the probes, the document and the catalog's pages answer; the API 401.
    await runSchemathesis(server.url, dir, ["--phases=examples,fuzzing", "--max-examples=5"]);
  }, 360_000);
});

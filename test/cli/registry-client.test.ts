// `mcpfleet registry publish|status|list` against a real registry server (in this process,
// the CLI in a child process): what a publisher does without curl.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { TEAM_ONLY, startServer, untilReady } from "../registry/helpers.js";
import { oauthAuthBlock, startIssuer, type TestIssuer } from "../support/oidc.js";
import { runCli } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-registry-client-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONFIG = TEAM_ONLY;

function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

// A publish names its server.json schema (required, as the official registry has it).
const SERVER_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
const weather = (version: string) => ({
  $schema: SERVER_SCHEMA,
  name: "com.example/weather",
  version,
  url: "https://weather.example/mcp",
  description: "Forecasts",
});

describe("registry publish, status and list (anonymous server)", () => {
  let server: RegistryServer;
  let url: string;
  beforeAll(async () => {
    server = await startServer(`${CONFIG}auth:\n  mode: anonymous\n`, mkdtempSync(join(dir, "a-")));
    await untilReady(server.url);
    url = `${server.url}/default`;
  });
  afterAll(() => server.close());

  it("publishes, deprecates one version, deletes every version and lists them", async () => {
    const one = await runCli([
      "registry",
      "publish",
      file("w1.json", weather("1.0.0")),
      "--url",
      url,
    ]);
    expect(one.stdout.trim()).toBe(`published com.example/weather@1.0.0 to ${url}`);
    expect(one.status, one.stderr).toBe(0);
    // YAML is read as well; the URL may come from the environment.
    const yaml = file(
      "w2.yaml",
      `$schema: ${SERVER_SCHEMA}\nname: com.example/weather\nversion: 2.0.0\nurl: https://weather.example/mcp\ndescription: Forecasts\n`,
    );
    const two = await runCli(["registry", "publish", yaml], {
      env: { MCPFLEET_REGISTRY_URL: url },
    });
    expect(two.status, two.stderr).toBe(0);
    const deprecated = await runCli([
      "registry",
      "status",
      "com.example/weather@1.0.0",
      "--set",
      "deprecated",
      "--message",
      "use 2.x",
      "--url",
      url,
    ]);
    expect(deprecated.stdout.trim()).toBe("com.example/weather@1.0.0: deprecated (use 2.x)");
    expect(deprecated.status).toBe(0);
    const listed = await runCli(["registry", "list", "--search", "weather", "--url", url]);
    expect(listed.stdout.trim().split("\n")).toEqual([
      "com.example/weather@1.0.0  deprecated: use 2.x",
      "com.example/weather@2.0.0  active, latest",
    ]);
    expect(listed.stderr.trim()).toBe(`2 server version(s) at ${url}`);
    const deleted = await runCli([
      "registry",
      "status",
      "com.example/weather",
      "--set",
      "deleted",
      "--url",
      url,
    ]);
    expect(deleted.stdout.trim()).toBe("2 version(s) of com.example/weather: deleted");
    const none = await runCli(["registry", "list", "--url", url]);
    expect(none.stdout).toBe("");
    const all = await runCli(["registry", "list", "--include-deleted", "-o", "json", "--url", url]);
    const servers = (JSON.parse(all.stdout) as { servers: unknown[] }).servers;
    expect(servers).toHaveLength(2);
  });

  it("checks the file with the server's rules first and sends nothing when it breaks one", async () => {
    const bad = file("bad.json", {
      $schema: SERVER_SCHEMA,
      name: "weather",
      version: "^1.0",
      url: "ftp://x",
      description: "Forecasts",
    });
    const r = await runCli(["registry", "publish", bad, "--url", url]);
    expect(r.stderr.trim().split("\n")).toEqual([
      `${bad}: body.url: must be an http(s) URL`,
      `${bad}: body.name: must match pattern ^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`,
      `${bad}: body.version: version "^1.0" looks like a range; give one exact version`,
      `${bad}: body.url: give url (or remotes or packages): how clients reach the server`,
      `mcpfleet: registry publish: ${bad} breaks 4 rule(s) of the registry; nothing was sent`,
    ]);
    expect(r.status).toBe(1);
    const listed = await runCli([
      "registry",
      "list",
      "--url",
      url,
      "--search",
      "weather",
      "--include-deleted",
    ]);
    expect(listed.stdout).not.toContain("^1.0");
  });

  it("a refusal of the server is one line from its problem details", async () => {
    const w = file("w3.json", weather("3.0.0"));
    expect((await runCli(["registry", "publish", w, "--url", url])).status).toBe(0);
    const again = await runCli(["registry", "publish", w, "--url", url]);
    expect(again.stderr.trim()).toBe(
      `mcpfleet: registry publish: POST ${url}/v0.1/publish answered 409 Version already published: com.example/weather version 3.0.0 is already published; versions are immutable (ERR_VERSION_EXISTS)`,
    );
    expect(again.status).toBe(1);
    const missing = await runCli([
      "registry",
      "status",
      "com.example/nope@1.0.0",
      "--set",
      "active",
      "--url",
      url,
    ]);
    expect(missing.stderr.trim()).toMatch(
      /^mcpfleet: registry status: PATCH .* answered 404 Server version not found: .* \(ERR_VERSION_NOT_FOUND\)$/,
    );
    expect(missing.status).toBe(1);
  });

  it("a registry that cannot be reached, and usage errors", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const down = await runCli(["registry", "list", "--url", `http://127.0.0.1:${port}/default`]);
    expect(down.stderr.trim()).toBe(
      `mcpfleet: registry list: cannot reach http://127.0.0.1:${port}/default: it refused the connection; is it running, and is --url right?`,
    );
    expect(down.status).toBe(1);
    const noUrl = await runCli(["registry", "list"], { env: { MCPFLEET_REGISTRY_URL: "" } });
    expect(noUrl.stderr.trim()).toBe(
      "mcpfleet: registry list: give the registry: --url http://HOST:PORT/REGISTRY (or set MCPFLEET_REGISTRY_URL); see mcpfleet help registry list",
    );
    expect(noUrl.status).toBe(2);
    const badSet = await runCli(["registry", "status", "x/y", "--set", "gone", "--url", url]);
    expect(badSet.stderr.trim()).toMatch(/--set must be active, deprecated, deleted, not "gone"/);
    expect(badSet.status).toBe(2);
  });
});

describe("registry publish with a token (oauth server)", () => {
  let issuer: TestIssuer;
  let server: RegistryServer;
  let url: string;
  let token: string;
  beforeAll(async () => {
    issuer = await startIssuer({ pub: { team: "t", groups: ["publishers"] } });
    token = await issuer.token("pub");
    server = await startServer(`${CONFIG}${oauthAuthBlock(issuer)}`, mkdtempSync(join(dir, "o-")));
    await untilReady(server.url);
    url = `${server.url}/default`;
  });
  afterAll(async () => {
    await server.close();
    await issuer.close();
  });

  it("without a token: 401 in one line saying how to give one", async () => {
    const r = await runCli(
      ["registry", "publish", file("t1.json", weather("1.0.0")), "--url", url],
      {
        env: { MCPFLEET_REGISTRY_TOKEN: "" },
      },
    );
    expect(r.stderr.trim()).toMatch(
      /^mcpfleet: registry publish: POST .* answered 401 Authentication required: .*; give a token with --token-file FILE or MCPFLEET_REGISTRY_TOKEN$/,
    );
    expect(r.status).toBe(1);
  });

  it("sends the token of --token-file or MCPFLEET_REGISTRY_TOKEN", async () => {
    const fromFile = await runCli([
      "registry",
      "publish",
      file("t2.json", { ...weather("2.0.0"), claims: { team: "t" } }),
      "--url",
      url,
      "--token-file",
      file("token", `${token}\n`),
    ]);
    expect(fromFile.status, fromFile.stderr).toBe(0);
    const fromEnv = await runCli(
      ["registry", "status", "com.example/weather@2.0.0", "--set", "deprecated", "--url", url],
      {
        env: { MCPFLEET_REGISTRY_TOKEN: token },
      },
    );
    expect(fromEnv.status, fromEnv.stderr).toBe(0);
  });
});

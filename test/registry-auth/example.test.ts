// examples/registry/config-oauth-local.yaml works as docs/auth.md describes, with the local
// issuer of test/support/oidc.ts (on a free port here instead of 9400).
import { readFileSync } from "node:fs";
import { untilReady } from "../registry/helpers.js";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseConfig } from "../../src/registry/config/load.js";
import { RegistryServer } from "../../src/registry/server.js";
import { LOCAL_CLIENTS, startIssuer, type TestIssuer } from "../support/oidc.js";
import { call } from "./helpers.js";

const DIR = join(import.meta.dirname, "../../examples/registry");
const PATH = join(DIR, "config-oauth-local.yaml");
let issuer: TestIssuer;
let server: RegistryServer;

beforeAll(async () => {
  issuer = await startIssuer(LOCAL_CLIENTS);
  const text = readFileSync(PATH, "utf8");
  expect(text).toContain("issuerUrl: http://127.0.0.1:9400");
  const yaml = text.replaceAll("http://127.0.0.1:9400", issuer.issuer);
  const parsed = parseConfig(yaml, PATH);
  expect(parsed.warnings).toEqual([]);
  server = await RegistryServer.start(
    { ...parsed, path: PATH, baseDir: DIR },
    { port: 0, log: pino({ level: "silent" }), generationPollMs: 100 },
  );
  await untilReady(server.url);
});

afterAll(async () => {
  await server?.close();
  await issuer?.close();
});

it("serves the sample catalog to team members only, and publishing follows the roles", async () => {
  const list = (client: string) =>
    issuer
      .token(client)
      .then((token) => call(`${server.url}/default/v0.1/servers?limit=100`, { token }));
  expect(((await list("reader")).body.servers as unknown[]).length).toBe(8);
  expect((await list("outsider")).body.servers).toEqual([]);
  expect((await call(`${server.url}/default/v0.1/servers`)).status).toBe(401);
  const me = await call(`${server.url}/v1/me`, { token: await issuer.token("admin") });
  expect(me.body.roles).toEqual(["superAdmin", "manageSources", "manageRegistries"]);
  const body = {
    name: "io.example/notes",
    version: "1.0.0",
    url: "https://notes.example.com/mcp",
    description: "Notes",
    claims: { team: "data" },
  };
  const post = (client: string) =>
    issuer
      .token(client)
      .then((token) => call(`${server.url}/default/v0.1/publish`, { method: "POST", token, body }));
  expect((await post("reader")).status).toBe(403);
  expect((await post("alice")).status).toBe(200);
});

// What a registry server loads is what its configuration uses: in anonymous mode neither the
// JOSE library (token validation) nor Node's fetch implementation (which an ESM import of
// node:http pulls in) is loaded, a plain configuration file is read without the yaml
// package, and the OpenAPI document's builder waits for the first request for it. Each server runs as `registry serve` in a process of its own,
// with a module hook that lists, at exit, every module it loaded.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TEAM_ONLY, untilReady } from "./helpers.js";
import { listeningUrl } from "../support/listening.js";

const ROOT = join(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "registry-lazy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Records loaded modules (by URL) and Node's own loaded internals into $MODULES_OUT at exit. */
const HOOK = `
import { registerHooks } from "node:module";
import { writeFileSync } from "node:fs";
const urls = new Set();
registerHooks({ load(url, context, next) { urls.add(url); return next(url, context); } });
process.on("exit", () => {
  writeFileSync(process.env.MODULES_OUT, [...urls, ...process.moduleLoadList].join("\\n"));
});
`;

const SOURCES = `${TEAM_ONLY}database: { embedded: {} }
`;

const AUTH = {
  anonymous: "auth: { mode: anonymous }",
  oauth: `auth:
  mode: oauth
  oauth:
    resourceUrl: http://127.0.0.1:8080
    providers:
      - { name: local, issuerUrl: "http://127.0.0.1:9", audience: api, allowPrivateIP: true }`,
};

/** The modules a server of `auth` mode loaded from start to readiness and shutdown. */
async function loadedModules(mode: keyof typeof AUTH): Promise<string[]> {
  const hook = join(dir, "hook.mjs");
  writeFileSync(hook, HOOK);
  const config = join(dir, `${mode}.yaml`);
  writeFileSync(config, `${SOURCES}${AUTH[mode]}\n`);
  const out = join(dir, `${mode}.modules`);
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--import", hook, join(ROOT, "src/cli/main.ts")].concat([
      "registry",
      "serve",
      "--config",
      config,
      "--port",
      "0",
    ]),
    { cwd: ROOT, env: { ...process.env, MODULES_OUT: out }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await listeningUrl(child);
  await untilReady(url);
  expect((await fetch(`${url}/default/v0.1/servers`)).status).toBe(mode === "oauth" ? 401 : 200);
  child.kill("SIGTERM");
  await exited;
  return readFileSync(out, "utf8").split("\n");
}

const jose = (modules: string[]) => modules.filter((m) => m.includes("/node_modules/jose/"));
const undici = (modules: string[]) => modules.filter((m) => m.includes("undici"));
const yamlPackage = (modules: string[]) => modules.filter((m) => m.includes("/node_modules/yaml/"));
const swagger = (modules: string[]) => modules.filter((m) => m.includes("/@fastify/swagger/"));

describe("registry serve loads what its configuration uses", () => {
  it("in anonymous mode: no JOSE library, fetch implementation, yaml package or swagger", async () => {
    const modules = await loadedModules("anonymous");
    expect(modules.some((m) => m.includes("/src/registry/server.ts"))).toBe(true);
    expect(jose(modules)).toEqual([]);
    expect(undici(modules)).toEqual([]);
    expect(yamlPackage(modules)).toEqual([]);
    expect(swagger(modules)).toEqual([]);
  });

  it("in oauth mode: the JOSE library, to validate tokens", async () => {
    expect(jose(await loadedModules("oauth")).length).toBeGreaterThan(0);
  });
});

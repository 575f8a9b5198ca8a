// Route schemas are compiled on the first request that needs them (compile-once.ts): a started
// server has compiled almost none, every one of them compiles, and a deferred validator and
// serializer answer as an eager one would.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileRouteSchemas } from "../../src/registry/http/server.js";
import type { RegistryServer } from "../../src/registry/server.js";
import { TEAM_ONLY, startServer, untilReady } from "./helpers.js";

const CONFIG = `${TEAM_ONLY}adminSources: { fileRoots: ["."] }
auth: { mode: anonymous }
database: { embedded: {} }
`;

describe("route schemas compiled on first use", () => {
  let dir: string;
  let server: RegistryServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "route-schemas-"));
    server = await startServer(CONFIG, dir);
    await untilReady(server.url);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("validates a query on the first request, with the eager validator's errors", async () => {
    const bad = await fetch(`${server.url}/default/v0.1/servers?limit=zero`);
    expect(bad.status).toBe(400);
    const problem = (await bad.json()) as { detail: string };
    expect(problem.detail).toMatch(/limit/);
    const good = await fetch(`${server.url}/default/v0.1/servers?limit=5`);
    expect(good.status).toBe(200);
    expect(await good.json()).toEqual({ servers: [], metadata: { count: 0 } });
  });

  it("refuses a body of the wrong type through a deferred body validator", async () => {
    const res = await fetch(`${server.url}/default/v0.1/publish`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: 5 }),
    });
    expect(res.status).toBe(400);
  });

  it("compiles every remaining schema without error, once", () => {
    // The admin, entry and catalog routes were never called: their schemas are still pending.
    expect(compileRouteSchemas(server.app)).toBeGreaterThan(20);
    expect(compileRouteSchemas(server.app)).toBe(0);
  });
});

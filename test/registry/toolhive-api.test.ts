// ToolHive's /v1 entry API and its authorization rules where the spec is silent: publishing
// into a managed source whose claims the publisher does not cover is forbidden, writers list
// the registries their claims cover, entry claims are read and changed; entries of a source and
// of a registry.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDuration } from "../../src/duration.js";
import { goDurationString } from "../../src/registry/http/admin-sources.js";
import type { RegistryServer } from "../../src/registry/server.js";
import { oauthAuthBlock, startIssuer, type TestIssuer } from "../support/oidc.js";
import { startServer, untilReady } from "./helpers.js";

const DATA = join(import.meta.dirname, "fixtures", "catalog-upstream.json");

describe("ToolHive's /v1 entry API", () => {
  let dir: string;
  let server: RegistryServer;
  let issuer: TestIssuer;
  const tokens: Record<string, string> = {};
  const call = async (who: string, method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${tokens[who]}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const server1 = (name: string, version = "1.0.0") => ({
    name,
    version,
    description: "A team server",
    remotes: [{ type: "streamable-http", url: "https://mcp.team-b.dev/mcp" }],
  });

  beforeAll(async () => {
    const clients = {
      root: { groups: ["root"] },
      ops: { team: "a", groups: ["ops"] },
      pubB: { team: "b", groups: ["publishers"] },
      pubA: { team: "a", groups: ["publishers"] },
      pubAB: { team: ["a", "b"], groups: ["publishers"] },
      reader: { team: "b" },
    };
    issuer = await startIssuer(clients);
    for (const c of Object.keys(clients)) tokens[c] = await issuer.token(c);
    dir = mkdtempSync(join(tmpdir(), "toolhive-api-"));
    server = await startServer(
      `
sources:
  - name: catalog
    format: upstream
    file: { path: ${DATA} }
    claims: { team: a }
  - name: team
    managed: {}
    claims: { team: b }
registries:
  - name: open
    sources: [team, catalog]
  - name: team-a
    sources: [catalog]
    claims: { team: a }
  - name: team-b
    sources: [team]
    claims: { team: b }
${oauthAuthBlock(issuer)}`,
      dir,
    );
    await untilReady(server.url);
  });
  afterAll(async () => {
    await server.close();
    await issuer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("publishes into the managed source with POST /v1/entries (201)", async () => {
    const r = await call("pubB", "POST", "/v1/entries", {
      server: server1("io.team-b/one"),
      claims: { team: "b" },
    });
    expect(r.status, await r.clone().text()).toBe(201);
    // ToolHive's answer: the server.json as stored.
    const stored = (await r.json()) as { name: string };
    expect(stored.name).toBe("io.team-b/one");
    const read = await call("pubB", "GET", "/team-b/v0.1/servers/io.team-b%2Fone/versions/1.0.0");
    expect(read.status).toBe(200);
  });

  it("forbids publishing into a managed source whose claims the publisher does not cover", async () => {
    for (const [path, body] of [
      ["/v1/entries", { server: server1("io.team-a/x"), claims: { team: "a" } }],
      ["/open/v0.1/publish", { ...server1("io.team-a/x"), claims: { team: "a" } }],
    ] as const) {
      const r = await call("pubA", "POST", path, body);
      expect(r.status, path).toBe(403);
      expect(((await r.json()) as { detail: string }).detail).toMatch(/managed source's claims/);
    }
    // A publisher covering both may publish an entry for either.
    const ok = await call("pubAB", "POST", "/v1/entries", {
      server: server1("io.team-ab/x"),
      claims: { team: "b" },
    });
    expect(ok.status).toBe(201);
  });

  it("refuses the server.json rules and entry types it does not keep, naming the field", async () => {
    const bad = await call("pubB", "POST", "/v1/entries", {
      server: { ...server1("io.team-b/bad"), description: "d".repeat(101) },
      claims: { team: "b" },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { location: string }[] }).errors).toEqual([
      expect.objectContaining({ location: "body.description" }),
    ]);
    const skill = await call("pubB", "POST", "/v1/entries", { skill: { name: "x" } });
    expect(skill.status).toBe(400);
    const claimsOfSkill = await call("pubB", "GET", "/v1/entries/skill/x/claims");
    expect(claimsOfSkill.status).toBe(400);
  });

  it("reads and changes the claims of a published name", async () => {
    const path = "/v1/entries/server/io.team-b%2Fone/claims";
    const r = await call("pubB", "GET", path);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ claims: { team: "b" } });
    // A name whose claims the caller does not hold answers as a missing one.
    expect((await call("pubA", "GET", path)).status).toBe(404);
    // New claims the caller does not hold: forbidden.
    expect((await call("pubB", "PUT", path, { claims: { team: "a" } })).status).toBe(403);
    expect((await call("pubB", "PUT", path, { claims: { team: ["b"] } })).status).toBe(204);
    expect(await (await call("pubB", "GET", path)).json()).toEqual({ claims: { team: ["b"] } });
    // Every version keeps the name's claims: the next version must carry the new ones.
    const next = await call("pubB", "POST", "/v1/entries", {
      server: server1("io.team-b/one", "1.1.0"),
      claims: { team: ["b"] },
    });
    expect(next.status).toBe(201);
    expect((await call("pubB", "GET", "/v1/entries/server/io.team-b%2Fnone/claims")).status).toBe(
      404,
    );
  });

  it("lets writers list the registries their claims cover", async () => {
    const names = async (who: string) => {
      const r = await call(who, "GET", "/v1/registries");
      expect(r.status, who).toBe(200);
      return ((await r.json()) as { registries: { name: string }[] }).registries
        .map((x) => x.name)
        .sort();
    };
    expect(await names("pubB")).toEqual(["open", "team-b"]);
    expect(await names("pubA")).toEqual(["open", "team-a"]);
    expect(await names("ops")).toEqual(["open", "team-a"]);
    expect((await call("reader", "GET", "/v1/registries")).status).toBe(403);
  });

  it("lists the entries of a source and of a registry", async () => {
    const src = await call("root", "GET", "/v1/sources/team/entries");
    expect(src.status).toBe(200);
    const entries = (
      (await src.json()) as {
        entries: { name: string; claims: unknown; versions: { version: string }[] }[];
      }
    ).entries;
    expect(entries.find((e) => e.name === "io.team-b/one")).toMatchObject({
      claims: { team: ["b"] },
      versions: [{ version: "1.0.0" }, { version: "1.1.0" }],
    });
    const reg = await call("root", "GET", "/v1/registries/open/entries");
    const listed = (
      (await reg.json()) as {
        entries: { name: string; sourceName: string; position: number }[];
      }
    ).entries;
    expect(listed.find((e) => e.name === "io.team-b/one")).toMatchObject({
      sourceName: "team",
      position: 0,
    });
    expect(listed.filter((e) => e.sourceName === "catalog").length).toBe(12);
    // A source the caller may not manage answers as a missing one.
    expect((await call("ops", "GET", "/v1/sources/team/entries")).status).toBe(404);
    expect((await call("pubB", "GET", "/v1/sources/team/entries")).status).toBe(403);
  });

  it("gives sources, registries and entries the fields ToolHive's swagger declares", async () => {
    const src = (await (await call("root", "GET", "/v1/sources/catalog")).json()) as Record<
      string,
      unknown
    >;
    expect(src).toMatchObject({
      type: "file",
      creationType: "CONFIG",
      sourceType: "file",
      sourceConfig: { path: DATA },
      claims: { team: "a" },
      syncStatus: { phase: "complete", serverCount: 12, skillCount: 0, pluginCount: 0 },
    });
    // No syncPolicy: no schedule (it syncs at start and when asked).
    expect(src.syncSchedule).toBeUndefined();
    const team = (await (await call("root", "GET", "/v1/sources/team")).json()) as Record<
      string,
      unknown
    >;
    expect(team).toMatchObject({ sourceType: "managed", sourceConfig: {}, claims: { team: "b" } });
    const reg = await call("root", "GET", "/v1/registries/open");
    expect(await reg.json()).toMatchObject({
      creationType: "CONFIG",
      sources: ["team", "catalog"],
    });
    const entries = (await (await call("root", "GET", "/v1/sources/catalog/entries")).json()) as {
      entries: Record<string, unknown>[];
    };
    expect(entries.entries[0]).toMatchObject({
      entryType: "MCP",
      versions: [
        { version: "1.0.0", title: "analytics-sql", createdAt: expect.any(String) as unknown },
      ],
    });
  });

  it("writes a sync schedule as Go writes a duration", () => {
    expect(
      ["1h", "30m", "90s", "1.5s", "250ms", "2h45m", "0"].map((d) =>
        goDurationString(parseDuration(d)),
      ),
    ).toEqual(["1h0m0s", "30m0s", "1m30s", "1.5s", "250ms", "2h45m0s", "0s"]);
  });

  it("removes a published version for good with DELETE /v1/entries/...", async () => {
    const path = "/v1/entries/server/io.team-b%2Fone/versions/1.1.0";
    expect((await call("pubA", "DELETE", path)).status).toBe(404);
    expect((await call("pubB", "DELETE", path)).status).toBe(204);
    expect((await call("pubB", "DELETE", path)).status).toBe(404);
    // Gone for good: the number may be published again.
    const again = await call("pubB", "POST", "/v1/entries", {
      server: server1("io.team-b/one", "1.1.0"),
      claims: { team: ["b"] },
    });
    expect(again.status).toBe(201);
  });
});

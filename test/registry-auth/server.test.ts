// The registry server in oauth mode against a real OpenID provider: discovery, /v1/me, the
// registry claims gate, the entry filter with pagination, publish rules and admin scoping.
import { copyFileSync } from "node:fs";
import { untilReady } from "../registry/helpers.js";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AUDIENCE,
  INTROSPECTOR,
  OPAQUE_AUDIENCE,
  startIssuer,
  type TestIssuer,
} from "../support/oidc.js";
import { call, EXAMPLE_DATA, secretFile, startRegistry, type Started } from "./helpers.js";

const CLIENTS = {
  root: { groups: ["root"] },
  alice: { team: "a", groups: ["publishers"] },
  bob: { team: "b", groups: ["publishers"] },
  ops: { team: "a", groups: ["ops"] },
  reader: { team: "a" },
};

let issuer: TestIssuer;
let reg: Started;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  issuer = await startIssuer(CLIENTS);
  for (const c of Object.keys(CLIENTS)) tokens[c] = await issuer.token(c);
  const dir = (await import("node:fs")).mkdtempSync("/tmp/mcpfleet-auth-secret-");
  reg = await startRegistry({
    sources: [
      {
        name: "catalog",
        format: "upstream",
        file: { path: EXAMPLE_DATA },
        syncPolicy: { interval: "1h" },
        claims: { team: "a" },
      },
      {
        name: "secret",
        format: "upstream",
        file: { path: EXAMPLE_DATA },
        syncPolicy: { interval: "1h" },
        claims: { team: "z" },
      },
      { name: "team", managed: {} },
    ],
    adminSources: { fileRoots: ["."] },
    registries: [
      { name: "default", sources: ["team", "catalog"] },
      { name: "gated", sources: ["catalog"], claims: { team: "b" } },
      { name: "hidden", sources: ["secret"], claims: { team: "z" } },
    ],
    auth: {
      mode: "oauth",
      oauth: {
        resourceUrl: "https://registry.test",
        providers: [
          { name: "local", issuerUrl: issuer.issuer, audience: AUDIENCE, allowPrivateIP: true },
          {
            name: "local-opaque",
            issuerUrl: issuer.issuer,
            audience: OPAQUE_AUDIENCE,
            introspectionUrl: `${issuer.issuer}/token/introspection`,
            clientId: INTROSPECTOR.id,
            clientSecretFile: secretFile(dir, "secret", INTROSPECTOR.secret),
            allowPrivateIP: true,
          },
        ],
      },
      authz: {
        roles: {
          superAdmin: [{ groups: "root" }],
          manageSources: [{ groups: "ops" }],
          manageRegistries: [{ groups: "ops" }],
          manageEntries: [{ groups: "publishers" }],
        },
      },
    },
  });
  await untilReady(reg.url);
});

afterAll(async () => {
  await reg?.server.close();
  await issuer?.close();
});

describe("discovery and identity", () => {
  it("serves RFC 9728 metadata without a token", async () => {
    const r = await call(`${reg.url}/.well-known/oauth-protected-resource`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      resource: "https://registry.test",
      authorization_servers: [issuer.issuer],
      scopes_supported: ["mcp-registry:read", "mcp-registry:write"],
      bearer_methods_supported: ["header"],
      resource_documentation: "https://registry.test/openapi.json",
    });
  });
  it("keeps the probes public; /metrics needs a token unless publicPaths lists it", async () => {
    expect((await call(`${reg.url}/health`)).status).toBe(200);
    expect((await call(`${reg.url}/version`)).status).toBe(200);
    expect((await call(`${reg.url}/openapi.json`)).status).toBe(200);
    expect((await call(`${reg.url}/metrics`)).status).toBe(401);
    expect((await call(`${reg.url}/metrics`, { token: tokens.reader })).status).toBe(200);
  });
  it("answers /v1/me with the subject and resolved roles (JWT)", async () => {
    const r = await call(`${reg.url}/v1/me`, { token: tokens.alice });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ subject: "alice", roles: ["manageEntries"] });
    const root = await call(`${reg.url}/v1/me`, { token: tokens.root });
    expect(root.body).toEqual({ subject: "root", roles: ["superAdmin"] });
  });
  it("accepts an opaque token through introspection", async () => {
    const opaque = await issuer.token("ops", { opaque: true });
    expect(opaque.split(".")).toHaveLength(1);
    const r = await call(`${reg.url}/v1/me`, { token: opaque });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ subject: "ops", roles: ["manageSources", "manageRegistries"] });
  });
  it("keeps public paths canonical: encoded, doubled or dot segments authenticate", async () => {
    for (const p of [
      "//v1/sources",
      "/health/../v1/sources",
      "/.well-known/%2e%2e/v1/sources",
      "/%2e%2e/v1/me",
      "/.well-known/../v1/me",
    ]) {
      const r = await call(`${reg.url}${p}`);
      expect(r.status, p).toBe(401);
    }
  });
  it("answers another method of a known path 405 with Allow without a token; unknown paths 401", async () => {
    for (const method of ["PATCH", "DELETE"]) {
      const r = await fetch(`${reg.url}/v1/sources`, { method });
      expect(r.status, method).toBe(405);
      expect(r.headers.get("allow")).toBe("GET, HEAD");
    }
    expect((await fetch(`${reg.url}/v1/nothing-here`)).status).toBe(401);
    expect((await fetch(`${reg.url}/v1/nothing-here`, { method: "PATCH" })).status).toBe(401);
  });
});

describe("registry claims gate and entry filter", () => {
  it("shows a caller only the entries whose claims theirs contain", async () => {
    const a = await call(`${reg.url}/default/v0.1/servers?limit=100`, { token: tokens.alice });
    expect(a.status).toBe(200);
    expect((a.body.servers as unknown[]).length).toBe(8);
    const b = await call(`${reg.url}/default/v0.1/servers?limit=100`, { token: tokens.bob });
    expect(b.status).toBe(200);
    expect(b.body.servers).toEqual([]);
  });
  it("answers 403 at a registry whose claims the caller lacks; superAdmin passes", async () => {
    const a = await call(`${reg.url}/gated/v0.1/servers`, { token: tokens.alice });
    expect(a.status).toBe(403);
    expect(a.body.code).toBe("ERR_FORBIDDEN");
    expect((await call(`${reg.url}/hidden/v0.1/servers`, { token: tokens.alice })).status).toBe(
      403,
    );
    const root = await call(`${reg.url}/hidden/v0.1/servers?limit=100`, { token: tokens.root });
    expect(root.status).toBe(200);
    // Never stored by shared caches, even for a caller who sees everything.
    expect(root.headers.get("cache-control")).toContain("private");
    expect(root.headers.get("vary")).toBe("Authorization");
    expect((root.body.servers as unknown[]).length).toBe(8);
  });
  it("hides an invisible entry's versions as not found", async () => {
    const list = await call(`${reg.url}/default/v0.1/servers?limit=1`, { token: tokens.alice });
    const name = (
      (list.body.servers as { server: { name: string } }[])[0] as { server: { name: string } }
    ).server.name;
    const path = `${reg.url}/default/v0.1/servers/${encodeURIComponent(name)}/versions`;
    expect((await call(path, { token: tokens.alice })).status).toBe(200);
    expect((await call(path, { token: tokens.bob })).status).toBe(404);
  });
});

describe("publish", () => {
  const pub = (token: string | undefined, body: Record<string, unknown>) =>
    call(`${reg.url}/default/v0.1/publish`, { method: "POST", ...(token ? { token } : {}), body });
  const payload = (name: string, version: string, claims?: Record<string, unknown>) => ({
    name,
    version,
    url: "https://mcp.example.com/x",
    description: "d",
    ...(claims ? { claims } : {}),
  });
  it("needs the manageEntries role (403)", async () => {
    const r = await pub(tokens.reader, payload("io.test/nope", "1.0.0", { team: "a" }));
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("ERR_FORBIDDEN");
  });
  it("accepts claims that are a subset of the publisher's", async () => {
    expect((await pub(tokens.alice, payload("io.test/alpha", "1.0.0", { team: "a" }))).status).toBe(
      200,
    );
    expect(
      (
        await pub(
          tokens.alice,
          payload("io.test/alpha-groups", "1.0.0", { groups: ["publishers"] }),
        )
      ).status,
    ).toBe(200);
  });
  it("refuses claims beyond the publisher's (403), including an array element they lack", async () => {
    expect((await pub(tokens.alice, payload("io.test/beta", "1.0.0", { team: "b" }))).status).toBe(
      403,
    );
    expect(
      (await pub(tokens.alice, payload("io.test/beta", "1.0.0", { groups: ["publishers", "x"] })))
        .status,
    ).toBe(403);
    expect((await pub(tokens.alice, payload("io.test/beta", "1.0.0", { org: "x" }))).status).toBe(
      403,
    );
  });
  it("requires every later version to carry the first version's claims (409)", async () => {
    const r = await pub(
      tokens.alice,
      payload("io.test/alpha", "1.1.0", { team: "a", groups: "publishers" }),
    );
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("ERR_CLAIMS_MISMATCH");
    expect((await pub(tokens.alice, payload("io.test/alpha", "1.1.0", { team: "a" }))).status).toBe(
      200,
    );
  });
  it("lets superAdmin publish any claims; a delete of another's version is a 404", async () => {
    expect((await pub(tokens.root, payload("io.test/zeta", "1.0.0", { team: "z" }))).status).toBe(
      200,
    );
    const del = (token: string | undefined) =>
      call(`${reg.url}/default/v0.1/servers/${encodeURIComponent("io.test/zeta")}/versions/1.0.0`, {
        method: "DELETE",
        ...(token !== undefined ? { token } : {}),
      });
    // A version the caller may not manage is answered as a missing one: 404 either way, so a
    // delete tells nothing about names hidden from the caller.
    expect((await del(tokens.alice)).status).toBe(404);
    const missing = await call(
      `${reg.url}/default/v0.1/servers/${encodeURIComponent("io.test/none")}/versions/1.0.0`,
      { method: "DELETE", token: tokens.alice },
    );
    expect(missing.status).toBe(404);
    // The official API's delete marks the version deleted and answers with it.
    expect((await del(tokens.root)).status).toBe(200);
  });
  it("a write without a token is a 401", async () => {
    expect((await pub(undefined, payload("io.test/anon", "1.0.0"))).status).toBe(401);
  });
});

describe("pagination under filtering", () => {
  beforeAll(async () => {
    for (let i = 0; i < 40; i++) {
      const team = i % 3 === 0 ? "a" : "b";
      const r = await call(`${reg.url}/default/v0.1/publish`, {
        method: "POST",
        token: tokens.root,
        body: {
          name: `io.page/e${String(i).padStart(2, "0")}`,
          version: "1.0.0",
          url: "https://x.example.com/m",
          description: "Paged",
          claims: { team },
        },
      });
      expect(r.status).toBe(200);
    }
  });
  it("fills every page with limit visible entries and never puts a hidden name in a cursor", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    const sizes: number[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await call(
        `${reg.url}/default/v0.1/servers?limit=4&search=io.page${cursor ? `&cursor=${cursor}` : ""}`,
        { token: tokens.bob },
      );
      expect(r.status).toBe(200);
      const names = (r.body.servers as { server: { name: string } }[]).map((s) => s.server.name);
      sizes.push(names.length);
      seen.push(...names);
      cursor = (r.body.metadata as { nextCursor?: string }).nextCursor;
      if (cursor === undefined) break;
      const [decoded] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [string];
      expect(names).toContain(decoded);
    }
    const want = Array.from({ length: 40 }, (_, i) => i)
      .filter((i) => i % 3 !== 0)
      .map((i) => `io.page/e${String(i).padStart(2, "0")}`);
    expect(seen).toEqual(want);
    // 26 visible entries in pages of 4: six full pages and a last page of 2.
    expect(sizes).toEqual([4, 4, 4, 4, 4, 4, 2]);
  });
});

describe("admin scoping", () => {
  const names = (body: Record<string, unknown>, key: string) =>
    (body[key] as { name: string }[]).map((x) => x.name).sort();
  it("lists only the sources and registries the caller's claims contain", async () => {
    const s = await call(`${reg.url}/v1/sources`, { token: tokens.ops });
    expect(s.status).toBe(200);
    expect(names(s.body, "sources")).toEqual(["catalog", "team"]);
    const r = await call(`${reg.url}/v1/registries`, { token: tokens.ops });
    expect(names(r.body, "registries")).toEqual(["default"]);
    const all = await call(`${reg.url}/v1/sources`, { token: tokens.root });
    expect(names(all.body, "sources")).toEqual(["catalog", "secret", "team"]);
  });
  it("needs the role (403)", async () => {
    expect((await call(`${reg.url}/v1/sources`, { token: tokens.reader })).status).toBe(403);
    expect((await call(`${reg.url}/v1/registries`, { token: tokens.reader })).status).toBe(403);
    // Publishers list the registries their claims cover (ToolHive's rule).
    const forPublisher = await call(`${reg.url}/v1/registries`, { token: tokens.alice });
    expect(forPublisher.status).toBe(200);
  });
  it("answers 404, not 403, for a resource the caller may not see", async () => {
    const s = await call(`${reg.url}/v1/sources/secret`, { token: tokens.ops });
    expect(s.status).toBe(404);
    expect(s.body.code).toBe("ERR_SOURCE_NOT_FOUND");
    const missing = await call(`${reg.url}/v1/sources/does-not-exist`, { token: tokens.ops });
    expect(s.body.detail).toBe(String(missing.body.detail).replace("does-not-exist", "secret"));
    expect((await call(`${reg.url}/v1/registries/gated`, { token: tokens.ops })).status).toBe(404);
    expect((await call(`${reg.url}/v1/sources/secret`, { token: tokens.root })).status).toBe(200);
    expect(
      (await call(`${reg.url}/v1/sources/secret/sync`, { method: "POST", token: tokens.ops }))
        .status,
    ).toBe(404);
    expect(
      (await call(`${reg.url}/v1/sources/secret`, { method: "DELETE", token: tokens.ops })).status,
    ).toBe(404);
    expect(
      (await call(`${reg.url}/v1/registries/gated`, { method: "DELETE", token: tokens.ops }))
        .status,
    ).toBe(404);
  });
  it("creates only with claims that are a subset of the caller's", async () => {
    // Under adminSources.fileRoots, and a file no other tenant's source reads.
    copyFileSync(EXAMPLE_DATA, join(reg.dir, "mine.json"));
    const body = (team: string) => ({
      file: { path: "mine.json" },
      format: "upstream",
      syncPolicy: { interval: "1h" },
      claims: { team },
    });
    expect(
      (
        await call(`${reg.url}/v1/sources/other`, {
          method: "PUT",
          token: tokens.ops,
          body: body("b"),
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call(`${reg.url}/v1/sources/mine`, {
          method: "PUT",
          token: tokens.ops,
          body: body("a"),
        })
      ).status,
    ).toBe(201);
    const reg1 = await call(`${reg.url}/v1/registries/r-b`, {
      method: "PUT",
      token: tokens.ops,
      body: { sources: ["mine"], claims: { team: "b" } },
    });
    expect(reg1.status).toBe(403);
  });
  it("updates and deletes only what the caller's claims contain", async () => {
    // root makes a registry with claims ops lacks; ops may neither replace nor delete it.
    const made = await call(`${reg.url}/v1/registries/r-z`, {
      method: "PUT",
      token: tokens.root,
      body: { sources: ["mine"], claims: { team: "z" } },
    });
    expect(made.status).toBe(201);
    const put = await call(`${reg.url}/v1/registries/r-z`, {
      method: "PUT",
      token: tokens.ops,
      body: { sources: ["mine"] },
    });
    expect(put.status).toBe(404);
    expect(
      (await call(`${reg.url}/v1/registries/r-z`, { method: "DELETE", token: tokens.ops })).status,
    ).toBe(404);
    expect(
      (
        await call(`${reg.url}/v1/sources/mine`, {
          method: "PUT",
          token: tokens.ops,
          body: {
            file: { path: "mine.json" },
            format: "upstream",
            syncPolicy: { interval: "2h" },
            claims: { team: "a" },
          },
        })
      ).status,
    ).toBe(200);
    expect(
      (await call(`${reg.url}/v1/registries/r-z`, { method: "DELETE", token: tokens.root })).status,
    ).toBe(204);
  });
});

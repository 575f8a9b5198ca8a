// The registry server in oauth mode against attacks by authenticated callers: work before the
// role check, odd token payloads, scoped source admins reaching beyond their tenant, names
// taken over or hidden by a publisher, answers shared through the cache, existence oracles.
import { mkdirSync, writeFileSync } from "node:fs";
import { untilReady } from "../registry/helpers.js";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIENCE, startIssuer, type TestIssuer } from "../support/oidc.js";
import { call, EXAMPLE_DATA, startRegistry, type Started } from "./helpers.js";

const CLIENTS = {
  root: { groups: ["root"] },
  alice: { team: "a", groups: ["publishers"] },
  bob: { team: "b", groups: ["publishers"] },
  opsA: { team: "a", groups: ["ops"] },
  reader: { team: "a" },
};

let issuer: TestIssuer;
let reg: Started;
const tokens = {} as Record<keyof typeof CLIENTS, string>;
const DATA_DIR = join(EXAMPLE_DATA, "..");

beforeAll(async () => {
  issuer = await startIssuer(CLIENTS);
  for (const c of Object.keys(CLIENTS) as (keyof typeof CLIENTS)[]) {
    tokens[c] = await issuer.token(c);
  }
  reg = await startRegistry({
    sources: [
      {
        name: "catalog",
        format: "upstream",
        file: { path: EXAMPLE_DATA },
        claims: { team: "a" },
      },
      { name: "team", managed: {} },
    ],
    // The managed source first, as in the shipped OAuth example.
    registries: [{ name: "default", sources: ["team", "catalog"], claims: {} }],
    adminSources: { fileRoots: [DATA_DIR, "tenants"], hosts: ["registry.example.com"] },
    auth: {
      mode: "oauth",
      oauth: {
        resourceUrl: "https://registry.test",
        providers: [
          { name: "local", issuerUrl: issuer.issuer, audience: AUDIENCE, allowPrivateIP: true },
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

const put = (path: string, token: string, body: unknown) =>
  call(`${reg.url}${path}`, { method: "PUT", token, body });

/** A catalog name (the example data's first server). */
async function catalogName(): Promise<string> {
  const r = await call(`${reg.url}/default/v0.1/servers?limit=1`, { token: tokens.reader });
  const servers = r.body.servers as { server: { name: string } }[];
  expect(servers.length).toBe(1);
  return servers[0]!.server.name;
}

describe("work before authorization", () => {
  it("checks the role before validating an admin body", async () => {
    // Under the body's structural limit (10,000 items), far over the schema's (100).
    const sources = Array.from({ length: 9_000 }, (_, i) => `s${i}`);
    // alice has no manageRegistries: refused before the body's rules run.
    const r = await put("/v1/registries/big", tokens.alice, { sources });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("ERR_FORBIDDEN");
    const s = await put("/v1/sources/big", tokens.alice, { managed: {}, claims: { x: "y" } });
    expect(s.status).toBe(403);
    // With the role, the same body is refused by its limits, not evaluated pair by pair.
    const v = await put("/v1/registries/big", tokens.opsA, { sources });
    expect(v.status).toBe(400);
    expect(v.body.detail).toMatch(/at most 100|must NOT have more than 100 items/);
  });
});

describe("odd token payloads", () => {
  it("answers an unsigned token whose issuer is not a string with 401", async () => {
    const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    for (const iss of [{ toString: 1 }, ["x"], null, 42, { valueOf: "x" }]) {
      const token = `${part({ alg: "none" })}.${part({ iss, sub: "x" })}.`;
      const r = await call(`${reg.url}/v1/me`, { token: `${token}x` });
      expect(r.status, JSON.stringify(iss)).toBe(401);
    }
  });
});

describe("scoped source admins", () => {
  const refused = async (body: Record<string, unknown>) => {
    const r = await put("/v1/sources/probe", tokens.opsA, { ...body, claims: { team: "a" } });
    expect(r.status, JSON.stringify(body)).toBe(403);
    expect(r.body.code).toBe("ERR_SOURCE_LOCATION_REFUSED");
    expect(r.text).not.toMatch(/root:x|ENOENT/);
  };

  it("reads only under the allowed roots and from the allowed hosts", async () => {
    await refused({ file: { path: "/etc/passwd" } });
    await refused({ file: { path: `${DATA_DIR}/../../../../etc/passwd` } });
    await refused({ file: { path: "/nonexistent/probe.json" } });
    await refused({ url: { url: "http://127.0.0.1:1/registry.json" } });
    await refused({ url: { url: "http://localhost:1/registry.json" } });
    await refused({ api: { endpoint: "http://[::1]:1" } });
    await refused({ git: { repository: "file:///work/main" } });
    await refused({ git: { repository: "https://evil.example.org/x.git" } });
    expect((await call(`${reg.url}/v1/sources/probe`, { token: tokens.root })).status).toBe(404);
  });

  it("refuses a host the allow list names when it resolves to a private address", async () => {
    const r = await put("/v1/sources/probe", tokens.root, {
      url: { url: "http://registry.example.com.localhost/x.json" },
    });
    expect(r.status).toBe(403);
  });

  it("cannot read another tenant's data under its own claims", async () => {
    // catalog (team a) reads the example data; an admin of team b may not read it again.
    const tenants = join(reg.dir, "tenants");
    mkdirSync(tenants, { recursive: true });
    writeFileSync(join(tenants, "b.json"), JSON.stringify({ servers: [] }));
    const other = await put("/v1/sources/tenant-b", tokens.root, {
      file: { path: "tenants/b.json" },
      claims: { team: "b" },
    });
    expect(other.status).toBe(201);
    const steal = await put("/v1/sources/steal", tokens.opsA, {
      file: { path: "tenants/./b.json" },
      claims: { team: "a" },
    });
    expect(steal.status).toBe(403);
    expect(steal.body.code).toBe("ERR_SOURCE_LOCATION_REFUSED");
    // The same location as a source the caller manages (catalog, team a) is allowed.
    const own = await put("/v1/sources/mine", tokens.opsA, {
      format: "upstream",
      file: { path: EXAMPLE_DATA },
      claims: { team: "a" },
    });
    expect(own.status).toBe(201);
  });

  it("answers a registry over a hidden source as over a missing one", async () => {
    const hidden = await put("/v1/registries/peek", tokens.opsA, { sources: ["tenant-b"] });
    const missing = await put("/v1/registries/peek", tokens.opsA, { sources: ["no-such"] });
    expect(hidden.status).toBe(400);
    expect(missing.status).toBe(400);
    expect(hidden.body.detail).toBe(String(missing.body.detail).replace("no-such", "tenant-b"));
  });
});

describe("name ownership", () => {
  it("refuses a publish of a name another source of the registry serves", async () => {
    const name = await catalogName();
    for (const [token, claims] of [
      [tokens.bob, { team: "b" }],
      [tokens.alice, { team: "a" }],
      [tokens.root, { team: "a" }],
    ] as const) {
      const r = await call(`${reg.url}/default/v0.1/publish`, {
        method: "POST",
        token,
        body: {
          name,
          version: "0.0.1",
          url: "https://evil.example/mcp",
          description: "Shadow",
          claims,
        },
      });
      expect(r.status).toBe(409);
      expect(r.body.code).toBe("ERR_NAME_TAKEN");
    }
    // The curated entry is still what team a reads.
    const got = await call(
      `${reg.url}/default/v0.1/servers/${encodeURIComponent(name)}/versions/latest`,
      { token: tokens.reader },
    );
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain("evil.example");
  });
});

describe("the answer cache", () => {
  it("keeps callers apart whose claims differ only in a token-specific claim", async () => {
    const jtiOf = (t: string) =>
      (JSON.parse(Buffer.from(t.split(".")[1] ?? "", "base64url").toString()) as { jti: string })
        .jti;
    const first = tokens.reader;
    const second = await issuer.token("reader");
    expect(jtiOf(first)).not.toBe(jtiOf(second));
    const pub = await call(`${reg.url}/default/v0.1/publish`, {
      method: "POST",
      token: tokens.root,
      body: {
        name: "io.cache/per-token",
        version: "1.0.0",
        url: "https://c.example/mcp",
        description: "Per token",
        claims: { team: "a", jti: jtiOf(first) },
      },
    });
    expect(pub.status).toBe(200);
    const list = (t: string) =>
      call(`${reg.url}/default/v0.1/servers?search=per-token`, { token: t });
    expect(((await list(first)).body.metadata as { count: number }).count).toBe(1);
    expect(((await list(second)).body.metadata as { count: number }).count).toBe(0);
  });
});

describe("a provider's files", () => {
  it("refuses to start when a named file is missing, naming the provider and the field", async () => {
    const config = {
      sources: [{ name: "m", managed: {} }],
      registries: [{ name: "r", sources: ["m"] }],
      auth: {
        mode: "oauth",
        oauth: {
          resourceUrl: "https://registry.test",
          providers: [
            {
              name: "corp",
              issuerUrl: "https://sso.example.com",
              audience: "registry",
              caCertPath: "/nonexistent/ca.crt",
            },
          ],
        },
      },
    };
    await expect(startRegistry(config)).rejects.toThrow(
      'auth.oauth.providers "corp": caCertPath /nonexistent/ca.crt: no such file',
    );
  });
});

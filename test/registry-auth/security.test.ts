// Every way a request can fail authentication answers 401 with the same challenge and a problem
// body that says nothing beyond the RFC 6750 code, against a real OpenID provider.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicKey } from "node:crypto";
import { SignJWT, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegistryServer } from "../../src/registry/server.js";
import {
  AUDIENCE,
  OPAQUE_AUDIENCE,
  signingKey,
  startIssuer,
  type TestIssuer,
} from "../support/oidc.js";
import { call, EXAMPLE_DATA, secretFile, startRegistry, type Started } from "./helpers.js";

const RESOURCE = "https://registry.test";
const CHALLENGE = (error: string, description: string): string =>
  `Bearer realm="mcp-registry", error="${error}", error_description="${description}", resource_metadata="${RESOURCE}/.well-known/oauth-protected-resource"`;
const INVALID_TOKEN = CHALLENGE("invalid_token", "the access token is not valid");
const INVALID_REQUEST = CHALLENGE("invalid_request", "a Bearer access token is required");

const SOURCES = [
  {
    name: "catalog",
    format: "upstream",
    file: { path: EXAMPLE_DATA },
    syncPolicy: { interval: "1h" },
    claims: { team: "a" },
  },
];
const REGISTRIES = [{ name: "default", sources: ["catalog"] }];
const ROLES = { roles: { superAdmin: [{ groups: "root" }] } };

/**
 * A registry of the test catalog with OAuth over `providers`; `oauth` adds to its oauth
 * section and `auth` replaces the rest of the auth section (roles by default).
 */
function startOAuthRegistry(
  providers: Record<string, unknown>[],
  oauth: Record<string, unknown> = {},
  auth: Record<string, unknown> = { authz: ROLES },
  tuning: Parameters<typeof startRegistry>[1] = {},
): Promise<Started> {
  return startRegistry(
    {
      sources: SOURCES,
      registries: REGISTRIES,
      auth: { ...auth, oauth: { resourceUrl: RESOURCE, ...oauth, providers } },
    },
    tuning,
  );
}

/** The provider of the shared test issuer (on a loopback address, so allowPrivateIP). */
const localProvider = (): Record<string, unknown> => ({
  name: "local",
  issuerUrl: issuer.issuer,
  audience: AUDIENCE,
  allowPrivateIP: true,
});

type Res = Awaited<ReturnType<typeof call>>;

function expectRefused(r: Res, challenge: string = INVALID_TOKEN): void {
  expect(r.status).toBe(401);
  expect(r.headers.get("www-authenticate")).toBe(challenge);
  expect(r.headers.get("content-type")).toContain("application/problem+json");
  expect(Object.keys(r.body).sort()).toEqual([
    "code",
    "detail",
    "instance",
    "status",
    "title",
    "type",
  ]);
  expect(r.body.code).toBe("ERR_UNAUTHORIZED");
  expect(r.body.detail).toBe(
    challenge === INVALID_TOKEN
      ? "the access token is not valid"
      : "send exactly one Authorization header of the form: Bearer <access token>",
  );
  expect(r.body.instance).toBe("/v1/me");
}

/** An introspection endpoint whose behaviour the test picks. */
let introspectionMode: "active" | "inactive" | "slow" | "garbage" = "inactive";
let introspection: http.Server;
let introspectionUrl: string;

let issuer: TestIssuer;
let other: TestIssuer;
let main: Started;
const me = (): string => `${main.url}/v1/me`;

beforeAll(async () => {
  introspection = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (introspectionMode === "slow") {
        setTimeout(() => res.end("{}"), 3000).unref();
        return;
      }
      res.setHeader("content-type", "application/json");
      if (introspectionMode === "garbage") res.end("<html>not json");
      else if (introspectionMode === "inactive") res.end(JSON.stringify({ active: false }));
      else {
        const now = Math.floor(Date.now() / 1000);
        res.end(
          JSON.stringify({
            active: true,
            sub: "opaque-user",
            aud: OPAQUE_AUDIENCE,
            iss: issuer.issuer,
            exp: now + 60,
          }),
        );
      }
    });
  });
  introspection.listen(0, "127.0.0.1");
  await once(introspection, "listening");
  introspectionUrl = `http://127.0.0.1:${(introspection.address() as AddressInfo).port}/introspect`;
  issuer = await startIssuer({ alice: { team: "a" } });
  other = await startIssuer({ alice: { team: "a" } });
  main = await startOAuthRegistry([
    localProvider(),
    {
      name: "opaque",
      issuerUrl: issuer.issuer,
      audience: OPAQUE_AUDIENCE,
      introspectionUrl,
      clientId: "registry",
      clientSecretFile: secretFile((await import("node:os")).tmpdir(), `s-${process.pid}`, "x"),
      allowPrivateIP: true,
    },
  ]);
});

afterAll(async () => {
  await main?.server.close();
  await issuer?.close();
  await other?.close();
  introspection?.closeAllConnections();
  introspection?.close();
});

const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString("base64url");
const now = (): number => Math.floor(Date.now() / 1000);

describe("forged and invalid JWTs", () => {
  it("accepts the provider's real token (the control case)", async () => {
    const r = await call(me(), { token: await issuer.token("alice") });
    expect(r.status).toBe(200);
    expect(r.body.subject).toBe("alice");
  });
  it("alg none", async () => {
    const t = `${b64({ alg: "none", kid: issuer.key.kid })}.${b64({ iss: issuer.issuer, aud: AUDIENCE, sub: "x", exp: now() + 60 })}.`;
    expectRefused(await call(me(), { token: t }));
  });
  it("an alg or kid that is a list holding a member named toString (found by the token fuzz)", async () => {
    const claims = b64({ iss: issuer.issuer, aud: AUDIENCE, sub: "x", exp: now() + 60 });
    for (const header of [
      { alg: [[true], { toString: "" }], kid: issuer.key.kid },
      { alg: "RS256", kid: [{ toString: "" }] },
    ]) {
      expectRefused(await call(me(), { token: `${b64(header)}.${claims}.c2ln` }));
    }
  });
  it("HS256 signed with the provider's public key", async () => {
    const pub: JWK = {
      kty: issuer.key.privateJwk.kty,
      n: issuer.key.privateJwk.n,
      e: issuer.key.privateJwk.e,
    };
    const pem = createPublicKey({ key: pub, format: "jwk" }).export({
      type: "spki",
      format: "pem",
    });
    for (const secret of [Buffer.from(String(pem)), Buffer.from(JSON.stringify(pub))]) {
      const t = await new SignJWT({ iss: issuer.issuer, aud: AUDIENCE, sub: "x" })
        .setProtectedHeader({ alg: "HS256", kid: issuer.key.kid })
        .setExpirationTime("5m")
        .sign(secret);
      expectRefused(await call(me(), { token: t }));
    }
  });
  it("unknown kid, without a key-set fetch per request", async () => {
    // A registry of its own whose cooldown no slow machine can outlast during the ten requests
    // (the shared one's is short, for the key-rotation tests).
    const own = await startOAuthRegistry([localProvider()], {}, undefined, {
      jwksCooldownMs: 600_000,
    });
    try {
      const stranger = await signingKey("k-unknown");
      const before = issuer.hits.get("/jwks") ?? 0;
      const seen: number[] = [];
      for (let i = 0; i < 10; i++) {
        expectRefused(
          await call(`${own.url}/v1/me`, { token: await issuer.sign({}, {}, stranger) }),
        );
        seen.push((issuer.hits.get("/jwks") ?? 0) - before);
      }
      // One fetch (the first request's), then none during the cooldown.
      expect(seen[0]).toBe(1);
      expect(new Set(seen).size).toBe(1);
    } finally {
      await own.server.close();
    }
  });
  it("tampered payload", async () => {
    const [h, p, s] = (await issuer.token("alice")).split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, "base64url").toString()) as Record<string, unknown>;
    const forged = `${h}.${b64({ ...claims, groups: ["root"] })}.${s}`;
    expectRefused(await call(me(), { token: forged }));
  });
  it("wrong iss, including the trailing-slash variant", async () => {
    for (const iss of [`${issuer.issuer}/`, `${issuer.issuer}/other`, "https://evil.example"]) {
      expectRefused(await call(me(), { token: await issuer.sign({ iss }) }));
    }
  });
  it("wrong aud", async () => {
    expectRefused(await call(me(), { token: await issuer.sign({ aud: "https://other.test" }) }));
    expectRefused(await call(me(), { token: await issuer.sign({ aud: [] }) }));
  });
  it("expired (beyond the clock skew), and a token without exp", async () => {
    expectRefused(await call(me(), { token: await issuer.sign({ exp: now() - 120 }) }));
    expectRefused(await call(me(), { token: await issuer.sign({ exp: undefined }) }));
  });
  it("nbf in the future", async () => {
    expectRefused(await call(me(), { token: await issuer.sign({ nbf: now() + 300 }) }));
  });
  it("a token from a second, unconfigured issuer", async () => {
    expectRefused(await call(me(), { token: await other.token("alice") }));
    // The same claims, signed by the other issuer's key but naming ours.
    expectRefused(await call(me(), { token: await other.sign({ iss: issuer.issuer }) }));
  });
});

describe("clock skew from the config file", () => {
  it("auth.oauth.clockSkew widens the leeway on exp", async () => {
    const s = await startOAuthRegistry([localProvider()], { clockSkew: "3m" });
    try {
      // Expired two minutes ago: refused with the default 30 s, accepted with 3m of skew.
      const token = await issuer.sign({ exp: now() - 120 });
      expectRefused(await call(me(), { token }));
      expect((await call(`${s.url}/v1/me`, { token })).status).toBe(200);
      expectRefused(
        await call(`${s.url}/v1/me`, { token: await issuer.sign({ exp: now() - 600 }) }),
      );
    } finally {
      await s.server.close();
    }
  });
});

describe("malformed requests", () => {
  it("no Authorization header", async () => {
    expectRefused(await call(me()), INVALID_REQUEST);
  });
  it("Bearer with no token", async () => {
    expectRefused(await call(me(), { headers: { authorization: "Bearer" } }), INVALID_REQUEST);
    expectRefused(await call(me(), { headers: { authorization: "Bearer " } }), INVALID_REQUEST);
  });
  it("Basic credentials", async () => {
    const basic = `Basic ${Buffer.from("alice:pw").toString("base64")}`;
    expectRefused(await call(me(), { headers: { authorization: basic } }), INVALID_REQUEST);
  });
  it("two Authorization headers, even with a valid token", async () => {
    const token = await issuer.token("alice");
    const r = await new Promise<{
      status: number;
      headers: http.IncomingHttpHeaders;
      text: string;
    }>((resolve, reject) => {
      const req = http.request(
        me(),
        {
          headers: [
            "host",
            new URL(main.url).host,
            "authorization",
            `Bearer ${token}`,
            "authorization",
            `Bearer ${token}`,
          ],
        },
        (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(r.status).toBe(401);
    expect(r.headers["www-authenticate"]).toBe(INVALID_REQUEST);
    expect((JSON.parse(r.text) as { code: string }).code).toBe("ERR_UNAUTHORIZED");
  });
  it("a token in the query string is ignored (and not echoed back)", async () => {
    const token = await issuer.token("alice");
    const r = await call(`${me()}?access_token=${token}`);
    expectRefused(r, INVALID_REQUEST);
    expect(r.text).not.toContain(token);
  });
  it("a 10 KB token", async () => {
    expectRefused(await call(me(), { token: "a".repeat(10 * 1024) }));
    const big = await issuer.sign({ pad: "x".repeat(10 * 1024) });
    expectRefused(await call(me(), { token: big }));
  });
  it("a 1 MB token is refused by the HTTP layer before it is read (431, no body)", async () => {
    const r = await call(me(), { token: "a".repeat(1024 * 1024) });
    expect(r.status).toBe(431);
    expect(r.text).not.toMatch(/token|bearer|jwt|kid|iss|aud/i);
  });
});

describe("opaque tokens and introspection", () => {
  it("active (the control case)", async () => {
    introspectionMode = "active";
    const r = await call(me(), { token: "opaque-token-1" });
    expect(r.status).toBe(200);
    expect(r.body.subject).toBe("opaque-user");
  });
  it("active: false", async () => {
    introspectionMode = "inactive";
    expectRefused(await call(me(), { token: "opaque-token-2" }));
  });
  it("an endpoint that times out", async () => {
    introspectionMode = "slow";
    const t0 = Date.now();
    expectRefused(await call(me(), { token: "opaque-token-3" }));
    expect(Date.now() - t0).toBeLessThan(2500);
  });
  it("an endpoint that answers garbage", async () => {
    introspectionMode = "garbage";
    expectRefused(await call(me(), { token: "opaque-token-4" }));
  });
});

describe("provider availability and keys", () => {
  it("a JWKS endpoint down at start-up: refused, then accepted once it is back, without restart", async () => {
    const c = await startIssuer({ bob: { team: "b" } });
    c.jwksDown = true;
    const provider = { name: "c", issuerUrl: c.issuer, audience: AUDIENCE, allowPrivateIP: true };
    const s = await startOAuthRegistry([provider], {}, {});
    try {
      const token = await c.token("bob");
      const r1 = await call(`${s.url}/v1/me`, { token });
      expect(r1.status).toBe(401);
      expect(r1.headers.get("www-authenticate")).toBe(INVALID_TOKEN);
      c.jwksDown = false;
      await new Promise((r) => setTimeout(r, 250));
      const r2 = await call(`${s.url}/v1/me`, { token });
      expect(r2.status).toBe(200);
      // No auth.authz section: every authenticated caller holds every role, said loudly.
      expect(r2.body.roles).toEqual([
        "superAdmin",
        "manageSources",
        "manageRegistries",
        "manageEntries",
      ]);
      expect(s.logs.join("")).toContain("AUTHORIZATION IS OFF");
    } finally {
      await s.server.close();
      await c.close();
    }
  });
  it("key rotation: the new key is accepted without restart, the retired one refused", async () => {
    const c = await startIssuer({ bob: { team: "b" } });
    const provider = { name: "c", issuerUrl: c.issuer, audience: AUDIENCE, allowPrivateIP: true };
    const s = await startOAuthRegistry([provider]);
    try {
      const old = await c.token("bob");
      expect((await call(`${s.url}/v1/me`, { token: old })).status).toBe(200);
      await c.rotate([await signingKey("k2", "ES256")]);
      await new Promise((r) => setTimeout(r, 250));
      const fresh = await c.token("bob");
      expect(
        JSON.parse(Buffer.from(fresh.split(".")[0] ?? "", "base64url").toString()),
      ).toMatchObject({ kid: "k2", alg: "ES256" });
      expect((await call(`${s.url}/v1/me`, { token: fresh })).status).toBe(200);
      const r = await call(`${s.url}/v1/me`, { token: old });
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe(INVALID_TOKEN);
    } finally {
      await s.server.close();
      await c.close();
    }
  });
  it("a provider on a loopback address is refused unless allowPrivateIP is set", async () => {
    // The same issuer, without allowPrivateIP.
    const s = await startOAuthRegistry([
      { name: "local", issuerUrl: issuer.issuer, audience: AUDIENCE },
    ]);
    try {
      const before = issuer.hits.get("/.well-known/openid-configuration") ?? 0;
      const r = await call(`${s.url}/v1/me`, { token: await issuer.token("alice") });
      expect(r.status).toBe(401);
      expect(s.logs.join("")).toContain("private address");
      expect(issuer.hits.get("/.well-known/openid-configuration") ?? 0).toBe(before);
    } finally {
      await s.server.close();
    }
  });
  it("valid tokens never cause a key-set fetch per request", async () => {
    await call(me(), { token: await issuer.token("alice") });
    const before = issuer.hits.get("/jwks") ?? 0;
    for (let i = 0; i < 20; i++) {
      expect((await call(me(), { token: await issuer.token("alice") })).status).toBe(200);
    }
    expect(issuer.hits.get("/jwks") ?? 0).toBe(before);
  });
});

describe("modes", () => {
  it("oauth mode without providers refuses to start", async () => {
    const loaded = {
      config: { sources: SOURCES, registries: REGISTRIES, auth: { mode: "oauth" as const } },
      path: "/tmp/none.yaml",
      baseDir: "/tmp",
      warnings: [],
    };
    await expect(RegistryServer.start(loaded as never, { port: 0 })).rejects.toThrow(
      /auth.oauth.providers is empty/,
    );
  });
  it("publicPaths open further paths; an anonymous caller there still cannot write", async () => {
    const s = await startOAuthRegistry(
      [localProvider()],
      { publicPaths: ["/default/v0.1/*"] },
      { publicPaths: ["/metrics"], authz: ROLES },
    );
    try {
      expect((await call(`${s.url}/metrics`)).status).toBe(200);
      const list = await call(`${s.url}/default/v0.1/servers`);
      expect(list.status).toBe(200);
      // No claims: the claimed catalog stays invisible.
      expect(list.body.servers).toEqual([]);
      const pub = await call(`${s.url}/default/v0.1/publish`, {
        method: "POST",
        body: { name: "io.x/y", version: "1.0.0", url: "https://x.example/mcp" },
      });
      expect(pub.status).toBe(401);
      expect((await call(`${s.url}/v1/sources`)).status).toBe(401);
      expect((await call(`${s.url}/registry/default/v0.1/servers`)).status).toBe(401);
    } finally {
      await s.server.close();
    }
  });
  it("anonymous mode: reads need no token, /v1/me is 401, no discovery document", async () => {
    const s = await startRegistry({
      sources: SOURCES,
      registries: REGISTRIES,
      auth: { mode: "anonymous" },
    });
    try {
      expect((await call(`${s.url}/default/v0.1/servers`)).status).toBe(200);
      const r = await call(`${s.url}/v1/me`);
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="mcp-registry"');
      expect((await call(`${s.url}/.well-known/oauth-protected-resource`)).status).toBe(404);
    } finally {
      await s.server.close();
    }
  });
});

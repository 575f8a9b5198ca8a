// Forged and malformed credentials, generated with fast-check, against every route of the
// oauth-mode server's /openapi.json: random strings, JWTs with arbitrary headers and payloads
// (issuers that are objects, lists or ours; alg none; key URLs of an attacker), real tokens with
// a changed payload, and odd Authorization headers. Every protected route answers 401, nothing
// answers a 5xx, and the attacker's key-set URL is never fetched.
import { createServer, type Server } from "node:http";
import { untilReady } from "../registry/helpers.js";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIENCE, startIssuer, type TestIssuer } from "../support/oidc.js";
import { EXAMPLE_DATA, startRegistry, type Started } from "./helpers.js";

const RUNS = Number(process.env.REGISTRY_FUZZ_TOKEN_RUNS ?? 2_000);
const SEED = Number(process.env.REGISTRY_FUZZ_SEED ?? Date.now() % 2 ** 31);

let issuer: TestIssuer;
let reg: Started;
let evil: Server;
let evilHits = 0;
let evilUrl: string;
let realToken: string;

beforeAll(async () => {
  issuer = await startIssuer({ alice: { team: "a", groups: ["root"] } });
  realToken = await issuer.token("alice");
  evil = createServer((_req, res) => {
    evilHits++;
    res.writeHead(200, { "content-type": "application/json" }).end('{"keys":[]}');
  });
  await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/jwks`;
  reg = await startRegistry({
    sources: [
      { name: "catalog", format: "upstream", file: { path: EXAMPLE_DATA }, claims: { team: "a" } },
    ],
    registries: [{ name: "default", sources: ["catalog"] }],
    auth: {
      mode: "oauth",
      oauth: {
        resourceUrl: "https://registry.test",
        providers: [
          { name: "local", issuerUrl: issuer.issuer, audience: AUDIENCE, allowPrivateIP: true },
        ],
      },
      authz: { roles: { superAdmin: [{ groups: "root" }] } },
    },
  });
  // Before its first sync /readiness rightly answers 503: fuzz the server it becomes.
  await untilReady(reg.url);
});

afterAll(async () => {
  await reg?.server.close();
  await issuer?.close();
  evil?.close();
});

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v) ?? "null").toString("base64url");

function tokens(): fc.Arbitrary<string> {
  const iss = fc.oneof(
    fc.constant(issuer.issuer),
    fc.constant(`${issuer.issuer}/`),
    fc.constant({ toString: 1 }),
    fc.constant({ valueOf: issuer.issuer }),
    fc.array(fc.constant(issuer.issuer), { maxLength: 2 }),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const header = fc.record(
    {
      alg: fc.oneof(
        fc.constantFrom("none", "HS256", "RS256", "ES256", "PS512", "NONE"),
        fc.jsonValue(),
      ),
      kid: fc.oneof(fc.string(), fc.jsonValue()),
      typ: fc.constantFrom("JWT", "at+jwt"),
      jku: fc.constant(evilUrl),
      x5u: fc.constant(evilUrl),
      jwk: fc.constant({ kty: "oct", k: "c2VjcmV0" }),
      crit: fc.jsonValue(),
    },
    { requiredKeys: ["alg"] },
  );
  const payload = fc.record(
    {
      iss,
      aud: fc.oneof(fc.constant(AUDIENCE), fc.jsonValue()),
      sub: fc.oneof(fc.string(), fc.jsonValue()),
      exp: fc.oneof(fc.constant(Math.floor(Date.now() / 1000) + 3600), fc.jsonValue()),
      groups: fc.constant(["root"]),
      team: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );
  const signature = fc.oneof(
    fc.constant(""),
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString("base64url")),
    fc.constant(realToken.split(".")[2] ?? ""),
  );
  const jwt = fc.tuple(header, payload, signature).map(([h, p, s]) => `${b64(h)}.${b64(p)}.${s}`);
  // A real token whose payload grants more: the signature no longer matches.
  const tampered = payload.map((p) => {
    const [h, , s] = realToken.split(".");
    return `${h}.${b64({ ...p, iss: issuer.issuer, aud: AUDIENCE })}.${s}`;
  });
  return fc.oneof(
    { weight: 4, arbitrary: jwt },
    { weight: 2, arbitrary: tampered },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,300}=*$/) },
  );
}

const authorization = (token: string) =>
  fc.constantFrom(
    `Bearer ${token}`,
    `bearer ${token}`,
    `Bearer  ${token}`,
    `Basic ${token}`,
    `Bearer ${token} extra`,
    `Bearer`,
  );

describe("forged credentials on every route", () => {
  it("answers 401 on protected routes and never a 5xx", async () => {
    const doc = (await (await fetch(`${reg.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => ({
        method: m.toUpperCase(),
        path: path.replace(/\{registry\}/g, "default").replace(/\{[^}]+\}/g, "x"),
      })),
    );
    const isPublic = (p: string) =>
      ["/health", "/v0.1/health", "/readiness", "/version", "/openapi.json"].includes(p) ||
      p.startsWith("/.well-known/");
    const requests = fc.sample(
      fc
        .tuple(fc.constantFrom(...routes), tokens())
        .chain(([route, token]) => authorization(token).map((header) => ({ route, header }))),
      { numRuns: RUNS, seed: SEED },
    );
    const counts = { tried: 0, "401": 0, other4xx: 0, ok: 0, "5xx": 0, crashes: 0 };
    const failures: string[] = [];
    for (const { route, header } of requests) {
      counts.tried++;
      let res: Response;
      try {
        res = await fetch(`${reg.url}${route.path}`, {
          method: route.method,
          headers: { authorization: header, "content-type": "application/json" },
          ...(["POST", "PUT"].includes(route.method) ? { body: "{}" } : {}),
        });
      } catch (err) {
        counts.crashes++;
        failures.push(`${route.method} ${route.path}: ${(err as Error).message}`);
        continue;
      }
      await res.arrayBuffer();
      if (res.status >= 500) {
        counts["5xx"]++;
        failures.push(`${route.method} ${route.path} [${header.slice(0, 200)}]: ${res.status}`);
      } else if (res.status === 401) counts["401"]++;
      else if (res.status >= 400) counts.other4xx++;
      else counts.ok++;
      if (!isPublic(route.path) && res.status !== 401) {
        failures.push(
          `${route.method} ${route.path} [${header.slice(0, 200)}]: ${res.status}, not 401`,
        );
      }
    }
    console.log(
      `token fuzz (seed ${SEED}): ${JSON.stringify(counts)}, key-set fetches by attacker URL: ${evilHits}`,
    );
    expect(failures.slice(0, 20), `seed ${SEED}`).toEqual([]);
    expect(evilHits).toBe(0);
    expect(counts["401"]).toBeGreaterThan(RUNS / 2);
  }, 600_000);
});

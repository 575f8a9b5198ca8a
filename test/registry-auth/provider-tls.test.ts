// The in-cluster provider setup: keys from an explicit jwksUrl over TLS with a private CA
// (caCertPath), the key-set request authenticated with a token file (authTokenFile).
import { once } from "node:events";
import { mkdtempSync, readFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, expect, it } from "vitest";
import { selfSignedCertificate } from "../support/tls.js";
import { call, EXAMPLE_DATA, secretFile, startRegistry } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-tls-"));
const SA_TOKEN = "service-account-token-for-jwks";
let server: https.Server;
let base: string;
let token: string;
let jwksHits = 0;

beforeAll(async () => {
  selfSignedCertificate(dir);
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "sa-1", alg: "ES256", use: "sig" };
  server = https.createServer(
    { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
    (req, res) => {
      if (req.url !== "/openid/v1/jwks") {
        res.statusCode = 404;
        res.end();
        return;
      }
      jwksHits++;
      if (req.headers.authorization !== `Bearer ${SA_TOKEN}`) {
        res.statusCode = 401;
        res.end("{}");
        return;
      }
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ keys: [jwk] }));
    },
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  token = await new SignJWT({ sub: "system:serviceaccount:data-tools:publisher" })
    .setProtectedHeader({ alg: "ES256", kid: "sa-1" })
    .setIssuer(base)
    .setAudience("mcp-registry")
    .setExpirationTime("5m")
    .sign(privateKey);
});

afterAll(() => {
  server?.closeAllConnections();
  server?.close();
});

async function meWith(provider: Record<string, unknown>): Promise<number> {
  const s = await startRegistry({
    sources: [
      {
        name: "c",
        format: "upstream",
        file: { path: EXAMPLE_DATA },
        syncPolicy: { interval: "1h" },
      },
    ],
    registries: [{ name: "default", sources: ["c"] }],
    auth: {
      oauth: {
        resourceUrl: "https://registry.test",
        providers: [
          {
            name: "kubernetes",
            issuerUrl: base,
            jwksUrl: `${base}/openid/v1/jwks`,
            audience: "mcp-registry",
            allowPrivateIP: true,
            ...provider,
          },
        ],
      },
      authz: { roles: { manageEntries: [{ sub: "system:serviceaccount:data-tools:publisher" }] } },
    },
  });
  try {
    const r = await call(`${s.url}/v1/me`, { token });
    if (r.status === 200) expect(r.body.roles).toEqual(["manageEntries"]);
    return r.status;
  } finally {
    await s.server.close();
  }
}

it("accepts a token whose keys come over TLS from a private CA, with the token file sent", async () => {
  const before = jwksHits;
  expect(
    await meWith({
      caCertPath: join(dir, "cert.pem"),
      authTokenFile: secretFile(dir, "sa", `${SA_TOKEN}\n`),
    }),
  ).toBe(200);
  expect(jwksHits).toBe(before + 1);
});

it("refuses when the provider's certificate is not trusted (no caCertPath)", async () => {
  const before = jwksHits;
  expect(await meWith({ authTokenFile: secretFile(dir, "sa", SA_TOKEN) })).toBe(401);
  expect(jwksHits).toBe(before);
});

it("refuses when the key-set endpoint refuses the token file", async () => {
  expect(
    await meWith({
      caCertPath: join(dir, "cert.pem"),
      authTokenFile: secretFile(dir, "sa2", "wrong"),
    }),
  ).toBe(401);
});

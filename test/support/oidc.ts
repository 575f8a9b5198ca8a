// A real OpenID provider (oidc-provider) on loopback for the registry auth tests: discovery,
// JWKS, a token endpoint (client_credentials with resource indicators: JWT access tokens for one
// audience, opaque ones for another) and RFC 7662 introspection. Each test client's tokens
// carry the claims given for it. The provider can be swapped for one with other keys (key
// rotation) and its JWKS taken down and brought back.
import { once } from "node:events";
import { pathToFileURL } from "node:url";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from "jose";

// oidc-provider ships no type declarations; the little used here is typed by hand.
interface OidcProvider {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => unknown;
  on(event: string, listener: (...args: unknown[]) => void): void;
}
type ProviderClass = new (issuer: string, config: Record<string, unknown>) => OidcProvider;
const oidcProviderModule = "oidc-provider";
const { default: Provider } = (await import(oidcProviderModule)) as {
  default: ProviderClass;
};
type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

export const AUDIENCE = "https://registry.test/api";
export const OPAQUE_AUDIENCE = "https://registry.test/opaque";
export const INTROSPECTOR = { id: "registry", secret: "registry-introspection-secret" };

/**
 * The registry config's `auth:` block (YAML, at column 0) trusting `issuer` for AUDIENCE, with
 * the role mapping the scoped-caller tests share: group root is super admin, ops manage sources
 * and registries, publishers manage entries.
 */
export function oauthAuthBlock(issuer: TestIssuer): string {
  return `auth:
  mode: oauth
  oauth:
    resourceUrl: https://registry.test
    providers:
      - { name: local, issuerUrl: "${issuer.issuer}", audience: ${AUDIENCE}, allowPrivateIP: true }
  authz:
    roles:
      superAdmin: [{ groups: root }]
      manageSources: [{ groups: ops }]
      manageRegistries: [{ groups: ops }]
      manageEntries: [{ groups: publishers }]
`;
}

export interface SigningKey {
  kid: string;
  privateJwk: JWK;
  privateKey: PrivateKey;
  alg: "RS256" | "ES256";
}

export async function signingKey(
  kid: string,
  alg: "RS256" | "ES256" = "RS256",
): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg, use: "sig" };
  return { kid, privateJwk, privateKey, alg };
}

export interface TestIssuer {
  issuer: string;
  port: number;
  key: SigningKey;
  /** An access token from the real token endpoint for a client (JWT unless opaque). */
  token(client: string, opts?: { opaque?: boolean }): Promise<string>;
  /** A JWT signed with the provider's current key, with any claims (for expired, nbf, ...). */
  sign(claims: JWTPayload, header?: Record<string, unknown>, key?: SigningKey): Promise<string>;
  /** Replaces the provider by one with these keys (the first signs); clients and claims stay. */
  rotate(keys: SigningKey[]): Promise<void>;
  jwksDown: boolean;
  /** Requests seen per path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startIssuer(
  clients: Record<string, Record<string, unknown>>,
  opts: { path?: string; port?: number } = {},
): Promise<TestIssuer> {
  const server = http.createServer();
  server.listen(opts.port ?? 0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}${opts.path ?? ""}`;
  let keys = [await signingKey("k1")];
  const makeProvider = (ks: SigningKey[]): OidcProvider => {
    const p = new Provider(issuer, {
      clients: [
        ...Object.keys(clients).map((id) => ({
          client_id: id,
          client_secret: `${id}-secret-0123456789`,
          grant_types: ["client_credentials"],
          id_token_signed_response_alg: ks[0]?.alg ?? "RS256",
          redirect_uris: [],
          response_types: [],
        })),
        {
          client_id: INTROSPECTOR.id,
          client_secret: INTROSPECTOR.secret,
          grant_types: [],
          id_token_signed_response_alg: ks[0]?.alg ?? "RS256",
          redirect_uris: [],
          response_types: [],
        },
      ],
      jwks: { keys: ks.map((k) => k.privateJwk) },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: { enabled: true, allowedPolicy: () => true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => AUDIENCE,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => ({
            scope: "mcp-registry:read mcp-registry:write",
            audience: resource,
            accessTokenTTL: 600,
            accessTokenFormat: resource === OPAQUE_AUDIENCE ? "opaque" : "jwt",
            jwt: { sign: { alg: ks[0]?.alg ?? "RS256" } },
          }),
        },
      },
      ttl: { ClientCredentials: 600 },
      extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => {
        const id = token.clientId ?? "";
        return clients[id] ?? {};
      },
    });
    p.on("server_error", (_ctx, err) => {
      console.error("oidc-provider server_error", err);
    });
    return p;
  };
  let handler = makeProvider(keys).callback();
  const state = {
    jwksDown: false,
    hits: new Map<string, number>(),
  };
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    state.hits.set(path, (state.hits.get(path) ?? 0) + 1);
    if (state.jwksDown && (path.endsWith("/jwks") || path.endsWith("/openid-configuration"))) {
      res.statusCode = 503;
      res.end("down");
      return;
    }
    void handler(req, res);
  });

  async function token(client: string, o: { opaque?: boolean } = {}): Promise<string> {
    const res = await fetch(`${issuer}/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${client}:${client}-secret-0123456789`).toString("base64")}`,
      },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        scope: "mcp-registry:read",
        resource: o.opaque === true ? OPAQUE_AUDIENCE : AUDIENCE,
      }),
    });
    const body = (await res.json()) as { access_token?: string };
    if (res.status !== 200 || body.access_token === undefined) {
      throw new Error(`token endpoint: ${res.status} ${JSON.stringify(body)}`);
    }
    return body.access_token;
  }

  const t: TestIssuer = {
    issuer,
    port,
    get key() {
      return keys[0] as SigningKey;
    },
    token,
    async sign(claims, header = {}, given?: SigningKey) {
      const key = given ?? t.key;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: issuer,
        aud: AUDIENCE,
        sub: "forged",
        iat: now,
        exp: now + 300,
        ...claims,
      })
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "at+jwt", ...header })
        .sign(key.privateKey);
    },
    async rotate(ks) {
      keys = ks;
      handler = makeProvider(ks).callback();
      await Promise.resolve();
    },
    get jwksDown() {
      return state.jwksDown;
    },
    set jwksDown(v: boolean) {
      state.jwksDown = v;
    },
    hits: state.hits,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
  return t;
}

/**
 * `npx tsx test/support/oidc.ts [PORT]`: a local issuer for trying the registry in oauth mode
 * (examples/registry/config-oauth-local.yaml, docs/auth.md). Prints a token for each client.
 */
export const LOCAL_CLIENTS: Record<string, Record<string, unknown>> = {
  admin: { groups: ["platform-admins"] },
  alice: { team: "data", groups: ["publishers"] },
  reader: { team: "data" },
  outsider: { team: "sales" },
};

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.argv[2] ?? "9400");
  const local = await startIssuer(LOCAL_CLIENTS, { port });
  console.log(`issuer ${local.issuer} (audience ${AUDIENCE})`);
  for (const id of Object.keys(LOCAL_CLIENTS)) {
    console.log(`${id}: ${JSON.stringify(LOCAL_CLIENTS[id])}`);
    console.log(`  TOKEN=${await local.token(id)}`);
  }
  console.log(
    `more tokens (10 minutes each): curl -s -u CLIENT:CLIENT-secret-0123456789 -d grant_type=client_credentials -d scope=mcp-registry:read -d resource=${AUDIENCE} ${local.issuer}/token`,
  );
}

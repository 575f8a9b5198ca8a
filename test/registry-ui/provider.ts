// An OpenID provider (oidc-provider, the same library as the auth tests' issuer) that signs
// people in with the authorization code flow and PKCE: its development login form accepts any
// password, and each person's access token (a JWT for the auth tests' audience) carries the
// claims given for that person.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AUDIENCE, signingKey } from "../support/oidc.js";

interface OidcProvider {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => unknown;
}
type ProviderClass = new (issuer: string, config: Record<string, unknown>) => OidcProvider;
const oidcProviderModule = "oidc-provider";
const { default: Provider } = (await import(oidcProviderModule)) as { default: ProviderClass };

export const CLIENT = { id: "catalog", secret: "catalog-secret-0123456789" };

export interface LoginIssuer {
  issuer: string;
  close(): Promise<void>;
}

export async function startLoginIssuer(
  people: Record<string, Record<string, unknown>>,
  redirectUri: string,
): Promise<LoginIssuer> {
  const server = http.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const key = await signingKey("login-1");
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        redirect_uris: [redirectUri],
      },
    ],
    jwks: { keys: [key.privateJwk] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: "mcp-registry:read",
          audience: AUDIENCE,
          accessTokenTTL: 600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: key.alg } },
        }),
      },
    },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id }),
    }),
    extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) =>
      people[token.accountId ?? ""] ?? {},
  });
  server.on("request", provider.callback());
  return {
    issuer,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

// The HTTP side of authentication: RFC 9728 discovery, GET /v1/me, and the WWW-Authenticate
// challenge on every 401.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { McpfleetError } from "../../errors.js";
import type { Authorizer } from "../http/auth.js";
import { ERR as PROBLEM } from "../http/schemas.js";
import { serverWide } from "../http/server-wide.js";
import { AuthFailure } from "./authenticator.js";
import type { OAuthAuthorizer } from "./authorizer.js";
import { DEFAULT_REALM, RESOURCE_METADATA_PATH } from "./oauth-settings.js";

const METADATA_SCHEMA = {
  tags: ["public"],
  summary: "OAuth protected-resource metadata (RFC 9728)",
  response: {
    200: {
      type: "object",
      properties: {
        resource: { type: "string" },
        authorization_servers: { type: "array", items: { type: "string" } },
        scopes_supported: { type: "array", items: { type: "string" } },
        bearer_methods_supported: { type: "array", items: { type: "string" } },
        resource_documentation: { type: "string" },
      },
    },
    400: PROBLEM,
    404: PROBLEM,
    503: PROBLEM,
  },
};

const ME_SCHEMA = {
  tags: ["admin"],
  summary: "The authenticated caller: subject and resolved roles",
  response: {
    200: {
      type: "object",
      properties: {
        subject: { type: "string" },
        roles: { type: "array", items: { type: "string" } },
      },
    },
    400: PROBLEM,
    401: PROBLEM,
    502: PROBLEM,
    503: PROBLEM,
  },
};

/**
 * The authorizer of oauth mode, or undefined. Told apart by what it answers rather than by its
 * class, which is not imported here: it loads the JOSE library, which anonymous mode never needs.
 */
function oauthOf(authorizer: Authorizer): OAuthAuthorizer | undefined {
  return "resourceMetadata" in authorizer ? (authorizer as OAuthAuthorizer) : undefined;
}

/** Every 401 carries a WWW-Authenticate challenge naming why the token was refused. */
function addChallenge(app: FastifyInstance, oauth: OAuthAuthorizer | undefined): void {
  app.addHook("onError", async (req, _reply, err) => {
    if (err instanceof AuthFailure) {
      (req as { authFailure?: AuthFailure }).authFailure = err;
      req.log.debug({ reason: err.reason }, "authentication failed");
    }
  });
  app.addHook("onSend", async (req, reply, payload) => {
    if (reply.statusCode === 401) {
      const failure = (req as { authFailure?: AuthFailure }).authFailure;
      reply.header(
        "www-authenticate",
        oauth !== undefined
          ? oauth.challenge(failure?.oauthError ?? "invalid_request")
          : `Bearer realm="${DEFAULT_REALM}"`,
      );
    }
    return payload;
  });
}

async function resourceMetadata(
  oauth: OAuthAuthorizer | undefined,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (oauth === undefined) {
    throw new McpfleetError("ERR_NOT_FOUND", "this server runs without OAuth (anonymous mode)");
  }
  return reply.header("cache-control", "public, max-age=300").send(oauth.resourceMetadata());
}

async function me(
  oauth: OAuthAuthorizer | undefined,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (oauth === undefined || req.principal.anonymous) {
    throw new McpfleetError(
      "ERR_UNAUTHORIZED",
      oauth === undefined
        ? "anonymous mode: there is no authenticated caller"
        : "this operation needs an access token",
    );
  }
  return reply
    .header("cache-control", "no-store")
    .send({ subject: req.principal.subject ?? "", roles: oauth.roles(req.principal) });
}

/** Discovery, /v1/me and the 401 challenge; server-wide, as the challenge is for every route. */
export const authRoutes = serverWide<{ authorizer: Authorizer }>(async (app, { authorizer }) => {
  const oauth = oauthOf(authorizer);
  addChallenge(app, oauth);
  app.get(RESOURCE_METADATA_PATH, { schema: METADATA_SCHEMA }, (_req, reply) =>
    resourceMetadata(oauth, reply),
  );
  app.get("/v1/me", { schema: ME_SCHEMA }, (req, reply) => me(oauth, req, reply));
  return Promise.resolve();
});

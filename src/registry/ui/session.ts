// Sign-in of people for the catalog: the authorization code flow with PKCE against one of the
// configured providers. The session keeps the access token on the server (the browser holds
// only a random id in an HTTP-only, SameSite cookie), and every page authenticates that token
// through the same Authorizer as the API, so a person sees what the API would show the token.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { McpfleetError } from "../../errors.js";
import { providerRequest, type ProviderHttpOptions } from "../auth/fetch.js";
import type { Authorizer, Principal } from "../http/auth.js";

export const SESSION_COOKIE = "mcpfleet_ui";
const LOGIN_COOKIE = "mcpfleet_ui_login";
/** A pending sign-in is abandoned after this long. */
const LOGIN_TTL_MS = 10 * 60_000;
/** Upper bound of a session whatever the token says. */
const MAX_SESSION_MS = 12 * 3600_000;
const MAX_SESSIONS = 10_000;

export interface SignInSettings {
  issuerUrl: string;
  /** How the provider is called (its CA, private addresses, time and size limits). */
  http: ProviderHttpOptions;
  clientId: string;
  clientSecret?: string;
  /** Fixed callback URL; absent, built from the request's own origin. */
  redirectUrl?: string;
  scopes: string[];
  /** The API's audience, asked for as the token's resource (RFC 8707). */
  audience: string;
}

interface Session {
  token: string;
  csrf: string;
  until: number;
  subject?: string;
}

interface Pending {
  verifier: string;
  redirect: string;
  until: number;
}

interface Endpoints {
  authorization: string;
  token: string;
}

const random = (): string => randomBytes(32).toString("base64url");

export function cookies(req: FastifyRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `secure`: the catalog is reached over HTTPS (often through a proxy terminating TLS). */
function cookie(secure: boolean, name: string, value: string, maxAgeS: number): string {
  return [
    `${name}=${value}`,
    "Path=/ui",
    "HttpOnly",
    // Lax: the provider's redirect back is a top-level GET that must carry the login cookie;
    // cross-site POSTs (sign-out) never carry it.
    "SameSite=Lax",
    `Max-Age=${maxAgeS}`,
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

export class SignIn {
  private readonly sessions = new Map<string, Session>();
  private readonly pending = new Map<string, Pending>();
  private endpoints?: Promise<Endpoints>;

  constructor(
    private readonly settings: SignInSettings,
    private readonly authorizer: Authorizer,
  ) {}

  private discover(): Promise<Endpoints> {
    this.endpoints ??= (async () => {
      const url = `${this.settings.issuerUrl.replace(/\/+$/, "")}/.well-known/openid-configuration`;
      const res = await providerRequest(url, this.settings.http);
      const doc = (res.body ?? {}) as Record<string, unknown>;
      const authorization = doc.authorization_endpoint;
      const token = doc.token_endpoint;
      if (res.status !== 200 || typeof authorization !== "string" || typeof token !== "string") {
        throw new McpfleetError(
          "ERR_INTERNAL",
          `the identity provider's discovery document at ${url} has no authorization and token endpoints`,
        );
      }
      return { authorization, token };
    })();
    this.endpoints.catch(() => (this.endpoints = undefined));
    return this.endpoints;
  }

  private cookie(req: FastifyRequest, name: string, value: string, maxAgeS: number): string {
    const secure =
      req.protocol === "https" || this.settings.redirectUrl?.startsWith("https:") === true;
    return cookie(secure, name, value, maxAgeS);
  }

  private redirectUri(req: FastifyRequest): string {
    return this.settings.redirectUrl ?? `${req.protocol}://${req.host}/ui/callback`;
  }

  /** Starts a sign-in: remembers the PKCE verifier under a fresh state and sends to the provider. */
  async start(req: FastifyRequest, reply: FastifyReply, back: string): Promise<FastifyReply> {
    const ep = await this.discover();
    const now = Date.now();
    for (const [k, p] of this.pending) if (p.until < now) this.pending.delete(k);
    if (this.pending.size >= MAX_SESSIONS) this.pending.clear();
    const state = random();
    const verifier = random();
    this.pending.set(state, { verifier, redirect: back, until: now + LOGIN_TTL_MS });
    const url = new URL(ep.authorization);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: this.settings.clientId,
      redirect_uri: this.redirectUri(req),
      scope: ["openid", ...this.settings.scopes].join(" "),
      state,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      resource: this.settings.audience,
    }).toString();
    return reply
      .header("set-cookie", this.cookie(req, LOGIN_COOKIE, state, LOGIN_TTL_MS / 1000))
      .redirect(url.toString(), 303);
  }

  /** The provider's redirect back: checks state against the cookie, redeems the code. */
  async finish(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const q = req.query as Record<string, string | undefined>;
    const state = q.state ?? "";
    const bound = cookies(req).get(LOGIN_COOKIE) ?? "";
    const pending = this.pending.get(state);
    if (
      pending === undefined ||
      bound === "" ||
      !sameText(bound, state) ||
      pending.until < Date.now()
    ) {
      throw new McpfleetError(
        "ERR_UNAUTHORIZED",
        "this sign-in was not started here or took too long; sign in again",
      );
    }
    this.pending.delete(state);
    if (q.code === undefined) {
      throw new McpfleetError(
        "ERR_UNAUTHORIZED",
        `the identity provider refused the sign-in: ${q.error_description ?? q.error ?? "no code"}`,
      );
    }
    const ep = await this.discover();
    const form = {
      grant_type: "authorization_code",
      code: q.code,
      redirect_uri: this.redirectUri(req),
      code_verifier: pending.verifier,
      client_id: this.settings.clientId,
      resource: this.settings.audience,
    };
    const secret = this.settings.clientSecret;
    const res = await providerRequest(ep.token, this.settings.http, {
      method: "POST",
      form,
      ...(secret !== undefined
        ? { basic: [this.settings.clientId, secret] as [string, string] }
        : {}),
    }).catch((err: unknown) => {
      req.log.warn({ err }, "ui sign-in: token request failed");
      throw new McpfleetError("ERR_UNAUTHORIZED", "the identity provider issued no access token");
    });
    const tokens = (res.body ?? {}) as Record<string, unknown>;
    const token = tokens.access_token;
    if (res.status !== 200 || typeof token !== "string") {
      req.log.warn({ status: res.status, error: tokens.error }, "ui sign-in: token request failed");
      throw new McpfleetError("ERR_UNAUTHORIZED", "the identity provider issued no access token");
    }
    // The token must be one the API accepts; its claims decide what the person sees.
    const principal = await this.authorizer.authenticate(bearerRequest(token));
    const ttl = typeof tokens.expires_in === "number" ? tokens.expires_in * 1000 : MAX_SESSION_MS;
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.clear();
    const id = random();
    this.sessions.set(id, {
      token,
      csrf: random(),
      until: Date.now() + Math.min(ttl, MAX_SESSION_MS),
      ...(principal.subject !== undefined ? { subject: principal.subject } : {}),
    });
    return reply
      .header("set-cookie", [
        this.cookie(req, SESSION_COOKIE, id, Math.floor(Math.min(ttl, MAX_SESSION_MS) / 1000)),
        this.cookie(req, LOGIN_COOKIE, "", 0),
      ])
      .redirect(pending.redirect, 303);
  }

  private session(req: FastifyRequest): [string, Session] | undefined {
    const id = cookies(req).get(SESSION_COOKIE);
    if (id === undefined) return undefined;
    const s = this.sessions.get(id);
    if (s === undefined) return undefined;
    if (s.until < Date.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return [id, s];
  }

  /** The signed-in person (undefined: nobody, or the token no longer validates). */
  async principal(
    req: FastifyRequest,
  ): Promise<{ principal: Principal; csrf: string; subject?: string } | undefined> {
    const found = this.session(req);
    if (found === undefined) return undefined;
    const [id, s] = found;
    try {
      const principal = await this.authorizer.authenticate(bearerRequest(s.token));
      return {
        principal,
        csrf: s.csrf,
        ...(s.subject !== undefined ? { subject: s.subject } : {}),
      };
    } catch {
      this.sessions.delete(id);
      return undefined;
    }
  }

  /** Sign-out: a POST carrying the session's CSRF token ends the session. */
  signOut(req: FastifyRequest, reply: FastifyReply): FastifyReply {
    const found = this.session(req);
    const given = (req.body as Record<string, unknown> | undefined)?.csrf;
    if (found !== undefined) {
      if (typeof given !== "string" || !sameText(given, found[1].csrf)) {
        throw new McpfleetError("ERR_FORBIDDEN", "sign-out needs the form of this session");
      }
      this.sessions.delete(found[0]);
    }
    return reply
      .header("set-cookie", this.cookie(req, SESSION_COOKIE, "", 0))
      .redirect("/ui/", 303);
  }
}

/** A request carrying only a bearer token, for the Authorizer's authenticate. */
function bearerRequest(token: string): FastifyRequest {
  return { raw: { rawHeaders: ["Authorization", `Bearer ${token}`] } } as unknown as FastifyRequest;
}

// Who the caller is: the Authorization header read strictly (exactly one, `Bearer <token>`),
// then the providers in order (JWT against each provider's keys; opaque tokens through
// introspection). Validated tokens are cached until they expire, at most maxCacheMs, and the
// cache is dropped whenever a provider's key set changes (a retired key stops working at once).
import type { IncomingMessage } from "node:http";
import type { Logger } from "pino";
import { McpfleetError } from "../../errors.js";
import type { Principal } from "../http/auth.js";
import type { ProviderKeySet } from "./keys.js";
import type { TokenProvider, Validation } from "./provider.js";

/** Longest token accepted; larger ones are refused without parsing. */
export const MAX_TOKEN_LENGTH = 8192;
/** How long an introspected token is trusted before the provider is asked again (revocation). */
export const INTROSPECTION_CACHE_MS = 30_000;
const TOKEN_CHARS = /^[A-Za-z0-9\-._~+/]+=*$/;

export type OAuthErrorCode = "invalid_request" | "invalid_token";

/** A failed authentication: the RFC 6750 code for the client, the reason for the log. */
export class AuthFailure extends McpfleetError {
  constructor(
    readonly oauthError: OAuthErrorCode,
    readonly reason: string,
  ) {
    super(
      "ERR_UNAUTHORIZED",
      oauthError === "invalid_request"
        ? "send exactly one Authorization header of the form: Bearer <access token>"
        : "the access token is not valid",
    );
  }
}

/** The bearer token of a request, or an AuthFailure. */
export function bearerToken(raw: IncomingMessage): string {
  let count = 0;
  let value = "";
  const h = raw.rawHeaders;
  for (let i = 0; i < h.length; i += 2) {
    if (h[i]?.toLowerCase() === "authorization") {
      count++;
      value = h[i + 1] ?? "";
    }
  }
  if (count === 0) throw new AuthFailure("invalid_request", "no Authorization header");
  if (count > 1) throw new AuthFailure("invalid_request", "several Authorization headers");
  const m = /^Bearer +(\S+)\s*$/i.exec(value);
  if (m?.[1] === undefined) throw new AuthFailure("invalid_request", "not a Bearer credential");
  const token = m[1];
  if (token.length > MAX_TOKEN_LENGTH) {
    throw new AuthFailure("invalid_token", `token of ${token.length} characters`);
  }
  if (!TOKEN_CHARS.test(token)) throw new AuthFailure("invalid_token", "token has bad characters");
  return token;
}

interface Cached {
  principal: Principal;
  until: number;
  generations: number;
}

export class Authenticator {
  private readonly cache = new Map<string, Cached>();

  constructor(
    readonly providers: readonly TokenProvider[],
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly maxCacheMs = 5 * 60_000,
    private readonly maxCacheSize = 10_000,
  ) {
    this.keySets = [...new Set(providers.map((p) => p.keys))];
  }

  private readonly keySets: ProviderKeySet[];

  private generations(): number {
    let g = 0;
    for (const k of this.keySets) g += k.generation;
    return g;
  }

  async authenticate(raw: IncomingMessage): Promise<Principal> {
    const token = bearerToken(raw);
    const gens = this.generations();
    const hit = this.cache.get(token);
    if (hit !== undefined) {
      if (hit.until > this.now() && hit.generations === gens) return hit.principal;
      this.cache.delete(token);
    }
    const v = await this.validate(token);
    if (!v.ok) {
      this.log.warn({ reason: v.reason }, "access token refused");
      throw new AuthFailure("invalid_token", v.reason);
    }
    const principal: Principal = {
      anonymous: false,
      // Introspection answers for client-credentials tokens may carry only client_id.
      ...(typeof v.claims.sub === "string"
        ? { subject: v.claims.sub }
        : typeof v.claims.client_id === "string"
          ? { subject: v.claims.client_id }
          : {}),
      claims: v.claims,
    };
    const expMs = v.exp !== undefined ? v.exp * 1000 : this.now();
    const ttl = v.introspected === true ? INTROSPECTION_CACHE_MS : this.maxCacheMs;
    const until = Math.min(expMs, this.now() + ttl);
    if (until > this.now()) {
      if (this.cache.size >= this.maxCacheSize) this.sweep();
      // The generations after validation: a refresh during it must not bless a stale entry.
      this.cache.set(token, { principal, until, generations: this.generations() });
    }
    return principal;
  }

  private sweep(): void {
    const now = this.now();
    for (const [k, c] of this.cache) if (c.until <= now) this.cache.delete(k);
    if (this.cache.size >= this.maxCacheSize) this.cache.clear();
  }

  private async validate(token: string): Promise<Validation> {
    const reasons: string[] = [];
    const jwt = token.split(".").length === 3;
    if (jwt) {
      let iss: unknown;
      try {
        const part = token.split(".")[1] ?? "";
        iss = (JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as { iss?: unknown })
          .iss;
      } catch {
        return { ok: false, reason: "JWT payload is not JSON" };
      }
      // Only a provider whose issuer is the token's can validate it; the others are skipped.
      for (const p of this.providers) {
        if (p.config.issuerUrl !== iss) continue;
        const v = await p.verifyJwt(token);
        if (v.ok) return v;
        reasons.push(`${p.name}: ${v.reason}`);
      }
      if (reasons.length === 0)
        return {
          ok: false,
          reason: `no provider for issuer ${typeof iss === "string" ? iss.slice(0, 200) : JSON.stringify(typeof iss)}`,
        };
      return { ok: false, reason: reasons.join("; ") };
    }
    for (const p of this.providers) {
      if (p.config.introspectionUrl === undefined) continue;
      const v = await p.introspect(token);
      if (v.ok) return v;
      reasons.push(`${p.name}: ${v.reason}`);
    }
    return {
      ok: false,
      reason: reasons.join("; ") || "opaque token and no introspection endpoint",
    };
  }
}

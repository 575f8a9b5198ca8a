// One identity provider: JWT validation against its keys and RFC 7662 introspection of opaque
// tokens. Every failure is an Invalid with a reason for the server log only; callers see the
// RFC 6750 code and nothing else.
import { decodeProtectedHeader, jwtVerify, type errors as joseErrors, type JWTPayload } from "jose";
import { shownValue } from "../../json.js";
import { providerRequest, type ProviderHttpOptions } from "./fetch.js";
import { ProviderKeySet } from "./keys.js";
import { providerFile, providerHttp, type ProviderConfig } from "./oauth-settings.js";

/** Asymmetric algorithms only: never `none`, never HMAC (a public key is not a shared secret). */
export const ALLOWED_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;

export interface ValidationTuning {
  clockSkewSeconds: number;
  jwksCooldownMs: number;
  jwksMaxAgeMs: number;
  httpTimeoutMs: number;
}

export const DEFAULT_TUNING: ValidationTuning = {
  clockSkewSeconds: 30,
  jwksCooldownMs: 30_000,
  jwksMaxAgeMs: 10 * 60_000,
  httpTimeoutMs: 5_000,
};

export type Validation =
  | {
      ok: true;
      claims: Record<string, unknown>;
      provider: string;
      exp?: number;
      /** Validated by introspection (revocable at the provider: cached briefly). */
      introspected?: boolean;
    }
  | { ok: false; reason: string };

export class TokenProvider {
  readonly keys: ProviderKeySet;
  private readonly http: ProviderHttpOptions;
  private readonly clientSecret?: string;

  /**
   * `shared` holds key sets by where they come from, so providers of one issuer (say one per
   * audience) fetch and refresh its keys once.
   */
  constructor(
    readonly config: ProviderConfig,
    private readonly tuning: ValidationTuning,
    private readonly now: () => number = Date.now,
    shared: Map<string, ProviderKeySet> = new Map(),
  ) {
    this.http = {
      ...providerHttp(config, tuning.httpTimeoutMs),
      ...(config.authTokenFile !== undefined ? { authTokenFile: config.authTokenFile } : {}),
    };
    if (config.clientSecretFile !== undefined) {
      this.clientSecret = providerFile(config, "clientSecretFile", config.clientSecretFile).trim();
    }
    const keyOrigin = JSON.stringify([
      config.issuerUrl,
      config.jwksUrl,
      config.caCertPath,
      config.authTokenFile,
      config.allowPrivateIP === true,
    ]);
    const known = shared.get(keyOrigin);
    this.keys =
      known ??
      new ProviderKeySet({
        issuerUrl: config.issuerUrl,
        ...(config.jwksUrl !== undefined ? { jwksUrl: config.jwksUrl } : {}),
        http: this.http,
        cooldownMs: tuning.jwksCooldownMs,
        maxAgeMs: tuning.jwksMaxAgeMs,
        now,
      });
    shared.set(keyOrigin, this.keys);
  }

  get name(): string {
    return this.config.name;
  }

  /** Validates a JWT whose header was already decoded. */
  async verifyJwt(token: string): Promise<Validation> {
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      return { ok: false, reason: "malformed JWT header" };
    }
    if (!(ALLOWED_ALGORITHMS as readonly string[]).includes(header.alg ?? "")) {
      return { ok: false, reason: `algorithm ${shownValue(header.alg)} not allowed` };
    }
    const getKey = await this.keys.resolver();
    if (getKey === undefined) {
      return { ok: false, reason: `no keys: ${this.keys.lastError ?? "not fetched yet"}` };
    }
    if (!this.keys.hasKid(header.kid)) {
      if (!(await this.keys.refreshForUnknownKid()) || !this.keys.hasKid(header.kid)) {
        return { ok: false, reason: `unknown key id ${shownValue(header.kid)}` };
      }
    }
    const resolver = (await this.keys.resolver()) ?? getKey;
    try {
      const { payload } = await jwtVerify(token, resolver, {
        issuer: this.config.issuerUrl,
        audience: this.config.audience,
        algorithms: [...ALLOWED_ALGORITHMS],
        clockTolerance: this.tuning.clockSkewSeconds,
        currentDate: new Date(this.now()),
        requiredClaims: ["exp"],
      });
      return this.accepted(payload);
    } catch (err) {
      const e = err as joseErrors.JOSEError;
      return { ok: false, reason: `${e.code ?? "error"}: ${e.message}` };
    }
  }

  private accepted(payload: JWTPayload | Record<string, unknown>): Validation {
    const exp = typeof payload.exp === "number" ? payload.exp : undefined;
    return {
      ok: true,
      claims: payload,
      provider: this.config.name,
      ...(exp !== undefined ? { exp } : {}),
    };
  }

  /** RFC 7662 introspection of an opaque token. */
  async introspect(token: string): Promise<Validation> {
    const url = this.config.introspectionUrl;
    if (url === undefined) return { ok: false, reason: "no introspection endpoint" };
    let r;
    try {
      r = await providerRequest(url, this.http, {
        method: "POST",
        form: { token, token_type_hint: "access_token" },
        ...(this.config.clientId !== undefined
          ? { basic: [this.config.clientId, this.clientSecret ?? ""] as [string, string] }
          : {}),
      });
    } catch (err) {
      return { ok: false, reason: `introspection failed: ${(err as Error).message}` };
    }
    const b = r.body as Record<string, unknown> | null;
    if (r.status !== 200 || b === null || typeof b !== "object" || Array.isArray(b)) {
      return { ok: false, reason: `introspection answered HTTP ${r.status}` };
    }
    if (b.active !== true) return { ok: false, reason: "token not active" };
    if (b.iss !== undefined && b.iss !== this.config.issuerUrl) {
      return { ok: false, reason: `iss ${JSON.stringify(b.iss)} is not ${this.config.issuerUrl}` };
    }
    const aud = Array.isArray(b.aud) ? (b.aud as unknown[]) : [b.aud];
    if (!aud.includes(this.config.audience)) {
      return { ok: false, reason: `aud does not contain ${this.config.audience}` };
    }
    const nowS = this.now() / 1000;
    const skew = this.tuning.clockSkewSeconds;
    if (typeof b.exp !== "number" || b.exp + skew <= nowS) {
      return { ok: false, reason: "token expired or without exp" };
    }
    if (typeof b.nbf === "number" && b.nbf - skew > nowS) {
      return { ok: false, reason: "token not valid yet (nbf)" };
    }
    const v = this.accepted(b);
    return v.ok ? { ...v, introspected: true } : v;
  }
}

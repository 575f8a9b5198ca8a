// A provider's signing keys: found through OpenID discovery (unless jwksUrl is given), fetched
// on first use, kept in memory, refreshed when they are older than maxAgeMs and when a token
// names a key id we do not have, at most once per cooldownMs. Never fetched per request.
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { shownValue } from "../../json.js";
import { ProviderFetchError, providerRequest, type ProviderHttpOptions } from "./fetch.js";

export interface KeySetOptions {
  issuerUrl: string;
  jwksUrl?: string;
  http: ProviderHttpOptions;
  /** Minimum time between two fetches caused by unknown key ids or failures. */
  cooldownMs: number;
  /** Keys older than this are fetched again on the next use. */
  maxAgeMs: number;
  now?: () => number;
}

export function discoveryUrl(issuerUrl: string): string {
  return `${issuerUrl.replace(/\/+$/, "")}/.well-known/openid-configuration`;
}

export class ProviderKeySet {
  private jwks?: JSONWebKeySet;
  private getKey?: JWTVerifyGetKey;
  private fetchedAt = 0;
  private lastAttempt = Number.NEGATIVE_INFINITY;
  private inflight?: Promise<void>;
  private jwksUrl?: string;
  /** Bumped when the key set changes; validated-token caches compare it. */
  generation = 0;
  lastError?: string;

  constructor(private readonly opts: KeySetOptions) {
    if (opts.jwksUrl !== undefined) this.jwksUrl = opts.jwksUrl;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private async fetchKeys(): Promise<void> {
    this.lastAttempt = this.now();
    try {
      if (this.jwksUrl === undefined) {
        const d = await providerRequest(discoveryUrl(this.opts.issuerUrl), this.opts.http);
        const doc = d.body as { jwks_uri?: unknown; issuer?: unknown } | null;
        if (d.status !== 200 || typeof doc?.jwks_uri !== "string") {
          throw new ProviderFetchError(`discovery answered HTTP ${d.status} without jwks_uri`);
        }
        if (doc.issuer !== this.opts.issuerUrl) {
          throw new ProviderFetchError(
            `discovery names issuer ${shownValue(doc.issuer)}, not ${this.opts.issuerUrl}`,
          );
        }
        this.jwksUrl = doc.jwks_uri;
      }
      const r = await providerRequest(this.jwksUrl, this.opts.http);
      const set = r.body as JSONWebKeySet | null;
      if (r.status !== 200 || !Array.isArray(set?.keys)) {
        throw new ProviderFetchError(`JWKS answered HTTP ${r.status} without keys`);
      }
      const changed = JSON.stringify(set.keys) !== JSON.stringify(this.jwks?.keys);
      this.jwks = set;
      this.getKey = createLocalJWKSet(set);
      this.fetchedAt = this.now();
      if (changed) this.generation++;
      delete this.lastError;
    } catch (err) {
      if (this.opts.jwksUrl === undefined) delete this.jwksUrl;
      this.lastError = (err as Error).message;
      throw err;
    }
  }

  private refresh(): Promise<void> {
    this.inflight ??= this.fetchKeys().finally(() => {
      delete this.inflight;
    });
    return this.inflight;
  }

  /** Whether a fetch may happen now (rate limit on unknown key ids and failures). */
  private mayFetch(): boolean {
    return this.now() - this.lastAttempt >= this.opts.cooldownMs;
  }

  /** The key resolver; fetches when there are no keys yet or they are stale. */
  async resolver(): Promise<JWTVerifyGetKey | undefined> {
    const stale = this.getKey === undefined || this.now() - this.fetchedAt > this.opts.maxAgeMs;
    if (stale && this.mayFetch()) {
      await this.refresh().catch(() => undefined);
    }
    return this.getKey;
  }

  /** Whether the key set has a key with this id. */
  hasKid(kid: string | undefined): boolean {
    if (this.jwks === undefined) return false;
    if (kid === undefined) return true;
    return this.jwks.keys.some((k) => k.kid === kid);
  }

  /** Called on an unknown key id: fetches again unless one happened within the cooldown. */
  async refreshForUnknownKid(): Promise<boolean> {
    if (!this.mayFetch()) return false;
    const before = this.generation;
    await this.refresh().catch(() => undefined);
    return this.generation !== before;
  }
}

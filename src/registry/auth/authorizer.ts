// The Authorizer of oauth mode: the Authenticator says who the caller is, the ClaimsPolicy what
// they may do. Built from the `auth` section (oauth-settings.ts); logs, at start-up, when no
// `auth.authz` section is configured.
import type { FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { AuthConfig, Claims } from "../config/types.js";
import type { Action, Authorizer, Principal } from "../http/auth.js";
import { AuthFailure, Authenticator, type OAuthErrorCode } from "./authenticator.js";
import { ClaimsPolicy } from "./policy.js";
import { RESOURCE_METADATA_PATH, type OAuthSettings } from "./oauth-settings.js";
import { DEFAULT_TUNING, TokenProvider, type ValidationTuning } from "./provider.js";
import type { ProviderKeySet } from "./keys.js";
import { authzSettings, type Role } from "./roles.js";

export class OAuthAuthorizer implements Authorizer {
  readonly policy: ClaimsPolicy;
  readonly authenticator: Authenticator;

  constructor(
    readonly settings: OAuthSettings,
    authz: AuthConfig["authz"],
    log: Logger,
    tuning: Partial<ValidationTuning> = {},
    now: () => number = Date.now,
  ) {
    const t = { ...DEFAULT_TUNING, ...tuning };
    const keySets = new Map<string, ProviderKeySet>();
    this.policy = new ClaimsPolicy(authzSettings(authz));
    this.authenticator = new Authenticator(
      settings.providers.map((p) => new TokenProvider(p, t, now, keySets)),
      log,
      now,
    );
    if (!this.policy.enabled) {
      log.warn(
        "AUTHORIZATION IS OFF: no auth.authz section, so every authenticated caller holds superAdmin, manageSources, manageRegistries and manageEntries, and no registry, source or entry claim is checked. Add auth.authz.roles to restrict (docs/auth.md)",
      );
    }
  }

  async authenticate(req: FastifyRequest): Promise<Principal> {
    return this.authenticator.authenticate(req.raw);
  }

  authorize(principal: Principal, action: Action): void {
    this.policy.authorize(principal, action);
  }

  entryVisible(principal: Principal, entryClaims: Claims | undefined): boolean {
    return this.policy.entryVisible(principal, entryClaims);
  }

  resourceVisible(principal: Principal, claims: Claims | undefined): boolean {
    return this.policy.resourceVisible(principal, claims);
  }

  mayPublish(principal: Principal, name: string): boolean {
    return this.policy.mayPublish(principal, name);
  }

  cacheScope(principal: Principal): string {
    return this.policy.cacheScope(principal);
  }

  publicPaths(): string[] {
    return this.settings.publicPaths;
  }

  roles(principal: Principal): Role[] {
    return this.policy.roles(principal);
  }

  /** RFC 9728 protected-resource metadata. */
  resourceMetadata(): Record<string, unknown> {
    return {
      resource: this.settings.resourceUrl,
      authorization_servers: [...new Set(this.settings.providers.map((p) => p.issuerUrl))],
      scopes_supported: this.settings.scopesSupported,
      bearer_methods_supported: ["header"],
      resource_documentation: `${this.settings.resourceUrl}/openapi.json`,
    };
  }

  /** The WWW-Authenticate value of a 401. */
  challenge(error: OAuthErrorCode | undefined): string {
    const parts = [`Bearer realm="${this.settings.realm}"`];
    if (error !== undefined) {
      parts.push(`error="${error}"`);
      parts.push(
        `error_description="${error === "invalid_request" ? "a Bearer access token is required" : "the access token is not valid"}"`,
      );
    }
    parts.push(`resource_metadata="${this.settings.resourceUrl}${RESOURCE_METADATA_PATH}"`);
    return parts.join(", ");
  }
}

export { AuthFailure };

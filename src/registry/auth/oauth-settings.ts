// The oauth side of the `auth` section as the server reads it: the providers, the protected
// resource's URL and realm, and how requests to a provider are made. Apart from the token
// validation itself (provider.ts, authorizer.ts), so that a server in anonymous mode never loads
// the JOSE library.
import { readFileSync } from "node:fs";
import { McpfleetError } from "../../errors.js";
import type { AuthConfig } from "../config/types.js";
import type { ProviderHttpOptions } from "./fetch.js";

export interface ProviderConfig {
  name: string;
  issuerUrl: string;
  audience: string;
  jwksUrl?: string;
  introspectionUrl?: string;
  clientId?: string;
  clientSecretFile?: string;
  caCertPath?: string;
  authTokenFile?: string;
  allowPrivateIP?: boolean;
}

export const DEFAULT_SCOPES = ["mcp-registry:read", "mcp-registry:write"];
export const DEFAULT_REALM = "mcp-registry";
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

export interface OAuthSettings {
  resourceUrl: string;
  realm: string;
  scopesSupported: string[];
  publicPaths: string[];
  providers: ProviderConfig[];
}

/** The oauth settings of an `auth` section; throws ERR_REGISTRY_CONFIG when unusable. */
export function oauthSettings(auth: AuthConfig | undefined, where: string): OAuthSettings {
  const o: Partial<NonNullable<AuthConfig["oauth"]>> = auth?.oauth ?? {};
  const providers = (o.providers ?? []) as ProviderConfig[];
  if (!Array.isArray(providers) || providers.length === 0) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `${where}: auth.mode is oauth (the default) but auth.oauth.providers is empty: the server could authenticate no one. Configure a provider (docs/auth.md) or set auth.mode: anonymous for development`,
    );
  }
  if (typeof o.resourceUrl !== "string") {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `${where}: auth.oauth.resourceUrl is required in oauth mode`,
    );
  }
  return {
    resourceUrl: o.resourceUrl.replace(/\/+$/, ""),
    realm: typeof o.realm === "string" ? o.realm : DEFAULT_REALM,
    scopesSupported: Array.isArray(o.scopesSupported) ? o.scopesSupported : DEFAULT_SCOPES,
    publicPaths: [
      ...(auth?.publicPaths ?? []),
      ...(Array.isArray(o.publicPaths) ? o.publicPaths : []),
    ],
    providers,
  };
}

/** A file a provider's config names; a failure names the provider and the field. */
export function providerFile(config: ProviderConfig, field: string, path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const reason =
      (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message;
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `auth.oauth.providers "${config.name}": ${field} ${path}: ${reason}`,
      { cause: err },
    );
  }
}

/** How requests to a provider are made: its CA, its private-address allowance, a time limit. */
export function providerHttp(config: ProviderConfig, timeoutMs: number): ProviderHttpOptions {
  return {
    allowPrivateIP: config.allowPrivateIP === true,
    timeoutMs,
    maxBytes: 1024 * 1024,
    ...(config.caCertPath !== undefined
      ? { ca: providerFile(config, "caCertPath", config.caCertPath) }
      : {}),
  };
}

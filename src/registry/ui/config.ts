// The `ui` section of the config turned into what the catalog plugin needs: whether it is on,
// and the sign-in settings against the chosen provider of auth.oauth.
import { McpfleetError } from "../../errors.js";
import type { LoadedConfig } from "../config/types.js";
import { readSecretFile } from "../config/secrets.js";
import { isAbsolute, join } from "node:path";
import { providerHttp } from "../auth/oauth-settings.js";
import type { SignInSettings } from "./session.js";

/** Time limit of the sign-in's discovery and token requests. */
const SIGN_IN_TIMEOUT_MS = 10_000;

export interface UiSettings {
  enabled: boolean;
  signIn?: SignInSettings;
}

export function uiSettings(loaded: LoadedConfig): UiSettings {
  const ui = loaded.config.ui;
  if (ui === false || (typeof ui === "object" && ui.enabled === false)) return { enabled: false };
  const sign = typeof ui === "object" ? ui.signIn : undefined;
  if (sign === undefined) return { enabled: true };
  const oauth = loaded.config.auth?.oauth;
  const providers = oauth?.providers ?? [];
  const provider =
    sign.provider === undefined ? providers[0] : providers.find((p) => p.name === sign.provider);
  if (loaded.config.auth?.mode === "anonymous" || provider === undefined) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `${loaded.path}: ui.signIn needs auth.mode oauth with ${sign.provider !== undefined ? `a provider named "${sign.provider}"` : "a provider"} in auth.oauth.providers`,
    );
  }
  const secretPath =
    sign.clientSecretFile === undefined
      ? undefined
      : isAbsolute(sign.clientSecretFile)
        ? sign.clientSecretFile
        : join(loaded.baseDir, sign.clientSecretFile);
  const resource = oauth?.resourceUrl?.replace(/\/+$/, "");
  const redirectUrl =
    sign.redirectUrl ?? (resource !== undefined ? `${resource}/ui/callback` : undefined);
  return {
    enabled: true,
    signIn: {
      issuerUrl: provider.issuerUrl,
      // The provider's own CA and address rules; no service-account token on sign-in requests.
      http: providerHttp(provider, SIGN_IN_TIMEOUT_MS),
      audience: provider.audience,
      clientId: sign.clientId,
      scopes: sign.scopes ?? ["mcp-registry:read"],
      ...(secretPath !== undefined ? { clientSecret: readSecretFile(secretPath) } : {}),
      ...(redirectUrl !== undefined ? { redirectUrl } : {}),
    },
  };
}

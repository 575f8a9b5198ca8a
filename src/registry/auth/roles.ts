// Role resolution from the caller's claims and `auth.authz.roles`.
import type { AuthConfig, Claims } from "../config/types.js";
import { matchesRule } from "./claims.js";

export const ROLE_NAMES = [
  "superAdmin",
  "manageSources",
  "manageRegistries",
  "manageEntries",
] as const;
export type Role = (typeof ROLE_NAMES)[number];

export type RoleRules = Partial<Record<Role, Claims[]>>;

/** The `auth.authz` section as the server uses it; undefined when the section is absent. */
export interface AuthzSettings {
  roles: RoleRules;
  /** Who may publish under which name prefix (absent: any name). */
  publishNamespaces?: { prefix: string; claims?: Claims }[];
}

/**
 * The roles a caller holds. Without an `auth.authz` section every authenticated caller holds
 * all four (and, elsewhere, no claim filtering happens): see docs/auth.md.
 */
export function resolveRoles(
  caller: Record<string, unknown>,
  authz: AuthzSettings | undefined,
): Role[] {
  if (authz === undefined) return [...ROLE_NAMES];
  return ROLE_NAMES.filter((r) => matchesRule(caller, authz.roles[r]));
}

/** Reads `auth.authz` from the (schema-validated) configuration. */
export function authzSettings(raw: AuthConfig["authz"]): AuthzSettings | undefined {
  if (raw === undefined) return undefined;
  const roles = (raw.roles ?? {}) as RoleRules;
  return raw.publishNamespaces === undefined
    ? { roles }
    : { roles, publishNamespaces: raw.publishNamespaces as AuthzSettings["publishNamespaces"] };
}

// Claim matching, one rule set for the whole server. A resource's claims (a source, registry,
// entry or role rule) are a map of key to a string or a list of strings; a caller's claims are
// whatever the access token carried. A resource key is satisfied when the caller has the key
// and holds the value: a caller value that is a list holds every one of its elements. A
// resource value that is a list requires the caller to hold every element of it.
import type { Claims } from "../config/types.js";

/** Whether the caller's claim value holds one required value. */
function holds(callerValue: unknown, required: string): boolean {
  if (typeof callerValue === "string") return callerValue === required;
  if (Array.isArray(callerValue)) return callerValue.some((v) => v === required);
  return false;
}

/**
 * Claim containment: every key of `resource` is present in `caller` with a matching value.
 * An empty or absent resource map is contained by every caller.
 */
export function containsClaims(
  caller: Record<string, unknown>,
  resource: Claims | undefined,
): boolean {
  if (resource === undefined) return true;
  for (const [key, value] of Object.entries(resource)) {
    if (!Object.hasOwn(caller, key)) return false;
    const have = caller[key];
    if (Array.isArray(value)) {
      if (value.length === 0 || !value.every((v) => holds(have, v))) return false;
    } else if (!holds(have, value)) {
      return false;
    }
  }
  return true;
}

/** Whether a map carries at least one claim. */
export function hasClaims(claims: Claims | undefined): claims is Claims {
  return claims !== undefined && Object.keys(claims).length > 0;
}

/**
 * Role rule matching: a role is a list of claim maps; the caller holds it when any map
 * matches (OR) and a map matches when all its pairs match (AND). An empty map would match
 * everyone, so it matches no one: granting a role to every caller is said by omitting authz.
 */
export function matchesRule(
  caller: Record<string, unknown>,
  rules: readonly Claims[] | undefined,
): boolean {
  if (rules === undefined) return false;
  return rules.some((rule) => hasClaims(rule) && containsClaims(caller, rule));
}

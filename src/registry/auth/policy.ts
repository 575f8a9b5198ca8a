// The authorization decisions of oauth mode: roles for writes and admin, the registry claims
// gate, the per-entry visibility filter and admin claim scoping. superAdmin bypasses every
// claim check. Without an `auth.authz` section every authenticated caller holds every role and
// nothing is filtered (docs/auth.md).
import { createHash } from "node:crypto";
import { McpfleetError } from "../../errors.js";
import type { Claims } from "../config/types.js";
import type { Action, Principal } from "../http/auth.js";
import { containsClaims, hasClaims } from "./claims.js";
import { resolveRoles, type AuthzSettings, type Role } from "./roles.js";

/** The roles of which an action needs one. */
const ROLES_OF: Record<Action["kind"], Role[] | undefined> = {
  readRegistry: undefined,
  manageEntries: ["manageEntries"],
  manageSources: ["manageSources"],
  manageRegistries: ["manageRegistries"],
  listRegistries: ["manageRegistries", "manageEntries"],
};

export class ClaimsPolicy {
  // Principals of cached tokens are reused across requests, so these are computed once each.
  private readonly roleCache = new WeakMap<Principal, Role[]>();
  private readonly scopeCache = new WeakMap<Principal, string>();

  constructor(readonly authz: AuthzSettings | undefined) {}

  /** Whether claim checks apply at all (an `auth.authz` section is configured). */
  get enabled(): boolean {
    return this.authz !== undefined;
  }

  roles(p: Principal): Role[] {
    if (p.anonymous) return [];
    let r = this.roleCache.get(p);
    if (r === undefined) {
      r = resolveRoles(p.claims, this.authz);
      this.roleCache.set(p, r);
    }
    return r;
  }

  private bypass(p: Principal): boolean {
    return !this.enabled || this.roles(p).includes("superAdmin");
  }

  authorize(p: Principal, action: Action): void {
    const needed = ROLES_OF[action.kind];
    if (needed !== undefined) {
      if (p.anonymous) {
        throw new McpfleetError("ERR_UNAUTHORIZED", "this operation needs an access token");
      }
      const roles = this.roles(p);
      if (!needed.some((r) => roles.includes(r)) && !roles.includes("superAdmin")) {
        throw new McpfleetError(
          "ERR_FORBIDDEN",
          `this operation needs the ${needed.join(" or ")} role`,
        );
      }
    }
    if (this.bypass(p)) return;
    switch (action.kind) {
      case "readRegistry":
        if (!containsClaims(p.claims, action.claims)) {
          throw new McpfleetError(
            "ERR_FORBIDDEN",
            `your claims do not grant access to registry "${action.registry}"`,
          );
        }
        return;
      case "listRegistries":
        return;
      case "manageEntries":
        // A publisher writes into a managed source only within its claims.
        if (!containsClaims(p.claims, action.sourceClaims)) {
          throw new McpfleetError(
            "ERR_FORBIDDEN",
            "your claims do not cover the managed source's claims",
          );
        }
        if (!containsClaims(p.claims, action.entryClaims)) {
          throw new McpfleetError(
            "ERR_FORBIDDEN",
            "the entry's claims must be a subset of your own claims",
          );
        }
        return;
      case "manageSources":
      case "manageRegistries":
        if (!containsClaims(p.claims, action.claims)) {
          if (action.hide === true) {
            const what = action.kind === "manageSources" ? "source" : "registry";
            throw new McpfleetError(
              action.kind === "manageSources" ? "ERR_SOURCE_NOT_FOUND" : "ERR_REGISTRY_NOT_FOUND",
              `no ${what} named "${action.name ?? ""}"`,
            );
          }
          throw new McpfleetError(
            "ERR_FORBIDDEN",
            "the claims must be a subset of your own claims",
          );
        }
        return;
    }
  }

  /** Per-entry filter: with authorization on, an entry is visible when it has claims and the caller's contain them. */
  entryVisible(p: Principal, entryClaims: Claims | undefined): boolean {
    if (this.bypass(p)) return true;
    return hasClaims(entryClaims) && containsClaims(p.claims, entryClaims);
  }

  /**
   * Whether the caller may publish a version of `name`: with `publishNamespaces` configured, a
   * namespace whose prefix (its `{claim}`s filled from the caller's claims) starts the name and
   * whose claims the caller's contain. superAdmin (and every caller without authz) may.
   */
  mayPublish(p: Principal, name: string): boolean {
    const namespaces = this.authz?.publishNamespaces;
    if (this.bypass(p) || namespaces === undefined) return true;
    return namespaces.some((ns) => {
      const prefix = expandPrefix(ns.prefix, p.claims);
      return prefix !== undefined && name.startsWith(prefix) && containsClaims(p.claims, ns.claims);
    });
  }

  /** Admin scoping: a source or registry without claims is open to every caller with the role. */
  resourceVisible(p: Principal, claims: Claims | undefined): boolean {
    return this.bypass(p) || containsClaims(p.claims, claims);
  }

  /**
   * Partition of cached consumer answers. Callers with equal claims see equal entries. The key
   * hashes every claim that matching can use (a string or a list of strings, whatever its name:
   * an entry may be published with `jti` or `nonce` claims); numeric claims such as `exp` and
   * `iat` never match anything, so leaving them out keeps one partition per caller, not per token.
   */
  cacheScope(p: Principal): string {
    // Never "" (the public partition): in oauth mode every consumer answer is for
    // authenticated callers only, so it is marked private even when all of them see the same.
    if (this.bypass(p)) return "all";
    let scope = this.scopeCache.get(p);
    if (scope !== undefined) return scope;
    const stable = Object.keys(p.claims)
      .filter((k) => matchable(p.claims[k]))
      .sort()
      .map((k) => [k, p.claims[k]]);
    scope = createHash("sha256").update(JSON.stringify(stable)).digest("base64url").slice(0, 22);
    this.scopeCache.set(p, scope);
    return scope;
  }
}

/** Whether a caller's claim value can satisfy a resource claim (see containsClaims). */
function matchable(v: unknown): boolean {
  return typeof v === "string" || (Array.isArray(v) && v.some((x) => typeof x === "string"));
}

/**
 * A namespace prefix with each `{claim}` replaced by the caller's claim, or undefined when the
 * caller lacks one or its value could reach outside a name segment (only letters, digits, `.`,
 * `_` and `-`: `{login}` of "acme/x" must not grant `io.github.acme/x...`).
 */
function expandPrefix(prefix: string, claims: Record<string, unknown>): string | undefined {
  let missing = false;
  const out = prefix.replace(/\{([^{}]+)\}/g, (_m, key: string) => {
    const v = claims[key];
    if (typeof v !== "string" || !/^[A-Za-z0-9._-]+$/.test(v)) {
      missing = true;
      return "";
    }
    return v;
  });
  return missing ? undefined : out;
}

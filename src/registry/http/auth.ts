// The seam where authentication and authorization plug in. The server asks an Authorizer who
// the caller is (once per request, in an onRequest hook) and whether the caller may do each
// operation. Anonymous mode uses AllowAllAuthorizer; the OAuth and claims implementation
// replaces it without touching the routes.
import type { FastifyRequest } from "fastify";
import type { Claims } from "../config/types.js";

export interface Principal {
  anonymous: boolean;
  subject?: string;
  /** The caller's token claims (empty when anonymous). */
  claims: Record<string, unknown>;
}

export type Action =
  | { kind: "readRegistry"; registry: string; claims?: Claims }
  | {
      kind: "manageEntries";
      /** The registry published through (absent: the server's managed source directly). */
      registry?: string;
      entryClaims?: Claims;
      /** The managed source's claims: a publisher must cover them (403 otherwise). */
      sourceClaims?: Claims;
    }
  /** Listing registries: manageRegistries, or manageEntries (writers see where to publish). */
  | { kind: "listRegistries" }
  | { kind: "manageSources"; claims?: Claims; hide?: boolean; name?: string }
  | { kind: "manageRegistries"; claims?: Claims; hide?: boolean; name?: string };
// `hide`: the resource exists and `claims` are its own; when the caller's claims do not contain
// them the answer is the resource's 404, not 403, so its existence is not disclosed.

export interface Authorizer {
  /** Identifies the caller; throws an ERR_UNAUTHORIZED McpfleetError when it cannot. */
  authenticate(req: FastifyRequest): Promise<Principal>;
  /** Throws ERR_FORBIDDEN (or ERR_*_NOT_FOUND to hide existence) when not permitted. */
  authorize(principal: Principal, action: Action): void;
  /** Whether an entry with these claims is visible to the caller. */
  entryVisible(principal: Principal, entryClaims: Claims | undefined): boolean;
  /** Whether the caller may publish under `name` (auth.authz.publishNamespaces). */
  mayPublish(principal: Principal, name: string): boolean;
  /** Whether a source or registry with these claims shows in the caller's admin lists. */
  resourceVisible(principal: Principal, claims: Claims | undefined): boolean;
  /**
   * Partition key for cached consumer responses: callers with the same key see the same
   * entries. "" means one shared, public partition.
   */
  cacheScope(principal: Principal): string;
  /** Paths reachable without authentication (exact paths or prefixes ending in `*`). */
  publicPaths(): string[];
}

export const ANONYMOUS: Principal = { anonymous: true, claims: {} };

/** Anonymous mode: no authentication, every check passes, every entry is visible. */
export class AllowAllAuthorizer implements Authorizer {
  authenticate(): Promise<Principal> {
    return Promise.resolve(ANONYMOUS);
  }
  authorize(): void {}
  entryVisible(): boolean {
    return true;
  }
  resourceVisible(): boolean {
    return true;
  }
  mayPublish(): boolean {
    return true;
  }
  cacheScope(): string {
    return "";
  }
  publicPaths(): string[] {
    return ["*"];
  }
}

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
  }
}

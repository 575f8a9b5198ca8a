// Who the caller is, once per request before routing: the Authorizer's principal, or an
// anonymous one on a public path. Also refuses a URL holding a NUL before any route sees it.
import { McpfleetError } from "../../errors.js";
import type { Authorizer } from "./auth.js";
import { serverWide } from "./server-wide.js";

// The spec's public paths. /metrics is not among them: in oauth mode it needs a token unless
// auth.publicPaths lists it (as scrapers usually need).
const ALWAYS_PUBLIC = [
  "/health",
  "/v0.1/health",
  "/v0/health",
  "/readiness",
  "/version",
  "/openapi.json",
];

/**
 * Whether a request path is reachable without authentication. Only canonical paths can be
 * public: a path with percent-encoding, empty or dot segments (`%2e`, `//`, `/./`, `/../`) is
 * always authenticated, so no spelling of a protected route slips through as a public one.
 */
function isPublic(path: string, extra: string[]): boolean {
  if (path.includes("%") || path.includes("//") || /\/\.\.?(\/|$)/.test(path)) return false;
  if (ALWAYS_PUBLIC.includes(path) || path.startsWith("/.well-known/")) return true;
  return extra.some(
    (p) => p === "*" || (p.endsWith("*") ? path.startsWith(p.slice(0, -1)) : p === path),
  );
}

export interface AuthenticationOptions {
  authorizer: Authorizer;
  /** Paths public besides the spec's own (auth.publicPaths, the catalog's pages). */
  extraPublic: string[];
}

export const authentication = serverWide<AuthenticationOptions>(async (app, opts) => {
  app.decorateRequest("principal", null as never);
  app.addHook("onRequest", async (req) => {
    const path = req.url.split("?")[0] ?? "/";
    req.principal = isPublic(path, opts.extraPublic)
      ? { anonymous: true, claims: {} }
      : await opts.authorizer.authenticate(req);
    // The store cannot hold U+0000, and no name, version or parameter contains one.
    if (/%00/i.test(req.url) || req.url.includes("\u0000")) {
      throw new McpfleetError("ERR_INVALID_PARAMETER", "the request URL contains a NUL character");
    }
  });
  return Promise.resolve();
});

// Answers for requests no route takes: 405 with `Allow` (RFC 9110) when the path is known under
// other methods, 404 otherwise. Registered before the routes, so it sees each one added, and
// before authentication, so its 405 comes first.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { problemOf, sendProblem } from "./problem.js";
import { serverWide } from "./server-wide.js";

/** A route's path as a pattern of request paths: a parameter is one segment, `*` the rest. */
function routePattern(url: string): RegExp {
  const segs = url
    .split("/")
    .map((seg) =>
      seg === "*"
        ? ".*"
        : seg.startsWith(":")
          ? "[^/]+"
          : seg.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
    );
  return new RegExp(`^${segs.join("/")}$`);
}

/** The request's path, without its query. */
const pathOf = (req: FastifyRequest): string => req.url.split("?")[0] ?? "";

export const notFound: FastifyPluginAsync = serverWide(async (app) => {
  // Every route's path and methods. Only the path as routed: with a trailing slash or an empty
  // parameter (`/v1/sources/`) it is still 404, as the route the client meant says.
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    routes.push({ pattern: routePattern(route.url), methods });
  });
  const allowedMethods = (path: string): string[] => {
    const out = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) out.add(m);
    return [...out].sort();
  };
  const answer = (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = pathOf(req);
    const allow = allowedMethods(path);
    if (allow.length > 0) {
      return sendProblem(
        reply.header("allow", allow.join(", ")),
        problemOf(
          "ERR_METHOD_NOT_ALLOWED",
          `${path} answers ${allow.join(", ")}, not ${req.method}`,
          path,
        ),
      );
    }
    return sendProblem(
      reply,
      problemOf("ERR_NOT_FOUND", `no route for ${req.method} ${path}`, path),
    );
  };
  // A known path under another method is answered 405 before authentication (this hook runs
  // before its own): which methods a path takes is public, in the OpenAPI document, so a
  // caller without a token learns nothing from it. Unknown paths are 404 only after it.
  app.addHook("onRequest", (req, reply, done) => {
    if (req.is404 && allowedMethods(pathOf(req)).length > 0) {
      void answer(req, reply);
      return;
    }
    done();
  });
  // Answered before the body is read: a request no route takes gets its 404 whatever it sends
  // (a QUERY without Content-Type, a body of any type or size), after authentication.
  app.addHook("preParsing", (req, reply, payload, done) => {
    if (req.is404) {
      void answer(req, reply);
      return;
    }
    done(null, payload);
  });
  app.setNotFoundHandler((req, reply) => answer(req, reply));
  return Promise.resolve();
});

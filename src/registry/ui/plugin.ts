// The web catalog: a Fastify plugin serving /ui/ (and sending a browser that asks for / there).
// Pages are rendered from the store through the same Authorizer as the API: a person sees the
// registries and entries the API would show the same caller.
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { isMcpfleetError, McpfleetError } from "../../errors.js";
import { ANONYMOUS, type Principal } from "../http/auth.js";
import { claimsOf, readableRegistry, type RouteContext } from "../http/context.js";
import { problemOf, sendProblem } from "../http/problem.js";
import { CatalogCache, parseFilters, RenderCache, selectPage } from "./catalog.js";
import type { Html } from "./html.js";
import type { RegistryRecord } from "../store/store.js";
import type { UiSettings } from "./config.js";
import {
  catalogMain,
  catalogPage,
  messagePage,
  operatorsPage,
  serverPage,
  type Viewer,
} from "./pages.js";
import { SignIn } from "./session.js";
import { APP_CSS, APP_JS } from "./static.js";

export interface UiOptions extends RouteContext {
  ui: UiSettings;
}

/** Paths the API's authentication leaves to the catalog, which signs people in itself. */
export const UI_PUBLIC_PATHS = ["/", "/ui", "/ui/*"];

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

interface Caller {
  principal: Principal;
  viewer: Viewer;
}

function wantsHtml(req: FastifyRequest): boolean {
  return (req.headers.accept ?? "").includes("text/html");
}

type Query = { Querystring: Record<string, string | undefined> };

function page(reply: FastifyReply, body: string, status = 200): FastifyReply {
  return reply
    .code(status)
    .header("content-type", "text/html; charset=utf-8")
    .header("cache-control", "no-store")
    .send(body);
}

function staticAsset(reply: FastifyReply, type: string, body: string): FastifyReply {
  return reply
    .header("content-type", `${type}; charset=utf-8`)
    .header("cache-control", "public, max-age=86400")
    .send(body);
}

/** The catalog's pages, with the caches and sign-in they share. */
class CatalogSite {
  private readonly catalog: CatalogCache;
  private readonly rendered: RenderCache<Html>;
  private readonly registries: RenderCache<RegistryRecord[]>;
  readonly signIn: SignIn | undefined;
  private readonly anonymousMode: boolean;

  constructor(private readonly ctx: UiOptions) {
    this.catalog = new CatalogCache(ctx.store);
    this.rendered = new RenderCache<Html>(ctx.store);
    this.registries = new RenderCache<RegistryRecord[]>(ctx.store);
    this.signIn =
      ctx.ui.signIn !== undefined ? new SignIn(ctx.ui.signIn, ctx.authorizer) : undefined;
    this.anonymousMode = ctx.authorizer.publicPaths().includes("*");
  }

  private async callerOf(req: FastifyRequest): Promise<Caller> {
    const { authorizer } = this.ctx;
    let principal: Principal = ANONYMOUS;
    let signedIn = false;
    let csrf: string | undefined;
    let subject: string | undefined;
    if (req.headers.authorization !== undefined) {
      // A caller with a token (a script, the bench) sees what that token sees.
      principal = await authorizer.authenticate(req);
    } else if (this.signIn !== undefined) {
      const s = await this.signIn.principal(req);
      if (s !== undefined) {
        principal = s.principal;
        signedIn = true;
        csrf = s.csrf;
        subject = s.subject ?? s.principal.subject;
      }
    }
    const can = (kind: "manageSources" | "manageRegistries"): boolean => {
      try {
        authorizer.authorize(principal, { kind });
        return true;
      } catch {
        return false;
      }
    };
    const viewer: Viewer = {
      signInAvailable: this.signIn !== undefined,
      signedIn,
      operator: can("manageSources") || can("manageRegistries"),
      ...(csrf !== undefined ? { csrf } : {}),
      ...(subject !== undefined ? { subject } : {}),
    };
    return { principal, viewer };
  }

  /**
   * The caller, or undefined once the sign-in page has been sent: without a signed-in person
   * in oauth mode there is nothing to show but the sign-in.
   */
  private async signedInCaller(req: FastifyRequest, reply: FastifyReply) {
    const c = await this.callerOf(req);
    if (this.anonymousMode || !c.principal.anonymous) return c;
    page(
      reply,
      messagePage(
        c.viewer,
        "Sign in",
        this.signIn !== undefined
          ? "This registry shows its servers to signed-in people only."
          : "This registry needs an access token; the catalog has no sign-in configured (ui.signIn).",
        true,
      ),
      401,
    );
    return undefined;
  }

  private async readableRegistries(principal: Principal): Promise<string[]> {
    const { store, authorizer } = this.ctx;
    let all = this.registries.get("");
    if (all === undefined) {
      const gen = store.generation;
      all = await store.listRegistries();
      this.registries.put("", gen, all);
    }
    return all
      .filter((r) => {
        try {
          authorizer.authorize(principal, {
            kind: "readRegistry",
            registry: r.name,
            ...(r.claims !== undefined ? { claims: r.claims } : {}),
          });
          return true;
        } catch {
          return false;
        }
      })
      .map((r) => r.name)
      .sort();
  }

  /** Any failure as a page: its own message for a client error, none for a server one. */
  errorPage(err: Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
    const status = isMcpfleetError(err) ? err.status : 500;
    if (status >= 500) req.log.error({ err }, "ui request failed");
    const viewer = { signInAvailable: this.signIn !== undefined, signedIn: false, operator: false };
    const text = status >= 500 ? "The server failed to answer; see its log." : err.message;
    const title = status === 404 ? "Not found" : "Cannot show this";
    return page(reply, messagePage(viewer, title, text, status === 401), status);
  }

  async catalogPage(req: FastifyRequest<Query>, reply: FastifyReply): Promise<FastifyReply> {
    const { store, authorizer } = this.ctx;
    const c = await this.signedInCaller(req, reply);
    if (c === undefined) return reply;
    const names = await this.readableRegistries(c.principal);
    const wanted = req.query.registry;
    const name = wanted !== undefined && wanted !== "" ? wanted : names[0];
    if (name === undefined) {
      return page(reply, messagePage(c.viewer, "Catalog", "No registry is open to you."));
    }
    const reg = await readableRegistry(this.ctx, c.principal, name);
    const f = parseFilters(req.query);
    // Callers of one cache scope see the same entries and registries: the content is shared.
    const key = `${authorizer.cacheScope(c.principal)}\0${reg.name}\0${JSON.stringify(f)}`;
    let main = this.rendered.get(key);
    if (main === undefined) {
      const gen = store.generation;
      const all = await this.catalog.summaries(reg.name, reg.sources);
      const result = selectPage(all, (claims) => authorizer.entryVisible(c.principal, claims), f);
      main = catalogMain(names, reg.name, f, result);
      this.rendered.put(key, gen, main);
    }
    return page(reply, catalogPage(c.viewer, main));
  }

  async serverPage(req: FastifyRequest<Query>, reply: FastifyReply): Promise<FastifyReply> {
    const { store, authorizer } = this.ctx;
    const c = await this.signedInCaller(req, reply);
    if (c === undefined) return reply;
    const { registry, name, version } = req.query;
    if (registry === undefined || name === undefined || name.length > 200) {
      throw new McpfleetError("ERR_INVALID_PARAMETER", "the address needs a registry and a name");
    }
    const reg = await readableRegistry(this.ctx, c.principal, registry);
    const list = (await store.listVersions(reg.sources, name, { includeDeleted: true })).filter(
      (e) => authorizer.entryVisible(c.principal, e.claims),
    );
    if (list.length === 0) {
      throw new McpfleetError(
        "ERR_SERVER_NOT_FOUND",
        `registry "${reg.name}" has no server "${name}"`,
      );
    }
    // listVersions gives the highest version first: the newest.
    const shown =
      version !== undefined
        ? list.find((e) => e.version === version)
        : (list.find((e) => e.isLatest) ?? list[0]);
    if (shown === undefined) {
      throw new McpfleetError(
        "ERR_VERSION_NOT_FOUND",
        `server "${name}" has no version "${version}"`,
      );
    }
    return page(reply, serverPage(c.viewer, reg.name, list, shown));
  }

  async operatorsPage(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const { store, authorizer } = this.ctx;
    const c = await this.signedInCaller(req, reply);
    if (c === undefined) return reply;
    if (!c.viewer.operator) {
      throw new McpfleetError(
        "ERR_FORBIDDEN",
        "the operators' view needs the manageSources or manageRegistries role",
      );
    }
    const [sources, status, registries] = await Promise.all([
      store.listSources(),
      store.listStatus(),
      store.listRegistries(),
    ]);
    return page(
      reply,
      operatorsPage(
        c.viewer,
        sources
          .filter((s) => authorizer.resourceVisible(c.principal, claimsOf(s.config.claims)))
          .map((source) => ({ source, status: status.get(source.name) })),
        registries
          .filter((r) => authorizer.resourceVisible(c.principal, r.claims))
          .map((r) => ({ ...r })),
      ),
    );
  }
}

/** What every page of the catalog shares: out of the API document, forms, security headers. */
function pageSettings(app: FastifyInstance): void {
  // Pages, not API operations: they stay out of /openapi.json.
  app.addHook("onRoute", (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: 4096 },
    (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );
  app.addHook("onSend", async (_req, reply, payload) => {
    reply
      .header("content-security-policy", CSP)
      .header("x-content-type-options", "nosniff")
      .header("x-frame-options", "DENY")
      .header("referrer-policy", "same-origin")
      .header("cross-origin-opener-policy", "same-origin");
    return payload;
  });
}

export const uiRoutes: FastifyPluginCallback<UiOptions> = (app, ctx, done) => {
  const site = new CatalogSite(ctx);
  const signIn = site.signIn;
  pageSettings(app);
  app.setErrorHandler(async (err: Error, req, reply) => site.errorPage(err, req, reply));
  app.get("/", async (req, reply) => {
    if (wantsHtml(req)) return reply.redirect("/ui/", 302);
    return sendProblem(reply, problemOf("ERR_NOT_FOUND", "no route for GET /", req.url));
  });
  app.get("/ui/static/app.js", async (_req, reply) =>
    staticAsset(reply, "text/javascript", APP_JS),
  );
  app.get("/ui/static/app.css", async (_req, reply) => staticAsset(reply, "text/css", APP_CSS));
  app.get<Query>("/ui", (req, reply) => site.catalogPage(req, reply));
  app.get<Query>("/ui/server", (req, reply) => site.serverPage(req, reply));
  app.get("/ui/operators", (req, reply) => site.operatorsPage(req, reply));
  app.get("/ui/login", async (req, reply) => {
    if (signIn === undefined) throw new McpfleetError("ERR_NOT_FOUND", "sign-in is not configured");
    return signIn.start(req, reply, "/ui/");
  });
  app.get("/ui/callback", async (req, reply) => {
    if (signIn === undefined) throw new McpfleetError("ERR_NOT_FOUND", "sign-in is not configured");
    return signIn.finish(req, reply);
  });
  app.post("/ui/logout", async (req, reply) => {
    if (signIn === undefined) return reply.redirect("/ui/", 303);
    return signIn.signOut(req, reply);
  });
  done();
};

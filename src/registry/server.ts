// The registry server: config -> store -> sources (scheduler) -> HTTP. Start with
// RegistryServer.start; close() stops accepting, finishes in-flight requests, stops the syncs
// and closes the store.
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { pino, type Logger } from "pino";
import { parseDuration } from "../duration.js";
import type { KubeClient } from "../infra/kube/client.js";
import { sourceKind, type LoadedConfig } from "./config/types.js";
import { oauthSettings } from "./auth/oauth-settings.js";
import type { ValidationTuning } from "./auth/provider.js";
import { AllowAllAuthorizer, type Authorizer } from "./http/auth.js";
import { RegistryMetrics } from "./http/metrics.js";
import { buildHttpServer } from "./http/server.js";
import { uiSettings } from "./ui/config.js";
import { locationPolicy } from "./sources/location.js";
import { SyncScheduler } from "./sources/scheduler.js";
import { DEFAULT_MAX_META_SIZE, openStore } from "./store/open.js";
import type { Store } from "./store/store.js";

export interface ServeSettings {
  address?: string;
  port?: number;
  /** Largest request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Time limit of one request in milliseconds (default 30 s; 0: none). */
  requestTimeoutMs?: number;
  /** How often writes by other replicas are looked for, in milliseconds (default 1000). */
  generationPollMs?: number;
  /** Where git sources keep their clones. */
  cacheDir?: string;
  log?: Logger;
  /** Replaces the authorizer chosen from `auth` (the OAuth implementation plugs in here). */
  authorizer?: Authorizer;
  /** Token validation tuning of oauth mode (clock skew, JWKS refresh limits, time limits). */
  authTuning?: Partial<ValidationTuning>;
  env?: NodeJS.ProcessEnv;
  /** Cluster access of kubernetes sources (default: in-cluster or $KUBECONFIG). */
  kubeClient?: () => KubeClient;
  /** How long /readiness waits for the first syncs, in milliseconds (default 120 s). */
  firstSyncDeadlineMs?: number;
}

async function chooseAuthorizer(
  loaded: LoadedConfig,
  log: Logger,
  tuning: Partial<ValidationTuning> | undefined,
): Promise<Authorizer> {
  const auth = loaded.config.auth;
  if (auth?.mode === "anonymous") return new AllowAllAuthorizer();
  const settings = oauthSettings(auth, loaded.path);
  const skew = auth?.oauth?.clockSkew;
  const configured =
    typeof skew === "string" ? { clockSkewSeconds: parseDuration(skew) / 1000 } : {};
  // Loaded in oauth mode only: token validation brings the JOSE library.
  const { OAuthAuthorizer } = await import("./auth/authorizer.js");
  return new OAuthAuthorizer(settings, auth?.authz, log, {
    ...configured,
    ...tuning,
  });
}

/** Writes the sources and registries the configuration file declares into the store. */
async function applyConfigResources(store: Store, cfg: LoadedConfig["config"]): Promise<void> {
  await store.applyConfigResources(
    cfg.sources.map((s) => {
      const { name, ...config } = s;
      return { name, kind: sourceKind(s), config: config };
    }),
    cfg.registries.map((r) => ({
      name: r.name,
      sources: r.sources,
      ...(r.claims !== undefined ? { claims: r.claims } : {}),
    })),
  );
}

export class RegistryServer {
  private poll?: NodeJS.Timeout;
  private closing?: Promise<void>;

  private constructor(
    readonly app: FastifyInstance,
    readonly store: Store,
    readonly scheduler: SyncScheduler,
    readonly log: Logger,
    readonly url: string,
  ) {}

  static async start(loaded: LoadedConfig, settings: ServeSettings = {}): Promise<RegistryServer> {
    const log = settings.log ?? pino({ name: "mcpfleet-registry" });
    for (const w of loaded.warnings) log.warn(w);
    const authorizer =
      settings.authorizer ?? (await chooseAuthorizer(loaded, log, settings.authTuning));
    if (loaded.config.auth?.mode === "anonymous") {
      log.warn(
        "auth.mode is anonymous: every caller may read, publish and administer; never expose this server",
      );
    }
    const store = await openStore(loaded.config.database, loaded.baseDir, settings.env);
    let scheduler: SyncScheduler | undefined;
    try {
      const cfg = loaded.config;
      await applyConfigResources(store, cfg);
      const metrics = new RegistryMetrics();
      const adminPolicy = locationPolicy(cfg.adminSources, loaded.baseDir);
      scheduler = new SyncScheduler({
        adminPolicy,
        store,
        log,
        ctx: {
          baseDir: loaded.baseDir,
          cacheDir: settings.cacheDir ?? join(tmpdir(), "mcpfleet-registry-git"),
          ...(settings.kubeClient !== undefined ? { kubeClient: settings.kubeClient } : {}),
        },
        observe: (source, outcome, ms) => {
          metrics.syncs.inc({ source, outcome: outcome.outcome });
          metrics.syncSeconds.observe({ source, outcome: outcome.outcome }, ms / 1000);
        },
      });
      await scheduler.reconcile();
      // The root paths serve defaultRegistry, or the only registry there is: where clients of the
      // official registry look for the API.
      const rootRegistry =
        cfg.defaultRegistry ?? (cfg.registries.length === 1 ? cfg.registries[0]?.name : undefined);
      const app = await buildHttpServer({
        store,
        scheduler,
        authorizer,
        metrics,
        log,
        maxMetaSize: cfg.database?.maxMetaSize ?? DEFAULT_MAX_META_SIZE,
        bodyLimit: settings.bodyLimit ?? 1024 * 1024,
        requestTimeoutMs: settings.requestTimeoutMs ?? 30_000,
        locations: { policy: adminPolicy, baseDir: loaded.baseDir },
        ui: uiSettings(loaded),
        ...(rootRegistry !== undefined ? { defaultRegistry: rootRegistry } : {}),
        ...(settings.firstSyncDeadlineMs !== undefined
          ? { firstSyncDeadlineMs: settings.firstSyncDeadlineMs }
          : {}),
      });
      const url = await app.listen({
        host: settings.address ?? "127.0.0.1",
        port: settings.port ?? 8080,
      });
      const server = new RegistryServer(app, store, scheduler, log, url);
      server.pollGeneration(settings.generationPollMs ?? 1000);
      log.info({ url, store: store.driver }, "registry server listening");
      return server;
    } catch (err) {
      await scheduler?.stop();
      await store.close().catch(() => undefined);
      throw err;
    }
  }

  /** Reconciles the syncs whenever another replica changes the store's generation. */
  private pollGeneration(intervalMs: number): void {
    let lastGen = this.store.generation;
    this.poll = setInterval(() => {
      this.store
        .refreshGeneration()
        .then(async (g) => {
          if (g !== lastGen) {
            lastGen = g;
            await this.scheduler.reconcile();
          }
        })
        .catch((err: unknown) => this.log.warn({ err }, "store poll failed"));
    }, intervalMs);
    this.poll.unref();
  }

  /** Stops accepting, finishes in-flight requests, stops syncs, closes the store. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.poll !== undefined) clearInterval(this.poll);
      await this.app.close();
      await this.scheduler.stop();
      await this.store.close();
      this.log.info("registry server stopped");
    })();
    return this.closing;
  }
}

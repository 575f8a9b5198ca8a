// The GitOps controller, composed from one options object: it owns its components (the Git
// source, the target, the reconciler, the status, the operation requests, the schedule, the HTTP
// server with the push webhook, leader election) and their lifecycle. `runOnce` syncs once and
// says how it went; `start` serves until `stop`, which lets the apply stage in flight finish.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { FastifyInstance } from "fastify";
import { McpfleetError } from "../errors.js";
import type { KubeClient } from "../infra/kube/client.js";
import { GitSource, type GitAuth, type GitRevisionSpec } from "../infra/git/source.js";
import type { Applier } from "./applier.js";
import { LeaderElector } from "./leader.js";
import type { Logger } from "./logger.js";
import { OperationRequests } from "./operation-requests.js";
import { Reconciler, type SyncOutcome } from "./reconciler.js";
import { Scheduler } from "./schedule.js";
import { createControllerServer } from "./server.js";
import { ControllerStatus } from "./status.js";
import {
  type ClusterTargetOptions,
  type TargetSpec,
  admissionChecks,
  clusterClient,
  controllerNamespace,
  createApplier,
} from "./targets.js";
import { refMatcher } from "./webhook.js";

/** What the controller does, as the command line says it. */
export interface ControllerConfig {
  repo: string;
  ref: GitRevisionSpec;
  path: string;
  auth?: GitAuth;
  caFile?: string;
  sshKeyFile?: string;
  knownHostsFile?: string;
  gitTimeoutMs: number;
  cacheDir: string;
  intervalMs?: number;
  cron?: string;
  jitterMs: number;
  driftIntervalMs: number;
  once: boolean;
  target: TargetSpec;
  cluster: ClusterTargetOptions;
  dryRun: boolean;
  namespace: string;
  listen: { host: string; port: number };
  webhookSecretFile?: string;
  logFormat: "json" | "text";
  leaseDurationSeconds: number;
}

/** The configuration and what the controller is run with. */
export interface ControllerOptions extends ControllerConfig {
  log: Logger;
  /** Where the --once summary goes: success on `stdout`, failure and its errors on `stderr`. */
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** Called once the HTTP server listens (tests learn the port). */
  onListening?: (address: { host: string; port: number }) => void;
  /** How often the operation annotations are read when no watch is open (default 2 s). */
  operationsPollMs?: number;
}

/** The one line a sync ends with (--once). */
export function summary(outcome: SyncOutcome, target: string): string {
  switch (outcome.kind) {
    case "applied":
    case "dry-run": {
      const r = outcome.result;
      const verb = outcome.kind === "dry-run" ? "would apply" : "applied";
      const warned = outcome.warnings?.length ?? 0;
      return `${verb} revision ${outcome.revision.commit} (${outcome.revision.ref}) to ${target}: ${r.applied} changed, ${r.unchanged} unchanged, ${r.pruned} pruned${warned > 0 ? `; ${warned} warning(s): ${outcome.warnings!.join("; ")}` : ""}`;
    }
    case "unchanged":
      return `revision ${outcome.revision.commit} (${outcome.revision.ref}) is already applied to ${target}`;
    case "invalid":
      return `revision ${outcome.revision.commit} is invalid (${outcome.errors.length} errors); nothing was applied`;
    case "not-ready":
      return `applied revision ${outcome.revision.commit} (${outcome.revision.ref}) to ${target}, but ${outcome.notReady.length} workload(s) did not roll out: ${outcome.notReady.map((n) => `${n.object} (${n.reason})`).join(", ")}`;
    case "refused":
      return `revision ${outcome.revision.commit} was refused (${outcome.refusals.length} objects outside what this controller may apply); nothing was applied`;
    case "suspended":
      return `sync skipped: the controller is suspended (mcpfleet resume lifts it)`;
    case "failed":
      return `sync failed at ${outcome.stage}: ${outcome.message} (${outcome.code})`;
  }
}

function gitSource(opts: ControllerConfig, signal: AbortSignal): GitSource {
  return new GitSource({
    url: opts.repo,
    ref: opts.ref,
    path: opts.path,
    cacheDir: opts.cacheDir,
    ...(opts.auth !== undefined ? { auth: opts.auth } : {}),
    ...(opts.caFile !== undefined ? { caFile: opts.caFile } : {}),
    ...(opts.sshKeyFile !== undefined ? { sshKeyFile: opts.sshKeyFile } : {}),
    ...(opts.knownHostsFile !== undefined ? { knownHostsFile: opts.knownHostsFile } : {}),
    timeoutMs: opts.gitTimeoutMs,
    signal,
  });
}

/** The webhook secret, checked at start so a missing or empty file is a usage error. */
function checkSecretFile(file: string): void {
  try {
    if (readFileSync(file, "utf8").trim() === "") throw new Error("the file is empty");
  } catch (e) {
    throw new McpfleetError(
      "ERR_USAGE",
      `controller: --webhook-secret-file ${file}: ${(e as Error).message}`,
    );
  }
}

export class Controller {
  readonly status: ControllerStatus;
  private readonly opts: ControllerOptions;
  private readonly log: Logger;
  private readonly client: KubeClient | undefined;
  private readonly applier: Applier;
  private readonly source: GitSource;
  private readonly reconciler: Reconciler;
  /** Suspension, reconcile requests and the status `mcpfleet status` reads, on the inventory. */
  private readonly operations: OperationRequests | undefined;
  /** Cancels a Git fetch in flight when stopping: it has nothing to finish. */
  private readonly stopGit = new AbortController();
  /** SIGTERM lets the stage in flight finish; the end of leadership stops every write at once. */
  private stopping = false;
  /** The first sync of a leader re-checks the applied revision against the cluster's inventory. */
  private forceNext = true;
  private scheduler: Scheduler | undefined;
  private app: FastifyInstance | undefined;
  private elector: LeaderElector | undefined;

  constructor(opts: ControllerOptions) {
    this.opts = opts;
    this.log = opts.log;
    this.client = opts.target.kind === "cluster" ? clusterClient(opts.cluster) : undefined;
    this.applier = createApplier(opts.target, opts.cluster, {
      stopping: () => this.stopping,
      mayWrite: () => this.leading(),
      inputs: [opts.cacheDir],
      ...(this.client !== undefined ? { client: this.client } : {}),
      // enforceServers: each apply names the servers whose workloads it withholds.
      onImageRefused: (server, v) => this.log.warn({ server, reason: v.reason }, v.message),
    });
    this.source = gitSource(opts, this.stopGit.signal);
    this.status = new ControllerStatus(this.source.refName, this.applier.target);
    this.operations = this.operationRequests();
    const operations = this.operations;
    this.reconciler = new Reconciler({
      source: this.source,
      applier: this.applier,
      status: this.status,
      log: this.log,
      namespace: opts.namespace,
      driftIntervalMs: opts.driftIntervalMs,
      dryRun: opts.dryRun,
      admission: admissionChecks(opts.cluster),
      ...(operations !== undefined
        ? {
            suspended: () => operations.suspended(),
            appliedRevision: () => operations.appliedRevision(),
          }
        : {}),
    });
  }

  /** True while this replica may write: always, unless leader election runs and it lost. */
  private leading(): boolean {
    return this.elector?.isLeader ?? true;
  }

  private operationRequests(): OperationRequests | undefined {
    const { client, opts } = this;
    if (client === undefined || opts.dryRun) return undefined;
    return new OperationRequests({
      client,
      namespace: controllerNamespace(client, opts.cluster.namespace),
      fieldManager: opts.cluster.fieldManager,
      status: this.status,
      log: this.log,
      ...(opts.operationsPollMs !== undefined ? { pollMs: opts.operationsPollMs } : {}),
    });
  }

  /** Syncs once and reports it; resolves with the exit code (0 applied or unchanged, else 1). */
  async runOnce(): Promise<number> {
    const outcome = await this.reconciler.sync({ force: true });
    await this.operations?.record();
    this.client?.close();
    if (outcome.kind === "invalid") for (const e of outcome.errors) this.opts.stderr(e);
    const line = summary(outcome, this.applier.target);
    const ok =
      outcome.kind === "applied" ||
      outcome.kind === "dry-run" ||
      outcome.kind === "unchanged" ||
      outcome.kind === "suspended";
    if (ok) this.opts.stdout(line);
    else this.opts.stderr(line);
    return ok ? 0 : 1;
  }

  /** One scheduled sync; a failure that may pass (Git or API down) asks for a retry. */
  private async scheduledSync(): Promise<{ retry: true } | undefined> {
    if (!this.leading()) return undefined;
    // Taken before the sync: a request arriving during it forces the run queued after it.
    const force = this.forceNext;
    this.forceNext = false;
    const outcome = await this.reconciler.sync({ force });
    await this.operations?.record();
    return outcome.kind === "failed" || outcome.kind === "not-ready" ? { retry: true } : undefined;
  }

  /** A sync now, forced (a new leader, a reconcile request); resolves when it is done. */
  private syncNow(): Promise<void> {
    this.forceNext = true;
    return this.scheduler?.trigger("trigger") ?? Promise.resolve();
  }

  private server(): FastifyInstance {
    const secretFile = this.opts.webhookSecretFile;
    if (secretFile === undefined) return createControllerServer({ status: this.status });
    const app = createControllerServer({
      status: this.status,
      webhook: {
        secret: () => readFileSync(secretFile, "utf8").trim(),
        watches: refMatcher(this.opts.ref),
        onPush: (push) => {
          this.log.info({ provider: push.provider, ref: push.ref }, "push received: syncing now");
          void this.scheduler?.trigger("trigger");
        },
      },
    });
    checkSecretFile(secretFile);
    return app;
  }

  /** Several replicas are safe: only the holder of the Lease applies. */
  private leaderElector(): LeaderElector | undefined {
    const { client, opts } = this;
    if (client === undefined || opts.dryRun) return undefined;
    const seconds = opts.leaseDurationSeconds;
    return new LeaderElector(client, {
      namespace: controllerNamespace(client, opts.cluster.namespace),
      name: `${opts.cluster.fieldManager}-controller-leader`,
      identity: process.env.POD_NAME ?? `${hostname()}-${process.pid}`,
      leaseDurationSeconds: seconds,
      renewMs: Math.max(200, Math.floor((seconds * 1000) / 3)),
      log: this.log,
      // A new leader syncs at once, whatever an earlier leadership applied.
      onStarted: () => void this.syncNow(),
    });
  }

  /** Serves the endpoints and syncs on schedule, on a push and on request, until `stop`. */
  async start(): Promise<void> {
    const { opts } = this;
    this.scheduler = new Scheduler({
      ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
      ...(opts.cron !== undefined ? { cron: opts.cron } : {}),
      jitterMs: opts.jitterMs,
      // Retried with backoff before the next regular poll; an invalid revision waits for a commit.
      run: () => this.scheduledSync(),
      onError: (e) => this.log.error({}, `sync failed: ${(e as Error).message}`),
    });
    this.app = this.server();
    const address = await this.app.listen({ host: opts.listen.host, port: opts.listen.port });
    const port = Number(new URL(address).port);
    this.log.info(
      { address, ref: this.source.refName, target: this.applier.target },
      "controller started",
    );
    opts.onListening?.({ host: opts.listen.host, port });
    this.elector = this.leaderElector();
    this.elector?.start();
    this.scheduler.start();
    // A reconcile request is answered by this replica's scheduler, forced, when it leads; one
    // that stopping cut short stays pending for the next leader.
    this.operations?.start(async () => {
      if (!this.leading()) return false;
      await this.syncNow();
      return !this.stopping;
    });
  }

  /** Lets the apply stage in flight finish, then stops everything `start` started. */
  async stop(): Promise<void> {
    this.log.info({}, "stopping: letting the apply step in flight finish");
    this.stopping = true;
    this.stopGit.abort();
    await this.scheduler?.stop();
    await this.operations?.stop();
    await this.elector?.stop({ release: true });
    this.client?.close();
    await this.app?.close();
    this.log.info({}, "stopped");
  }
}

// `mcpfleet controller`: GitOps from a Git repository. Watches a branch, tag or commit; on each
// new revision validates, synthesizes and hands the objects to the target (a directory of
// manifests, or a cluster). Runs once with --once, else serves /healthz, /readyz, /metrics and
// the push webhook until SIGTERM, which lets the sync in flight finish.
import { readFileSync } from "node:fs";
import { homedir, hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { McpfleetError } from "../errors.js";
import { parseCommandArgs, usageError } from "./args.js";
import { GitSource, type GitAuth, type GitRevisionSpec } from "../infra/git/source.js";
import { isSshUrl } from "../infra/git/ssh.js";
import { Reconciler, type Logger, type SyncOutcome } from "../controller/reconciler.js";
import { Scheduler, checkCron, parseInterval } from "../controller/schedule.js";
import { createControllerServer, parseListen } from "../controller/server.js";
import { ControllerStatus } from "../controller/status.js";
import {
  type ClusterTargetOptions,
  type TargetSpec,
  admissionChecks,
  clusterClient,
  controllerNamespace,
  createApplier,
  parseTarget,
} from "../controller/targets.js";
import { refMatcher } from "../controller/webhook.js";
import { LeaderElector } from "../controller/leader.js";
import { OperationRequests } from "../controller/operation-requests.js";
import { parseServiceAccount } from "../controller/impersonation.js";
import { checkNamespaceName, parseNamespaceAllow } from "../controller/tenancy.js";

const USAGE = `Usage: mcpfleet controller --repo URL [options]

Watches a Git repository and, on each new revision, validates the resources under --path,
synthesizes them and applies the result to the target. An invalid revision is never applied:
the last good one stays in place and the errors name file and line.

Source:
      --repo URL               http://, https://, ssh://, user@host:path or file:// repository
                               (required)
      --branch B | --tag T | --commit SHA
                               what to follow (default: the remote's HEAD)
      --path DIR               directory of the repository holding the resources (default: all)
      --username USER          Basic-auth user (default: x-access-token with --token-file)
      --password-file FILE     file holding the password
      --token-file FILE        file holding an access token (sent as the Basic password)
      --ca-file FILE           PEM certificates trusted for https:// besides the system ones
      --ssh-key-file FILE      private key of an SSH deploy key (ssh:// and user@host:path)
      --known-hosts-file FILE  the SSH server's host key in known_hosts form (required for SSH)
      --git-timeout DURATION   deadline of each fetch, Go-style (default 60s)
      --cache-dir DIR          clones of remote repositories (default: $XDG_CACHE_HOME/mcpfleet/controller)
When:
      --interval DURATION      poll period, Go-style (default 1m; at least 1s)
      --schedule CRON          poll on a cron expression instead (5 or 6 fields)
      --jitter DURATION        random delay added to each poll (default: a tenth of --interval)
      --drift-interval DURATION
                               re-apply an unchanged revision this often (default 1h)
      --once                   sync once and exit (0 applied or unchanged, 1 invalid or failed)
Target:
      --target cluster|dir:PATH
                               apply to the cluster (default) or write manifests to PATH
      --kubeconfig FILE        cluster credentials (default: in-cluster or $KUBECONFIG)
      --context NAME           the kubeconfig context to use (default: its current context)
      --field-manager NAME     server-side apply field manager (default mcpfleet)
      --prune                  delete objects this controller applied that are no longer rendered
      --force-recreate         delete and recreate objects whose immutable fields changed
      --dry-run                validate, render and report what would change; write nothing
      --controller-namespace NS
                               namespace of the inventory ConfigMap and the leader Lease
                               (default: $POD_NAMESPACE, else the kubeconfig context's)
      --lease-duration DURATION
                               leader election: another replica takes over after this (default 15s)
  -n, --namespace NS           namespace of resources whose metadata has none (default "default")
      --wait-timeout DURATION  after applying, wait this long for the Deployments and StatefulSets
                               to roll out; not ready in time fails the revision (default: no wait)
Tenancy (who can push decides what runs; see mcpfleet docs gitops):
      --namespace-allow GLOBS  namespaces a revision may write to (comma-separated, repeatable;
                               * and ?); the controller's own and kube-* only when named
      --target-namespace NS    every resource lives in NS (its default, and the only one allowed)
      --service-account NS/NAME
                               write the revision's objects as this ServiceAccount (impersonation):
                               its RBAC decides what the repository may change
Serving (not with --once):
      --listen ADDR            /healthz, /readyz, /metrics, /hook on [HOST:]PORT (default :8080)
      --webhook-secret-file FILE
                               enable POST /hook (GitHub X-Hub-Signature-256, GitLab X-Gitlab-Token)
      --log-format json|text   log lines (default: json, text with --once)
  -h, --help                   show this help

See mcpfleet docs gitops (docs/gitops.md of the installation).`;

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

const usage = (message: string) => usageError("controller", message);

function duration(text: string, flag: string): number {
  try {
    return parseInterval(text, flag);
  } catch (err) {
    throw usage((err as Error).message);
  }
}

function defaultCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg !== undefined && xdg !== "") return join(xdg, "mcpfleet", "controller");
  const home = homedir();
  return home !== "" ? join(home, ".cache", "mcpfleet", "controller") : join(tmpdir(), "mcpfleet");
}

/** Parses and checks the command line; `undefined` means --help was printed. */
export function parseControllerArgs(argv: string[]): ControllerConfig | undefined {
  const parsed = parseCommandArgs("controller", {
    args: argv,
    allowPositionals: false,
    strict: true,
    options: {
      repo: { type: "string" },
      branch: { type: "string" },
      tag: { type: "string" },
      commit: { type: "string" },
      path: { type: "string", default: "" },
      username: { type: "string" },
      "password-file": { type: "string" },
      "token-file": { type: "string" },
      "ca-file": { type: "string" },
      "ssh-key-file": { type: "string" },
      "known-hosts-file": { type: "string" },
      "git-timeout": { type: "string", default: "60s" },
      "cache-dir": { type: "string" },
      interval: { type: "string" },
      schedule: { type: "string" },
      jitter: { type: "string" },
      "drift-interval": { type: "string", default: "1h" },
      once: { type: "boolean", default: false },
      target: { type: "string", default: "cluster" },
      kubeconfig: { type: "string" },
      context: { type: "string" },
      "field-manager": { type: "string", default: "mcpfleet" },
      prune: { type: "boolean", default: false },
      "force-recreate": { type: "boolean", default: false },
      "dry-run": { type: "boolean", default: false },
      namespace: { type: "string", short: "n" },
      "namespace-allow": { type: "string", multiple: true },
      "target-namespace": { type: "string" },
      "service-account": { type: "string" },
      "wait-timeout": { type: "string" },
      listen: { type: "string", default: ":8080" },
      "webhook-secret-file": { type: "string" },
      "log-format": { type: "string" },
      "lease-duration": { type: "string", default: "15s" },
      "controller-namespace": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const v = parsed.values;
  if (v.help) {
    console.log(USAGE);
    return undefined;
  }
  if (v.repo === undefined || v.repo === "") throw usage("--repo URL is required");
  const refs = [v.branch, v.tag, v.commit].filter((x) => x !== undefined);
  if (refs.length > 1) throw usage("give at most one of --branch, --tag and --commit");
  if (refs.some((r) => r === "")) throw usage("--branch, --tag and --commit must not be empty");
  if (v.commit !== undefined && !/^[0-9a-f]{4,40}$/i.test(v.commit)) {
    throw usage(`--commit must be a hex SHA, not ${v.commit}`);
  }
  const ref: GitRevisionSpec =
    v.branch !== undefined
      ? { branch: v.branch }
      : v.tag !== undefined
        ? { tag: v.tag }
        : v.commit !== undefined
          ? { commit: v.commit.toLowerCase() }
          : {};
  if (v.interval !== undefined && v.schedule !== undefined) {
    throw usage("give one of --interval and --schedule, not both");
  }
  if (v["password-file"] !== undefined && v["token-file"] !== undefined) {
    throw usage("give one of --password-file and --token-file, not both");
  }
  let cron: string | undefined;
  if (v.schedule !== undefined) {
    try {
      checkCron(v.schedule);
    } catch (err) {
      throw usage((err as Error).message);
    }
    cron = v.schedule;
  }
  const intervalMs = cron === undefined ? duration(v.interval ?? "1m", "--interval") : undefined;
  let jitterMs = intervalMs !== undefined ? Math.floor(intervalMs / 10) : 0;
  if (v.jitter !== undefined) {
    try {
      jitterMs = v.jitter === "0" ? 0 : parseInterval(v.jitter, "--jitter");
    } catch (err) {
      throw usage((err as Error).message);
    }
  }
  let targetSpec: TargetSpec;
  let listen;
  try {
    targetSpec = parseTarget(v.target);
    listen = parseListen(v.listen);
  } catch (err) {
    throw usage((err as Error).message.replace(/^controller: /, ""));
  }
  if (v["field-manager"] === "") throw usage("--field-manager must not be empty");
  if (v.namespace === "") throw usage("--namespace must not be empty");
  let allow: string[];
  let target: string | undefined;
  let serviceAccount;
  try {
    allow = parseNamespaceAllow(v["namespace-allow"] ?? []);
    target =
      v["target-namespace"] !== undefined
        ? checkNamespaceName(v["target-namespace"], "--target-namespace")
        : undefined;
    serviceAccount =
      v["service-account"] !== undefined
        ? parseServiceAccount(v["service-account"], target)
        : undefined;
  } catch (err) {
    throw usage((err as Error).message);
  }
  if (target !== undefined && allow.length > 0) {
    throw usage("give one of --target-namespace and --namespace-allow, not both");
  }
  if (target !== undefined && v.namespace !== undefined && v.namespace !== target) {
    throw usage(`-n ${v.namespace} contradicts --target-namespace ${target}`);
  }
  const waitTimeoutMs =
    v["wait-timeout"] === undefined || v["wait-timeout"] === "0"
      ? undefined
      : duration(v["wait-timeout"], "--wait-timeout");
  const logFormat = v["log-format"] ?? (v.once ? "text" : "json");
  if (logFormat !== "json" && logFormat !== "text") {
    throw usage(`--log-format must be json or text, not ${logFormat}`);
  }
  if (v.once && v["webhook-secret-file"] !== undefined) {
    throw usage("--webhook-secret-file needs a running controller, not --once");
  }
  const auth: GitAuth = {
    ...(v.username !== undefined ? { username: v.username } : {}),
    ...(v["password-file"] !== undefined ? { passwordFile: v["password-file"] } : {}),
    ...(v["token-file"] !== undefined ? { tokenFile: v["token-file"] } : {}),
  };
  if (isSshUrl(v.repo)) {
    if (Object.keys(auth).length > 0) {
      throw usage(
        "--username, --password-file and --token-file are for http(s); over SSH give --ssh-key-file",
      );
    }
  } else if (v["ssh-key-file"] !== undefined || v["known-hosts-file"] !== undefined) {
    throw usage(
      "--ssh-key-file and --known-hosts-file are for ssh:// and user@host:path repositories",
    );
  }
  return {
    repo: v.repo,
    ref,
    path: v.path,
    ...(Object.keys(auth).length > 0 ? { auth } : {}),
    ...(v["ca-file"] !== undefined ? { caFile: v["ca-file"] } : {}),
    ...(v["ssh-key-file"] !== undefined ? { sshKeyFile: v["ssh-key-file"] } : {}),
    ...(v["known-hosts-file"] !== undefined ? { knownHostsFile: v["known-hosts-file"] } : {}),
    gitTimeoutMs: duration(v["git-timeout"], "--git-timeout"),
    cacheDir: v["cache-dir"] ?? defaultCacheDir(),
    ...(intervalMs !== undefined ? { intervalMs } : {}),
    ...(cron !== undefined ? { cron } : {}),
    jitterMs,
    driftIntervalMs: duration(v["drift-interval"], "--drift-interval"),
    once: v.once,
    target: targetSpec,
    cluster: {
      ...(v.kubeconfig !== undefined ? { kubeconfig: v.kubeconfig } : {}),
      ...(v.context !== undefined ? { context: v.context } : {}),
      fieldManager: v["field-manager"],
      prune: v.prune,
      forceRecreate: v["force-recreate"],
      ...(v["controller-namespace"] !== undefined ? { namespace: v["controller-namespace"] } : {}),
      tenancy: {
        allow,
        ...(target !== undefined ? { target } : {}),
        ...(v.namespace !== undefined ? { defaultNamespace: v.namespace } : {}),
        ...(serviceAccount !== undefined ? { serviceAccount } : {}),
      },
      ...(waitTimeoutMs !== undefined ? { waitTimeoutMs } : {}),
    },
    dryRun: v["dry-run"],
    namespace: target ?? v.namespace ?? "default",
    listen,
    ...(v["webhook-secret-file"] !== undefined
      ? { webhookSecretFile: v["webhook-secret-file"] }
      : {}),
    logFormat,
    leaseDurationSeconds: Math.max(
      1,
      Math.round(duration(v["lease-duration"], "--lease-duration") / 1000),
    ),
  };
}

/** Plain `level message key=value` lines on stderr, for people and --once. */
function textLogger(write: (line: string) => void): Logger {
  const line = (level: string) => (obj: Record<string, unknown>, msg: string) => {
    const fields = Object.entries(obj)
      .filter(([, val]) => val !== undefined)
      .map(([k, val]) => `${k}=${typeof val === "string" ? val : JSON.stringify(val)}`)
      .join(" ");
    write(`${level} ${msg}${fields !== "" ? ` ${fields}` : ""}`);
  };
  return { info: line("info"), warn: line("warn"), error: line("error") };
}

export interface RunDeps {
  /** Aborting stops a long-running controller as SIGTERM does. */
  signal?: AbortSignal;
  stdout?: (line: string) => void;
  stderr?: (line: string) => void;
  /** Called once the HTTP server listens (tests learn the port). */
  onListening?: (address: { host: string; port: number }) => void;
  /** How often the operation annotations are read when no watch is open (default 2 s). */
  operationsPollMs?: number;
}

function summary(outcome: SyncOutcome, target: string): string {
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

/** Runs the controller as configured; resolves with the exit code. */
export async function runController(config: ControllerConfig, deps: RunDeps = {}): Promise<number> {
  const out = deps.stdout ?? ((l: string) => void process.stdout.write(`${l}\n`));
  const err = deps.stderr ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const log: Logger =
    config.logFormat === "text"
      ? textLogger(err)
      : pino({ name: "mcpfleet-controller" }, pino.destination(2));
  let stopping = false;
  // Replaced by the Lease's answer once leader election runs (never with --once or --dry-run).
  let leading = () => true;
  const client = config.target.kind === "cluster" ? clusterClient(config.cluster) : undefined;
  const applier = createApplier(config.target, config.cluster, {
    // SIGTERM lets the stage in flight finish; the end of leadership stops every write at once.
    stopping: () => stopping,
    mayWrite: () => leading(),
    inputs: [config.cacheDir],
    ...(client !== undefined ? { client } : {}),
    // enforceServers: each apply names the servers whose workloads it withholds.
    onImageRefused: (server, v) => log.warn({ server, reason: v.reason }, v.message),
  });
  const stopGit = new AbortController();
  const source = new GitSource({
    url: config.repo,
    ref: config.ref,
    path: config.path,
    cacheDir: config.cacheDir,
    ...(config.auth !== undefined ? { auth: config.auth } : {}),
    ...(config.caFile !== undefined ? { caFile: config.caFile } : {}),
    ...(config.sshKeyFile !== undefined ? { sshKeyFile: config.sshKeyFile } : {}),
    ...(config.knownHostsFile !== undefined ? { knownHostsFile: config.knownHostsFile } : {}),
    timeoutMs: config.gitTimeoutMs,
    signal: stopGit.signal,
  });
  const status = new ControllerStatus(source.refName, applier.target);
  // Suspension, reconcile requests and the status `mcpfleet status` reads, on the inventory.
  const operations =
    client !== undefined && !config.dryRun
      ? new OperationRequests({
          client,
          namespace: controllerNamespace(client, config.cluster.namespace),
          fieldManager: config.cluster.fieldManager,
          status,
          log,
          ...(deps.operationsPollMs !== undefined ? { pollMs: deps.operationsPollMs } : {}),
        })
      : undefined;
  const reconciler = new Reconciler({
    source,
    applier,
    status,
    log,
    namespace: config.namespace,
    driftIntervalMs: config.driftIntervalMs,
    dryRun: config.dryRun,
    admission: admissionChecks(config.cluster),
    ...(operations !== undefined ? { suspended: () => operations.suspended() } : {}),
  });

  if (config.once) {
    const outcome = await reconciler.sync({ force: true });
    await operations?.record();
    client?.close();
    if (outcome.kind === "invalid") for (const e of outcome.errors) err(e);
    const line = summary(outcome, applier.target);
    const ok =
      outcome.kind === "applied" ||
      outcome.kind === "dry-run" ||
      outcome.kind === "unchanged" ||
      outcome.kind === "suspended";
    if (ok) out(line);
    else err(line);
    return ok ? 0 : 1;
  }

  // The first sync of a leader re-checks the applied revision against the cluster's inventory.
  let forceNext = true;
  const scheduler = new Scheduler({
    ...(config.intervalMs !== undefined ? { intervalMs: config.intervalMs } : {}),
    ...(config.cron !== undefined ? { cron: config.cron } : {}),
    jitterMs: config.jitterMs,
    // A failure that may pass (Git server down, API errors) is retried with backoff before the
    // next regular poll; an invalid revision waits for a new commit.
    run: async () => {
      if (!leading()) return undefined;
      // Taken before the sync: a request arriving during it forces the run queued after it.
      const force = forceNext;
      forceNext = false;
      const outcome = await reconciler.sync({ force });
      await operations?.record();
      return outcome.kind === "failed" || outcome.kind === "not-ready"
        ? { retry: true }
        : undefined;
    },
    onError: (e) => log.error({}, `sync failed: ${(e as Error).message}`),
  });
  const secretFile = config.webhookSecretFile;
  const app = createControllerServer({
    status,
    ...(secretFile !== undefined
      ? {
          webhook: {
            secret: () => readFileSync(secretFile, "utf8").trim(),
            watches: refMatcher(config.ref),
            onPush: (push) => {
              log.info({ provider: push.provider, ref: push.ref }, "push received: syncing now");
              void scheduler.trigger("trigger");
            },
          },
        }
      : {}),
  });
  if (secretFile !== undefined) {
    try {
      if (readFileSync(secretFile, "utf8").trim() === "") throw new Error("the file is empty");
    } catch (e) {
      throw new McpfleetError(
        "ERR_USAGE",
        `controller: --webhook-secret-file ${secretFile}: ${(e as Error).message}`,
      );
    }
  }
  const address = await app.listen({ host: config.listen.host, port: config.listen.port });
  const port = Number(new URL(address).port);
  log.info({ address, ref: source.refName, target: applier.target }, "controller started");
  deps.onListening?.({ host: config.listen.host, port });
  // Several replicas are safe: only the holder of the Lease applies.
  const elector =
    client !== undefined && !config.dryRun
      ? new LeaderElector(client, {
          namespace: controllerNamespace(client, config.cluster.namespace),
          name: `${config.cluster.fieldManager}-controller-leader`,
          identity: process.env.POD_NAME ?? `${hostname()}-${process.pid}`,
          leaseDurationSeconds: config.leaseDurationSeconds,
          renewMs: Math.max(200, Math.floor((config.leaseDurationSeconds * 1000) / 3)),
          log: (m) => log.info({}, m),
          // A new leader syncs at once, whatever an earlier leadership applied.
          onStarted: () => {
            forceNext = true;
            void scheduler.trigger("trigger");
          },
        })
      : undefined;
  if (elector !== undefined) {
    leading = () => elector.isLeader;
    elector.start();
  }
  scheduler.start();
  // A reconcile request is answered by this replica's scheduler, forced, when it leads; one
  // that stopping cut short stays pending for the next leader.
  operations?.start(async () => {
    if (!leading()) return false;
    forceNext = true;
    await scheduler.trigger("trigger");
    return !stopping;
  });

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    if (deps.signal !== undefined) {
      if (deps.signal.aborted) resolve();
      deps.signal.addEventListener("abort", stop, { once: true });
    } else {
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    }
  });
  log.info({}, "stopping: letting the apply step in flight finish");
  stopping = true;
  stopGit.abort(); // a fetch in flight has nothing to finish: cancel it
  await scheduler.stop();
  await operations?.stop();
  await elector?.stop({ release: true });
  client?.close();
  await app.close();
  log.info({}, "stopped");
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const config = parseControllerArgs(argv);
  if (config === undefined) return 0;
  return runController(config);
}

// `mcpfleet controller`: GitOps from a Git repository. Watches a branch, tag or commit; on each
// new revision validates, synthesizes and hands the objects to the target (a directory of
// manifests, or a cluster). Runs once with --once, else serves /healthz, /readyz, /metrics and
// the push webhook until SIGTERM, which lets the sync in flight finish.
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { parseCommandArgs, usageError } from "./args.js";
import type { GitAuth, GitRevisionSpec } from "../infra/git/source.js";
import { isSshUrl } from "../infra/git/ssh.js";
import { Controller, type ControllerConfig } from "../controller/controller.js";
import { jsonLogger, textLogger } from "../controller/logger.js";
import { checkCron, parseInterval } from "../controller/schedule.js";
import { parseListen } from "../controller/server.js";
import { type ClusterTargetOptions, parseTarget } from "../controller/targets.js";
import { parseServiceAccount } from "../controller/impersonation.js";
import { checkNamespaceName, parseNamespaceAllow } from "../controller/tenancy.js";

export type { ControllerConfig };

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

const usage = (message: string) => usageError("controller", message);

/** Every flag: its type, and its default when it has one. */
const OPTIONS = {
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
} as const;

function parseFlags(argv: string[]) {
  return parseCommandArgs("controller", {
    args: argv,
    allowPositionals: false,
    strict: true,
    options: OPTIONS,
  }).values;
}

type Flags = ReturnType<typeof parseFlags>;

/** The value of `flag` when given (an object to spread), else nothing. */
function given<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return (value !== undefined ? { [key]: value } : {}) as { [k in K]?: V };
}

/** `fn`'s result; its error, whatever it is, as a usage error with the same message. */
function asUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw usage((err as Error).message.replace(/^controller: /, ""));
  }
}

function duration(text: string, flag: string): number {
  return asUsage(() => parseInterval(text, flag));
}

function defaultCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg !== undefined && xdg !== "") return join(xdg, "mcpfleet", "controller");
  const home = homedir();
  return home !== "" ? join(home, ".cache", "mcpfleet", "controller") : join(tmpdir(), "mcpfleet");
}

/** --branch, --tag or --commit: at most one, none empty. */
function revisionSpec(v: Flags): GitRevisionSpec {
  const refs = [v.branch, v.tag, v.commit].filter((x) => x !== undefined);
  if (refs.length > 1) throw usage("give at most one of --branch, --tag and --commit");
  if (refs.some((r) => r === "")) throw usage("--branch, --tag and --commit must not be empty");
  if (v.commit !== undefined && !/^[0-9a-f]{4,40}$/i.test(v.commit)) {
    throw usage(`--commit must be a hex SHA, not ${v.commit}`);
  }
  if (v.branch !== undefined) return { branch: v.branch };
  if (v.tag !== undefined) return { tag: v.tag };
  if (v.commit !== undefined) return { commit: v.commit.toLowerCase() };
  return {};
}

/** Flags that exclude each other. */
function exclusive(v: Flags): void {
  if (v.interval !== undefined && v.schedule !== undefined) {
    throw usage("give one of --interval and --schedule, not both");
  }
  if (v["password-file"] !== undefined && v["token-file"] !== undefined) {
    throw usage("give one of --password-file and --token-file, not both");
  }
}

/** --interval or --schedule, and --jitter (default: a tenth of the interval). */
function when(v: Flags): { intervalMs?: number; cron?: string; jitterMs: number } {
  const cron = v.schedule;
  if (cron !== undefined) asUsage(() => checkCron(cron));
  const intervalMs = cron === undefined ? duration(v.interval ?? "1m", "--interval") : undefined;
  let jitterMs = intervalMs !== undefined ? Math.floor(intervalMs / 10) : 0;
  const jitter = v.jitter;
  if (jitter !== undefined) {
    jitterMs = jitter === "0" ? 0 : asUsage(() => parseInterval(jitter, "--jitter"));
  }
  return { ...given("intervalMs", intervalMs), ...given("cron", cron), jitterMs };
}

/** Credentials of the repository: Basic auth over HTTP(S), a deploy key over SSH. */
function gitAccess(v: Flags, repo: string): Partial<ControllerConfig> {
  const auth: GitAuth = {
    ...given("username", v.username),
    ...given("passwordFile", v["password-file"]),
    ...given("tokenFile", v["token-file"]),
  };
  if (isSshUrl(repo)) {
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
    ...(Object.keys(auth).length > 0 ? { auth } : {}),
    ...given("caFile", v["ca-file"]),
    ...given("sshKeyFile", v["ssh-key-file"]),
    ...given("knownHostsFile", v["known-hosts-file"]),
  };
}

/** Where a revision may write, and as whom: --namespace-allow, --target-namespace, -n, --service-account. */
function tenancy(v: Flags): NonNullable<ClusterTargetOptions["tenancy"]> {
  const { allow, target, serviceAccount } = asUsage(() => {
    const target =
      v["target-namespace"] !== undefined
        ? checkNamespaceName(v["target-namespace"], "--target-namespace")
        : undefined;
    return {
      allow: parseNamespaceAllow(v["namespace-allow"] ?? []),
      target,
      serviceAccount:
        v["service-account"] !== undefined
          ? parseServiceAccount(v["service-account"], target)
          : undefined,
    };
  });
  if (target !== undefined && allow.length > 0) {
    throw usage("give one of --target-namespace and --namespace-allow, not both");
  }
  if (target !== undefined && v.namespace !== undefined && v.namespace !== target) {
    throw usage(`-n ${v.namespace} contradicts --target-namespace ${target}`);
  }
  return {
    allow,
    ...given("target", target),
    ...given("defaultNamespace", v.namespace),
    ...given("serviceAccount", serviceAccount),
  };
}

/** The cluster target's settings. */
function cluster(v: Flags): ClusterTargetOptions {
  if (v["field-manager"] === "") throw usage("--field-manager must not be empty");
  if (v.namespace === "") throw usage("--namespace must not be empty");
  const namespaces = tenancy(v);
  const wait = v["wait-timeout"];
  const waitTimeoutMs =
    wait === undefined || wait === "0" ? undefined : duration(wait, "--wait-timeout");
  return {
    ...given("kubeconfig", v.kubeconfig),
    ...given("context", v.context),
    fieldManager: v["field-manager"],
    prune: v.prune,
    forceRecreate: v["force-recreate"],
    ...given("namespace", v["controller-namespace"]),
    tenancy: namespaces,
    ...given("waitTimeoutMs", waitTimeoutMs),
  };
}

/** --log-format (default: json, text with --once) and what needs a running controller. */
function serving(v: Flags): Pick<ControllerConfig, "logFormat" | "webhookSecretFile"> {
  const logFormat = v["log-format"] ?? (v.once ? "text" : "json");
  if (logFormat !== "json" && logFormat !== "text") {
    throw usage(`--log-format must be json or text, not ${logFormat}`);
  }
  if (v.once && v["webhook-secret-file"] !== undefined) {
    throw usage("--webhook-secret-file needs a running controller, not --once");
  }
  return { logFormat, ...given("webhookSecretFile", v["webhook-secret-file"]) };
}

/** Parses and checks the command line; `undefined` means --help was printed. */
export function parseControllerArgs(argv: string[]): ControllerConfig | undefined {
  const v = parseFlags(argv);
  if (v.help) {
    console.log(USAGE);
    return undefined;
  }
  if (v.repo === undefined || v.repo === "") throw usage("--repo URL is required");
  const ref = revisionSpec(v);
  exclusive(v);
  const schedule = when(v);
  const target = asUsage(() => parseTarget(v.target));
  const listen = asUsage(() => parseListen(v.listen));
  const clusterOptions = cluster(v);
  const { logFormat, webhookSecretFile } = serving(v);
  const access = gitAccess(v, v.repo);
  return {
    repo: v.repo,
    ref,
    path: v.path,
    ...access,
    gitTimeoutMs: duration(v["git-timeout"], "--git-timeout"),
    cacheDir: v["cache-dir"] ?? defaultCacheDir(),
    ...schedule,
    driftIntervalMs: duration(v["drift-interval"], "--drift-interval"),
    once: v.once,
    target,
    cluster: clusterOptions,
    dryRun: v["dry-run"],
    namespace: clusterOptions.tenancy?.target ?? v.namespace ?? "default",
    listen,
    ...given("webhookSecretFile", webhookSecretFile),
    logFormat,
    leaseDurationSeconds: Math.max(
      1,
      Math.round(duration(v["lease-duration"], "--lease-duration") / 1000),
    ),
  };
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

/** Resolves when `signal` aborts, or else at SIGTERM or SIGINT. */
function stopRequested(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal === undefined) {
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    } else if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Runs the controller as configured; resolves with the exit code. */
export async function runController(config: ControllerConfig, deps: RunDeps = {}): Promise<number> {
  const stdout = deps.stdout ?? ((l: string) => void process.stdout.write(`${l}\n`));
  const stderr = deps.stderr ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const controller = new Controller({
    ...config,
    log: config.logFormat === "text" ? textLogger(stderr) : jsonLogger(),
    stdout,
    stderr,
    ...given("onListening", deps.onListening),
    ...given("operationsPollMs", deps.operationsPollMs),
  });
  if (config.once) return controller.runOnce();
  await controller.start();
  await stopRequested(deps.signal);
  await controller.stop();
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const config = parseControllerArgs(argv);
  if (config === undefined) return 0;
  return runController(config);
}

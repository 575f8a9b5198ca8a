// `mcpfleet install --export`: the install bundle (CRDs, the controller's Namespace, account,
// least-privilege RBAC, Service and Deployment) for the options given, as `flux install
// --export` prints it: to standard output for `kubectl apply --server-side -f -` or a
// repository, or into a directory with -d (written as synth writes, never deleting others' files).
import { isSshUrl } from "../infra/git/ssh.js";
import { parseServiceAccount } from "../controller/impersonation.js";
import { parseInterval } from "../controller/schedule.js";
import { type InstallOptions, installFiles } from "../synth/install.js";
import { toYaml } from "../synth/yaml.js";
import { writeOutputDir } from "../synth/output-dir.js";
import { parseCommandArgs, usageError } from "./args.js";
import { writeText } from "./write.js";

const USAGE = `Usage: mcpfleet install --export [options]

Prints the install bundle: the CRDs, then the controller's Namespace, ServiceAccount,
ClusterRole and binding, Service and Deployment, configured by the options below. Apply it with
  mcpfleet install --export --repo URL | kubectl apply --server-side -f -
or commit it to the repository the controller follows.

Options:
      --export                 print the bundle (required: install applies nothing itself)
  -d, --output-dir DIR         write 00-crds.yaml and 01-controller.yaml into DIR instead
      --force                  write into a non-empty directory install did not write
      --repo URL               repository the controller follows (default: key "repo" of the
                               ConfigMap mcpfleet-controller, created by you)
      --branch B               branch to follow (default: the remote's HEAD)
      --path DIR               directory of the repository holding the resources
      --token-secret NAME      Secret (key "token") with an access token for the repository
      --ssh-secret NAME        Secret with an SSH deploy key (key "identity") and the server's
                               host keys (key "known_hosts"), for ssh:// and user@host:path
      --service-account NS/NAME
                               write the revision as this ServiceAccount (impersonation); the
                               bundle lets the controller impersonate that account only
      --interval DURATION      poll period (controller default 1m)
      --drift-interval DURATION
                               re-apply an unchanged revision this often (controller default 1h)
      --image IMAGE            controller image (default: this release's)
  -n, --namespace NS           the controller's namespace (default mcpfleet-system)
      --replicas N             controller replicas; leader election keeps one active (default 1)
      --controller-arg ARG     any other controller flag, as --controller-arg=--prune=false
                               (repeatable)
      --no-crds                leave the CRDs out (they are installed already)
  -h, --help                   show this help

Exit status: 0 printed or written, 2 usage error.`;

/** The command line's flags, parsed strictly (unknown flags are usage errors). */
function parseInstallArgs(argv: string[]) {
  return parseCommandArgs("install", {
    args: argv,
    strict: true,
    allowNegative: true,
    options: {
      export: { type: "boolean", default: false },
      "output-dir": { type: "string", short: "d" },
      force: { type: "boolean", default: false },
      repo: { type: "string" },
      branch: { type: "string" },
      path: { type: "string" },
      "token-secret": { type: "string" },
      "ssh-secret": { type: "string" },
      "service-account": { type: "string" },
      interval: { type: "string" },
      "drift-interval": { type: "string" },
      image: { type: "string" },
      namespace: { type: "string", short: "n" },
      replicas: { type: "string" },
      "controller-arg": { type: "string", multiple: true },
      crds: { type: "boolean", default: true },
      help: { type: "boolean", short: "h", default: false },
    },
  }).values;
}

type InstallFlags = ReturnType<typeof parseInstallArgs>;

export async function main(argv: string[]): Promise<number> {
  const v = parseInstallArgs(argv);
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  if (!v.export) {
    throw usageError(
      "install",
      "give --export: install prints the bundle for kubectl apply --server-side -f -, it applies nothing itself",
    );
  }
  const files = bundleFiles(installOptions(v), v.crds);
  const dir = v["output-dir"];
  if (dir !== undefined) {
    const outcome = writeOutputDir(dir, files, {
      flag: "--output-dir",
      force: v.force,
      generator: "mcpfleet install",
    });
    process.stderr.write(
      `install: ${dir}: ${outcome.written.length} file(s) written, ${outcome.unchanged.length} unchanged\n`,
    );
    return 0;
  }
  await writeText(process.stdout, [...files.values()].join("---\n"));
  return 0;
}

/** The bundle's options from the flags, each checked as the controller would at start. */
function installOptions(v: InstallFlags): InstallOptions {
  for (const flag of [
    "repo",
    "branch",
    "path",
    "token-secret",
    "ssh-secret",
    "image",
    "namespace",
  ] as const) {
    if (v[flag] === "") throw usageError("install", `--${flag} must not be empty`);
  }
  checkGitCredentials(v.repo, v["token-secret"], v["ssh-secret"]);
  const serviceAccount =
    v["service-account"] !== undefined ? serviceAccountOf(v["service-account"]) : undefined;
  const extraArgs = controllerExtraArgs(v);
  const replicas = v.replicas !== undefined ? replicasOf(v.replicas) : undefined;
  return {
    ...(v.repo !== undefined ? { repo: v.repo } : {}),
    ...(v.branch !== undefined ? { branch: v.branch } : {}),
    ...(v.path !== undefined ? { path: v.path } : {}),
    ...(v["token-secret"] !== undefined ? { tokenSecret: v["token-secret"] } : {}),
    ...(v["ssh-secret"] !== undefined ? { sshSecret: v["ssh-secret"] } : {}),
    ...(serviceAccount !== undefined ? { serviceAccount } : {}),
    ...(v.image !== undefined ? { image: v.image } : {}),
    ...(v.namespace !== undefined ? { namespace: v.namespace } : {}),
    ...(replicas !== undefined ? { replicas } : {}),
    ...(extraArgs.length > 0 ? { extraArgs } : {}),
  };
}

/** --service-account NS/NAME, a usage error when malformed. */
function serviceAccountOf(text: string): InstallOptions["serviceAccount"] {
  try {
    return parseServiceAccount(text);
  } catch (err) {
    throw usageError("install", (err as Error).message);
  }
}

/** The controller flags the bundle passes on: the intervals, checked, then --controller-arg. */
function controllerExtraArgs(v: InstallFlags): string[] {
  const extraArgs: string[] = [];
  for (const flag of ["interval", "drift-interval"] as const) {
    const text = v[flag];
    if (text === undefined) continue;
    try {
      parseInterval(text, `--${flag}`);
    } catch (err) {
      throw usageError("install", (err as Error).message);
    }
    extraArgs.push(`--${flag}=${text}`);
  }
  for (const arg of v["controller-arg"] ?? []) {
    if (!arg.startsWith("--")) {
      throw usageError(
        "install",
        `--controller-arg takes a controller flag such as --prune=false, not "${arg}"`,
      );
    }
    extraArgs.push(arg);
  }
  return extraArgs;
}

/** --replicas: a whole number from 1 to 100. */
function replicasOf(text: string): number {
  const replicas = Number(text);
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 100) {
    throw usageError("install", `--replicas must be a whole number from 1 to 100, not "${text}"`);
  }
  return replicas;
}

/** The bundle's files by name, as YAML; without the CRDs' file for --no-crds. */
function bundleFiles(options: InstallOptions, crds: boolean): Map<string, string> {
  const files = new Map<string, string>();
  for (const [name, objects] of installFiles(options)) {
    if (!crds && name === "00-crds.yaml") continue;
    files.set(name, toYaml(objects));
  }
  return files;
}

/** The credentials must suit the repository's transport, as the controller would insist at start. */
function checkGitCredentials(
  repo: string | undefined,
  tokenSecret: string | undefined,
  sshSecret: string | undefined,
): void {
  if (tokenSecret !== undefined && sshSecret !== undefined) {
    throw usageError("install", "give --token-secret (http/https) or --ssh-secret (SSH), not both");
  }
  if (repo === undefined) return;
  if (sshSecret !== undefined && !isSshUrl(repo)) {
    throw usageError(
      "install",
      `--ssh-secret is for ssh:// and user@host:path repositories, not ${repo}`,
    );
  }
  if (tokenSecret !== undefined && isSshUrl(repo)) {
    throw usageError(
      "install",
      `--token-secret is for http(s) repositories; ${repo} is SSH: give --ssh-secret`,
    );
  }
}

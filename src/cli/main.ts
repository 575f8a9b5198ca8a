// The `mcpfleet` command: dispatches to one module per command, loaded only when used so that
// start-up stays fast (validate in CI and pre-commit runs often).
import nodeModule from "node:module";
import { projectVersion } from "../project.js";
import { didYouMean } from "../suggest.js";
import { usageError } from "./args.js";
import { reportFailure } from "./failure.js";
import { dropOutputReaderGone } from "./write.js";

// Node's compile cache keeps the compiled code of the modules a command loads on disk (in the
// temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off): from the second run on, a
// validate run in a pre-commit hook starts about 20 ms sooner. Node 22.8 and later.
nodeModule.enableCompileCache?.();

dropOutputReaderGone();

/** A command receives its own arguments and returns the process exit code. */
export type CommandMain = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<{ main: CommandMain }> }> = {
  // Each entry: name -> module under src/cli/ exporting `main`.
  validate: {
    summary: "Validate resource YAML: schema, CEL rules and references",
    load: () => import("./validate.js"),
  },
  controller: {
    summary: "GitOps: watch a Git repository, validate, synthesize and apply each revision",
    load: () => import("./controller.js"),
  },
  apply: {
    summary: "Validate, synthesize and server-side apply local resource files to the cluster",
    load: () => import("./apply.js"),
  },
  diff: {
    summary: "Show what apply would change in the cluster (exit 1 when there are changes)",
    load: () => import("./diff.js"),
  },
  status: {
    summary: "Show the controller's applied revision, last error and resources' readiness",
    load: () => import("./status.js"),
  },
  suspend: {
    summary: "Suspend the controller: no sync until resume",
    load: async () => ({ main: (await import("./operations.js")).suspendMain }),
  },
  resume: {
    summary: "Resume a suspended controller and wait for its sync",
    load: async () => ({ main: (await import("./operations.js")).resumeMain }),
  },
  reconcile: {
    summary: "Ask the controller to sync now and wait for the result",
    load: async () => ({ main: (await import("./operations.js")).reconcileMain }),
  },
  synth: {
    summary:
      "Render resources into Kubernetes manifests (dist/<namespace>.yaml; --install: the bundle)",
    load: () => import("./synth.js"),
  },
  install: {
    summary: "Print the install bundle for a cluster (install --export --repo URL ...)",
    load: () => import("./install.js"),
  },
  registry: {
    summary:
      "Run a registry server (registry serve), or publish, set status, list (publish|status|list)",
    load: () => import("./registry.js"),
  },
  version: {
    summary: "Print mcpfleet's version",
    load: () =>
      Promise.resolve({
        main: () => {
          console.log(projectVersion());
          return Promise.resolve(0);
        },
      }),
  },
  docs: {
    summary: "Print a document shipped with mcpfleet: docs [NAME] (no NAME: the list)",
    load: () => import("./docs.js"),
  },
  help: {
    summary: "Print this help, or a command's: mcpfleet help COMMAND",
    load: () => Promise.resolve({ main: help }),
  },
  completion: {
    summary: "Print a shell completion script: completion bash|zsh|fish",
    load: () => Promise.resolve({ main: completion }),
  },
};

/** A command's --help text, captured (commands print it with console.log). */
async function helpText(name: string): Promise<string> {
  const command = COMMANDS[name];
  if (command === undefined || name === "help" || name === "version" || name === "completion") {
    return "";
  }
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  try {
    await (await command.load()).main(["--help"]);
  } finally {
    console.log = log;
  }
  return lines.join("\n");
}

/** `mcpfleet completion bash|zsh|fish`. */
async function completion(argv: string[]): Promise<number> {
  const { COMPLETION_SHELLS, completionScript, isShell } = await import("./completion.js");
  const [shell, ...rest] = argv;
  if (shell === "--help" || shell === "-h") {
    console.log(
      `Usage: mcpfleet completion ${COMPLETION_SHELLS.join("|")}\n\n  bash: source <(mcpfleet completion bash)\n  zsh:  source <(mcpfleet completion zsh)\n  fish: mcpfleet completion fish | source`,
    );
    return 0;
  }
  if (shell === undefined || !isShell(shell) || rest.length > 0) {
    throw usageError(
      "completion",
      `give one shell: ${COMPLETION_SHELLS.join(", ")}${shell !== undefined && !isShell(shell) ? `, not "${shell}"${didYouMean(shell, COMPLETION_SHELLS)}` : ""}`,
    );
  }
  const commands = Object.entries(COMMANDS).map(([name, c]) => ({
    name,
    summary: c.summary,
    help: () => helpText(name),
  }));
  process.stdout.write(await completionScript(shell, commands));
  return 0;
}

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(18)} ${c.summary}`);
  return [
    "Usage: mcpfleet <command> [options]",
    "",
    "Commands:",
    ...lines,
    "",
    "  mcpfleet help <command> (or mcpfleet <command> --help) for a command's options.",
    "  MCPFLEET_DEBUG=1 prints stack traces and retries when something fails.",
  ].join("\n");
}

function unknownCommand(name: string): number {
  console.error(
    `mcpfleet: unknown command "${name}"${didYouMean(name, Object.keys(COMMANDS))}; see mcpfleet help`,
  );
  return 2;
}

/** `mcpfleet help [COMMAND]`: the overview, or the command's own --help. */
async function help(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help") {
    console.log(usage());
    return 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) return unknownCommand(name);
  return (await command.load()).main([...rest, "--help"]);
}

async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h") return help([]);
  if (name === "--version") return run(["version"]);
  // Started by a validate run (validate-client.ts); not a command anyone types, so not listed.
  if (name === "__validate-server") return (await import("./validate-server.js")).main(rest);
  const command = COMMANDS[name];
  if (command === undefined) return unknownCommand(name);
  const module = await command.load();
  return module.main(rest);
}

// A promise chain, not a top-level await: the single executable runs the CLI bundled as one
// CommonJS script (scripts/release.ts), which cannot hold one.
run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.exitCode = reportFailure(err);
  },
);

// The command as users run it: flags, standard input, output formats and exit codes 0/1/2,
// through the real entry point (src/cli/main.ts) in a child process.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, res, tempDir, writeTree, yamlDocs } from "./helpers.js";
import { ttyRunner } from "./tty.js";

const MAIN = join(ROOT, "src/cli/main.ts");
const TSX = import.meta.resolve("tsx");
const ESC = String.fromCharCode(27);

/** The environment of a run as in a CI pipe: no colour settings inherited. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const k of ["NO_COLOR", "FORCE_COLOR"]) if (!(k in extra)) delete env[k];
  return env;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function mcpfleet(args: string[], stdin?: string, cwd = ROOT): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX, MAIN, ...args], {
      cwd,
      env: cleanEnv(),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? "");
  });
}

const GROUP =
  "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPGroup\nmetadata:\n  name: eng\n";
const SERVER =
  "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata:\n  name: s\n" +
  "spec:\n  image: i\n  groupRef: eng\n";

const DEPLOYMENT = [
  "apiVersion: apps/v1",
  "kind: Deployment",
  "metadata:",
  "  name: web",
  "spec:",
  "  replicas: two",
  "  selector: {matchLabels: {app: web}}",
  "  template:",
  "    metadata: {labels: {app: web}}",
  "    spec: {containers: [{name: web, image: nginx}]}",
  "",
].join("\n");

const dir = writeTree(tempDir(), {
  "valid/group.yaml": GROUP,
  "valid/server.yml": SERVER,
  "invalid/server.yaml": SERVER.replace("image: i", "image: i\n  proxyPort: 0"),
  "split/server.yaml": SERVER,
  "unknown/server.yaml": SERVER.replace("image: i", "image: i\n  colour: blue") + "---\n" + GROUP,
  "misspelt/server.yaml":
    SERVER.replace("image: i", "image: i\n  transprot: stdio") + "---\n" + GROUP,
  "typos/group.yaml": SERVER.replace("stacklok.dev", "stacklok.io"),
  "typos/kind.yaml": GROUP.replace("MCPGroup", "MCPSever"),
  "other/cert.yaml":
    "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: tls\nspec:\n  secretName: tls\n",
  "core/deploy.yaml": DEPLOYMENT,
  "unrendered/server.yaml":
    SERVER + "  oidcConfig:\n    type: configMap\n    configMap: {name: oidc}\n---\n" + GROUP,
  "empty/.keep": "",
  "empty/notes.txt": "not YAML, not read\n",
});

interface Case {
  name: string;
  args: string[];
  stdin?: string;
  code: number;
  stdout?: RegExp;
  stderr?: RegExp;
}

const cases: Case[] = [
  { name: "a valid directory", args: ["validate", join(dir, "valid")], code: 0, stdout: /^$/ },
  {
    name: "a valid directory with --summary",
    args: ["validate", "--summary", join(dir, "valid")],
    code: 0,
    stdout: /^2 resources: 2 valid, 0 invalid, 0 skipped; 0 errors, 0 warnings\n$/,
  },
  {
    name: "an invalid file",
    args: ["validate", join(dir, "invalid")],
    code: 1,
    stdout: /server\.yaml:7:14: MCPServer\/default\/s: \/spec\/proxyPort: must be >= 1 \(schema\)/,
  },
  {
    name: "a missing reference",
    args: ["validate", join(dir, "split")],
    code: 1,
    stdout: /MCPGroup "eng" not found in namespace default \(reference\)/,
  },
  {
    name: "a valid set synthesis renders nothing for, at the runtime level",
    args: ["validate", "--summary", join(dir, "unrendered")],
    code: 1,
    stdout:
      /server\.yaml:1:1: MCPServer\/default\/s: \/spec\/oidcConfig: renders nothing: .*\(SYNTH_NOT_RENDERED\) \(runtime\)\n2 resources: 1 valid, 1 invalid, 0 skipped; 1 error, 0 warnings\n$/,
  },
  {
    name: "a missing reference with --allow-missing-refs",
    args: ["validate", "--allow-missing-refs", join(dir, "split")],
    code: 0,
    stdout: /\(reference, warning\)/,
  },
  {
    name: "references across files and directories",
    args: ["validate", join(dir, "split"), join(dir, "valid", "group.yaml")],
    code: 0,
  },
  {
    name: "an unknown field is an error",
    args: ["validate", join(dir, "unknown")],
    code: 1,
    stdout: /unknown field "colour" \(schema\)/,
  },
  {
    name: "a misspelt field names the one meant",
    args: ["validate", join(dir, "misspelt")],
    code: 1,
    stdout:
      /\/spec\/transprot: unknown field "transprot" \(did you mean "transport"\?\) \(schema\)/,
  },
  {
    name: "an unknown field with --unknown-fields=warn",
    args: ["validate", "--unknown-fields=warn", join(dir, "unknown")],
    code: 0,
    stdout: /unknown field "colour" \(schema, warning\)/,
  },
  {
    name: "an unknown field with --unknown-fields=ignore",
    args: ["validate", "--unknown-fields", "ignore", "--summary", join(dir, "unknown")],
    code: 0,
    stdout: /^2 resources: 2 valid, 0 invalid, 0 skipped; 0 errors, 0 warnings\n$/,
  },
  {
    name: "an unknown field with --strict, kept for compatibility",
    args: ["validate", "--strict", join(dir, "unknown")],
    code: 1,
    stdout: /unknown field "colour" \(schema\)/,
  },
  {
    name: "--strict contradicting --unknown-fields",
    args: ["validate", "--strict", "--unknown-fields=warn", join(dir, "unknown")],
    code: 2,
    stderr: /--strict means --unknown-fields=error/,
  },
  {
    name: "a misspelt --unknown-fields mode",
    args: ["validate", "--unknown-fields=eror", join(dir, "unknown")],
    code: 2,
    stderr: /unknown --unknown-fields mode "eror" \(did you mean "error"\?\)/,
  },
  {
    name: "a mistyped API group",
    args: ["validate", join(dir, "typos/group.yaml")],
    code: 1,
    stdout:
      /group\.yaml:1:13: .*unknown API group "toolhive\.stacklok\.io" \(did you mean "toolhive\.stacklok\.dev"\?\)/,
  },
  {
    name: "a misspelt kind",
    args: ["validate", join(dir, "typos/kind.yaml")],
    code: 1,
    stdout: /kind\.yaml:2:7: .*unknown kind "MCPSever" .*\(did you mean "MCPServer"\?\) \(schema\)/,
  },
  {
    name: "another group's kind: no schema",
    args: ["validate", join(dir, "other")],
    code: 1,
    stdout: /no schema for Certificate of cert-manager\.io\/v1/,
  },
  {
    name: "another group's kind with --ignore-missing-schemas",
    args: ["validate", "--ignore-missing-schemas", "--summary", join(dir, "other")],
    code: 0,
    stdout: /^1 resource: 0 valid, 0 invalid, 1 skipped/,
  },
  {
    name: "an invalid core kind, validated by default",
    args: ["validate", join(dir, "core")],
    code: 1,
    stdout: /Deployment\/default\/web: \/spec\/replicas: must be integer \(schema\)/,
  },
  {
    name: "a core kind with --no-kube",
    args: ["validate", "--no-kube", "--summary", join(dir, "core")],
    code: 0,
    stdout: /1 skipped/,
  },
  {
    name: "an empty standard input",
    args: ["validate", "-"],
    stdin: "# nothing yet\n",
    code: 1,
    stderr:
      /^validate: no resources found in standard input \(an error; --allow-empty accepts it\)\n$/,
  },
  {
    name: "an empty directory",
    args: ["validate", join(dir, "empty")],
    code: 1,
    stderr: /no resources found in .*empty/,
  },
  {
    name: "an empty directory with --allow-empty",
    args: ["validate", "--allow-empty", join(dir, "empty")],
    code: 0,
    stderr: /^validate: no resources found in .*empty\n$/,
  },
  {
    name: "--namespace",
    args: ["validate", "-n", "tools", join(dir, "invalid")],
    code: 1,
    stdout: /MCPServer\/tools\/s/,
  },
  { name: "standard input", args: ["validate", "-"], stdin: GROUP + "---\n" + SERVER, code: 0 },
  {
    name: "standard input, invalid",
    args: ["validate", "-o", "json", "-"],
    stdin: SERVER,
    code: 1,
    stdout: /"file": "<stdin>"/,
  },
  {
    name: "a path that does not exist",
    args: ["validate", join(dir, "nope.yaml"), join(dir, "valid")],
    code: 2,
    stdout: /nope\.yaml:0:0: -\/-\/-: -: no such file or directory \(io\)/,
  },
  {
    name: "an unknown option",
    args: ["validate", "--frobnicate"],
    code: 2,
    stderr: /unknown option '?--frobnicate/i,
  },
  {
    name: "an unknown output format",
    args: ["validate", "-o", "yaml", dir],
    code: 2,
    stderr: /unknown output format "yaml"/,
  },
  { name: "stdin twice", args: ["validate", "-", "-"], code: 2, stderr: /only once/ },
  { name: "--help", args: ["validate", "--help"], code: 0, stdout: /Usage: mcpfleet validate/ },
  {
    name: "junit",
    args: ["validate", "-o", "junit", join(dir, "invalid")],
    code: 1,
    stdout: /<failure /,
  },
  {
    name: "tap",
    args: ["validate", "-o", "tap", join(dir, "valid")],
    code: 0,
    stdout: /^TAP version 13\n1\.\.2\n/,
  },
  {
    name: "colours when forced",
    args: ["validate", "--color", join(dir, "invalid")],
    code: 1,
    stdout: new RegExp(`${ESC}\\[31m\\(schema\\)`),
  },
  {
    name: "no colours in a pipe",
    args: ["validate", join(dir, "invalid")],
    code: 1,
    stdout: new RegExp(`^[^${ESC}]*$`),
  },
];

describe("mcpfleet validate", () => {
  it.concurrent.each(cases)("$name: exit $code", async (c) => {
    const run = await mcpfleet(c.args, c.stdin);
    expect(run.code, run.stderr + run.stdout).toBe(c.code);
    if (c.stdout) expect(run.stdout).toMatch(c.stdout);
    if (c.stderr) expect(run.stderr).toMatch(c.stderr);
  });

  it("reads standard input, not ., when no path is given and it is a pipe", async () => {
    // The directory is valid; what is piped in is not, and is what must be validated.
    const run = await mcpfleet(
      ["validate"],
      SERVER.replace("image: i", "proxyPort: 0"),
      join(dir, "valid"),
    );
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^<stdin>:\d+:\d+: MCPServer\/default\/s: /);
  });

  it("says so when no path is given and the pipe brings nothing", async () => {
    const run = await mcpfleet(["validate"], "", join(dir, "valid"));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^validate: no resources found in standard input \(read because no path was given and it is not a terminal; give a path to read files\)/,
    );
  });

  it("honours NO_COLOR even with --color unset on a forced terminal", async () => {
    const run = await new Promise<Run>((resolve, reject) => {
      const p = spawn(process.execPath, ["--import", TSX, MAIN, "validate", join(dir, "invalid")], {
        env: cleanEnv({ FORCE_COLOR: "1", NO_COLOR: "1" }),
      });
      let stdout = "";
      p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      p.on("error", reject);
      p.on("close", (code) => resolve({ code, stdout, stderr: "" }));
    });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain("\x1b[");
  });
});

// The yaml package is loaded only for a file the fast reader leaves to it (src/yaml-package.ts):
// a module imported first in the child process says whether any of its modules was loaded
// (Node resolves it to its CommonJS build, whose modules are in require's cache).
describe("mcpfleet validate loads the yaml package only when a file needs it", () => {
  const hook = join(
    writeTree(tempDir(), {
      "hook.mjs": [
        'import { createRequire } from "node:module";',
        "const { cache } = createRequire(import.meta.url);",
        'process.on("exit", () => {',
        '  const yaml = Object.keys(cache).some((path) => path.includes("/node_modules/yaml/"));',
        "  process.stderr.write(`yaml package loaded: ${yaml}\\n`);",
        "});",
      ].join("\n"),
    }),
    "hook.mjs",
  );
  const loaded = (path: string, ...flags: string[]): boolean => {
    const run = spawnSync(
      process.execPath,
      ["--import", hook, "--import", TSX, MAIN, "validate", ...flags, path],
      { cwd: ROOT, env: cleanEnv(), encoding: "utf8" },
    );
    const said = /yaml package loaded: (true|false)/.exec(run.stderr);
    if (said === null) throw new Error(`no answer from the hook: ${run.stderr}`);
    return said[1] === "true";
  };

  // Synthesis (cdk8s) loads it: the fast reader's saving is what --no-synth keeps.
  it("not for the examples", () => {
    expect(loaded("examples", "--no-synth")).toBe(false);
  });

  it("for a file with a duplicate key, whose diagnostic it gives", () => {
    const dir = writeTree(tempDir(), { "dup.yaml": "a: 1\na: 2\n" });
    expect(loaded(join(dir, "dup.yaml"))).toBe(true);
  });
});

describe("mcpfleet validate with a reader that stops early (| head)", () => {
  it("stops writing without an error and exits with its verdict", async () => {
    // Far more output than a pipe holds, so that writes go on after the reader has gone.
    const servers = Array.from({ length: 3000 }, (_, i) =>
      res("MCPServer", `server-${i}`, { image: "ghcr.io/example/mcp:1", proxyPort: 70000 }),
    );
    const dir = writeTree(tempDir(), { "servers.yaml": yamlDocs(...servers) });
    const child = spawn(process.execPath, ["--import", TSX, MAIN, "validate", dir], {
      cwd: ROOT,
      env: cleanEnv(),
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect({ code, stderr }).toEqual({ code: 1, stderr: "" });
  });
});

// Under a pseudo-terminal, as a person runs it: what a terminal shows must be readable.
describe("mcpfleet validate on a terminal", () => {
  const runner = ttyRunner();
  if (typeof runner === "string") {
    it.skip(`skipped: no pseudo-terminal here (${runner})`, () => undefined);
    return;
  }
  const tty = (args: string[], cwd = ROOT, env: NodeJS.ProcessEnv = {}, stdoutTo?: string) =>
    runner([process.execPath, "--import", TSX, MAIN, ...args], {
      cwd,
      env: cleanEnv(env),
      ...(stdoutTo !== undefined ? { stdoutTo } : {}),
    });

  it("colours with real escape codes, never escaped ones", () => {
    const run = tty(["validate", join(dir, "invalid")]);
    expect(run.code).toBe(1);
    expect(run.output).not.toContain("\\u001b");
    const lines = run.output.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toMatch(
        new RegExp(
          `^${ESC}\\[1m\\S*server\\.yaml:\\d+:\\d+${ESC}\\[0m: [^${ESC}]* ${ESC}\\[31m\\(\\w+\\)${ESC}\\[0m$`,
        ),
      );
    }
  });

  it("has no colour with NO_COLOR", () => {
    const run = tty(["validate", join(dir, "invalid")], ROOT, { NO_COLOR: "1" });
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/^\S*server\.yaml:7:14: MCPServer\/default\/s: .* \(schema\)\n/);
    expect(run.output).not.toContain(ESC);
  });

  it("reads . with no path, and says so on one line", () => {
    const run = tty(["validate", "--summary"], join(dir, "valid"));
    expect(run.code).toBe(0);
    expect(run.output).toBe(
      "validate: no path given, reading the current directory (.); pipe YAML in or give - to read standard input\n" +
        "2 resources: 2 valid, 0 invalid, 0 skipped; 0 errors, 0 warnings\n",
    );
  });

  it("shows progress over many files on stderr only, and erases it", () => {
    const many = writeTree(
      tempDir(),
      Object.fromEntries(
        Array.from({ length: 60 }, (_, i) => [`s${i}.yaml`, GROUP.replace("eng", `g${i}`)]),
      ),
    );
    const out = join(tempDir(), "stdout.txt");
    const run = tty(["validate", "--summary", many], ROOT, {}, out);
    expect(run.code).toBe(0);
    expect(run.output).toMatch(/validate: 0\/60 files/);
    expect(run.output.endsWith(`\r${ESC}[2K`)).toBe(true);
    expect(readFileSync(out, "utf8")).toBe(
      "60 resources: 60 valid, 0 invalid, 0 skipped; 0 errors, 0 warnings\n",
    );
  });

  it("shows no progress when stderr is not a terminal", async () => {
    const many = writeTree(
      tempDir(),
      Object.fromEntries(
        Array.from({ length: 30 }, (_, i) => [`s${i}.yaml`, GROUP.replace("eng", `g${i}`)]),
      ),
    );
    const run = await mcpfleet(["validate", many]);
    expect(run).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});

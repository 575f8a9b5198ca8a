// The command as users run it: flags, standard input, output formats and exit codes 0/1/2,
// through the real entry point (src/cli/main.ts) in a child process.
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, res, tempDir, writeTree, yamlDocs } from "./helpers.js";

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

const dir = writeTree(tempDir(), {
  "valid/group.yaml": GROUP,
  "valid/server.yml": SERVER,
  "invalid/server.yaml": SERVER.replace("image: i", "image: i\n  proxyPort: 0"),
  "split/server.yaml": SERVER,
  "unknown/server.yaml": SERVER.replace("image: i", "image: i\n  colour: blue") + "---\n" + GROUP,
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
    name: "an unknown field is a warning",
    args: ["validate", join(dir, "unknown")],
    code: 0,
    stdout: /unknown field "colour" \(schema, warning\)/,
  },
  {
    name: "an unknown field with --strict",
    args: ["validate", "--strict", join(dir, "unknown")],
    code: 1,
    stdout: /unknown field "colour" \(schema\)/,
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
    stderr: /Unknown option '--frobnicate'; see mcpfleet validate --help \(ERR_USAGE\)/,
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

  it("reads . when no path is given", async () => {
    const run = await mcpfleet(["validate", "--summary"], undefined, join(dir, "valid"));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^2 resources: 2 valid/);
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
  const loaded = (path: string): boolean => {
    const run = spawnSync(
      process.execPath,
      ["--import", hook, "--import", TSX, MAIN, "validate", path],
      { cwd: ROOT, env: cleanEnv(), encoding: "utf8" },
    );
    const said = /yaml package loaded: (true|false)/.exec(run.stderr);
    if (said === null) throw new Error(`no answer from the hook: ${run.stderr}`);
    return said[1] === "true";
  };

  it("not for the examples", () => {
    expect(loaded("examples")).toBe(false);
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

// What the project ships, used as its users use it: the `npm pack` tarball installed with its
// production dependencies only, run as `mcpfleet`; the GitHub Action's validate step and the
// pre-commit hook's entry, run from that installation.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { examples, root } from "./helpers.js";

const work = mkdtempSync(join(tmpdir(), "mcpfleet-package-"));
const prefix = join(work, "prefix");
const installed = join(prefix, "lib", "node_modules", "mcpfleet");
const bin = join(prefix, "bin", "mcpfleet");
// npm and the installed command run with the Node running these tests (>= 22).
const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` };

function run(cmd: string, args: string[], extra: NodeJS.ProcessEnv = {}, cwd = work) {
  const r = spawnSync(cmd, args, { cwd, env: { ...env, ...extra }, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let files: string[] = [];

beforeAll(() => {
  const pack = run(
    "npm",
    ["pack", "--pack-destination", work, "--json", "--loglevel=error"],
    {},
    root,
  );
  expect(pack.status, pack.stderr).toBe(0);
  const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("["))) as {
    filename: string;
    files: { path: string }[];
  }[];
  files = info!.files.map((f) => f.path);
  const install = run("npm", [
    "install",
    "--global",
    "--prefix",
    prefix,
    join(work, info!.filename),
    "--omit=dev",
    "--prefer-offline",
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
  ]);
  expect(install.status, install.stderr).toBe(0);
}, 300_000);

const INVALID = `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: typo
spec:
  image: ghcr.io/example/server:1.0.0
  transprot: stdio
`;

describe("the npm package", () => {
  it("holds the compiled CLI, schemas and CRDs, and no sources, tests or tools", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "bin/mcpfleet.js",
        "build/src/cli/main.js",
        "generated/validators.cjs",
        "crds/mcpserver.yaml",
        "schemas-editor/mcpserver.json",
      ]),
    );
    const unwanted = files.filter((f) =>
      /^(src|test|bench|tools|scripts|examples|\.tools|node_modules)\/|\.ts$/.test(
        f.replace(/\.d\.ts$/, ""),
      ),
    );
    expect(unwanted).toEqual([]);
  });

  it("installs with production dependencies only and runs", () => {
    expect(run(bin, ["version"]).stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version,
    );
    const validate = run(bin, ["validate", examples, "--summary"]);
    expect(validate.stderr).toBe("");
    expect(validate.status).toBe(0);
    const synth = run(bin, ["synth", join(examples, "resources"), "-o", "yaml"]);
    expect(synth.status, synth.stderr).toBe(0);
    expect(synth.stdout).toContain("kind: Deployment");
    // No development dependency came along.
    const devOnly = ["vitest", "typescript", "eslint", "tsx", "oidc-provider", "fast-check"];
    const present = devOnly.filter(
      (name) => run("test", ["-e", join(installed, "node_modules", name)]).status === 0,
    );
    expect(present).toEqual([]);
  });
});

describe("integrations", () => {
  it("the GitHub Action's validate step passes valid input and fails a typo", () => {
    const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as {
      runs: { using: string; steps: { run?: string }[] };
    };
    expect(action.runs.using).toBe("composite");
    expect(action.runs.steps.map((s) => s.run).filter(Boolean)).toEqual([
      'bash "$GITHUB_ACTION_PATH/scripts/action-build.sh"',
      'bash "$GITHUB_ACTION_PATH/scripts/action-validate.sh"',
    ]);
    const step = join(root, "scripts", "action-validate.sh");
    const ok = run("bash", [step], {
      GITHUB_ACTION_PATH: installed,
      MCPFLEET_PATHS: `${join(examples, "resources")} ${join(examples, "gitops")}`,
      MCPFLEET_ARGS: "--summary",
    });
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/resources: \d+ valid, 0 invalid/);
    writeFileSync(join(work, "typo.yaml"), INVALID);
    const bad = run("bash", [step], {
      GITHUB_ACTION_PATH: installed,
      MCPFLEET_PATHS: join(work, "typo.yaml"),
      MCPFLEET_ARGS: "-o junit",
    });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain("<testsuites");
    expect(bad.stdout).toContain("transprot");
  });

  it("the pre-commit hook's entry validates the files of a commit", () => {
    const [hook] = parse(readFileSync(join(root, ".pre-commit-hooks.yaml"), "utf8")) as {
      id: string;
      entry: string;
      language: string;
      require_serial: boolean;
    }[];
    expect(hook).toMatchObject({
      id: "mcpfleet-validate",
      language: "system",
      require_serial: true,
    });
    const [command, ...args] = hook!.entry.split(" ");
    expect(command).toBe("mcpfleet");
    // pre-commit appends the staged files; a server whose group is in another file passes.
    const staged = [join(examples, "resources", "mcpserver-sse.yaml")];
    const ok = run(bin, [...args, ...staged]);
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    const bad = run(bin, [...args, join(work, "typo.yaml")]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('unknown field "transprot"');
  });
});

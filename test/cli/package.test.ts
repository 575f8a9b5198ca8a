// What the project ships, used as its users use it: the `npm pack` tarball installed with its
// production dependencies only, run as `mcpfleet`. (The GitHub Action and the pre-commit hook
// run the single executable instead: executable.test.ts.)
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
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

describe("the npm package", () => {
  it("holds the compiled CLI, schemas and CRDs, and no sources, tests or tools", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "bin/mcpfleet.js",
        "build/src/cli/main.js",
        "build/cli/main.js",
        "generated/validators/all.cjs",
        "generated/validators/registry-server.cjs",
        "crds/mcpserver.yaml",
        "docs/synth.md",
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
    // The documentation help points to is in the package.
    expect(run(bin, ["help", "synth"]).stdout).toMatch(/See mcpfleet docs synth/);
    const docs = run(bin, ["docs"]);
    expect(docs.stdout).toContain(`in ${join(installed, "docs")}`);
    expect(run(bin, ["docs", "synth"]).stdout).toBe(
      readFileSync(join(root, "docs", "synth.md"), "utf8"),
    );
    // No development dependency came along.
    const devOnly = ["vitest", "typescript", "eslint", "tsx", "oidc-provider", "fast-check"];
    const present = devOnly.filter(
      (name) => run("test", ["-e", join(installed, "node_modules", name)]).status === 0,
    );
    expect(present).toEqual([]);
  });
});

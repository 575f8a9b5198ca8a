// The single executable (`make release`, scripts/release.ts): one file that runs every command
// with no Node installed. Built here from the sources (kept under .tools/release/ by digest, so
// only a change rebuilds it), then run with an empty PATH and no project directory around it.
import { spawnSync } from "node:child_process";
import { arch } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { testNamespace } from "../cluster/controller-harness.js";
import { client, installCrds } from "../cluster/helpers.js";
import { root } from "./helpers.js";
import {
  type Cli,
  appliesDryRun,
  clusterCommands,
  run,
  scratch,
  servesRegistry,
  synthesizesExamples,
  validatesExamples,
} from "./smoke.js";

const out = scratch("executable");
const executable = join(out, `mcpfleet-linux-${arch()}`);
// Nothing to find on PATH (no node, no git), and a home of its own.
const cli: Cli = { argv: [executable], env: { PATH: "", HOME: out } };

beforeAll(() => {
  const built = spawnSync(
    process.execPath,
    ["--import", "tsx", join(root, "scripts", "release.ts"), "--out", out],
    { cwd: root, encoding: "utf8" },
  );
  expect(built.status, built.stderr).toBe(0);
}, 240_000);

describe("the single executable", () => {
  it("prints the version of package.json", async () => {
    const r = await run(cli, ["--version"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const pkg = (await import("../../package.json", { with: { type: "json" } })).default;
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it("validate", () => validatesExamples(cli));
  it("synth", () => synthesizesExamples(cli));
  it("apply --dry-run=client", () => appliesDryRun(cli));
  it("registry serve on the embedded store", () => servesRegistry(cli));

  it("validates core kinds with the Kubernetes schemas built into it", async () => {
    const dir = scratch("executable-kube");
    const file = join(dir, "deploy.yaml");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(
      file,
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: two}\n---\n" +
        "apiVersion: v1\nkind: Deployment\nmetadata: {name: y}\n",
    );
    const r = await run(cli, ["validate", file]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/\/spec\/replicas: must be integer/);
    expect(r.stdout).toMatch(/no Deployment in v1; Kubernetes serves it as apps\/v1/);
  });

  it("prints the documentation built into it, which help points to", async () => {
    const help = await run(cli, ["help", "synth"]);
    expect(help.stdout).toMatch(/See mcpfleet docs synth/);
    const list = await run(cli, ["docs"]);
    expect(list.status).toBe(0);
    expect(list.stdout).toContain(`built into ${executable}`);
    const doc = await run(cli, ["docs", "synth"]);
    expect(doc.status, doc.stderr).toBe(0);
    expect(doc.stdout.split("\n")[0]).toMatch(/^# /);
  });

  it.skipIf(noCluster())(
    "diff, controller --once and status against the test cluster",
    async () => {
      await installCrds(client());
      const kubeconfig = clusterKubeconfig()!;
      await clusterCommands(cli, kubeconfig, testNamespace(kubeconfig, "sea"));
    },
    120_000,
  );
});

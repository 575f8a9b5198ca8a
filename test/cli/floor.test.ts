// The floor: engines.node names the lowest Node on which every command works, and this proves
// it. The CLI as a checkout or the package runs it (bin/mcpfleet.js and the compiled build/) runs
// each command on exactly that Node release, installed from the npm registry by `make
// floor-node`; on the release before it, bin/mcpfleet.js stops every command at once with one
// line naming both. Without those Nodes in .tools/ the tests skip (REQUIRE_FLOOR_NODE=1, as in
// CI, fails them instead).
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
} from "node:fs";
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
  validatesOnServer,
} from "./smoke.js";

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  engines: { node: string };
};
const floor = /^>=(\d+\.\d+\.\d+)$/.exec(pkg.engines.node)?.[1];
/** The release before the floor, as the Makefile names it. */
const belowFloor = /^NODE_BELOW_FLOOR := (\S+)$/m.exec(
  readFileSync(join(root, "Makefile"), "utf8"),
)?.[1];

/** Where `make floor-node` installs Node VERSION. */
const nodeAt = (version: string | undefined): string =>
  join(root, ".tools", `node-${version}`, "node_modules", `node-linux-${arch()}`, "bin", "node");
const floorNode = nodeAt(floor);
const olderNode = nodeAt(belowFloor);
const missing = [floorNode, olderNode].filter((p) => !existsSync(p));
const skip = missing.length > 0 && process.env.REQUIRE_FLOOR_NODE !== "1";
if (skip) console.log(`floor tests skipped: no ${missing.join(", ")} (make floor-node)`);

describe("the Node floor", () => {
  it("is one exact release, the same in engines.node, bin/mcpfleet.js and the Makefile", () => {
    expect(floor).toBeDefined();
    const guard = /const FLOOR = \[(\d+), (\d+), (\d+)\];/.exec(
      readFileSync(join(root, "bin", "mcpfleet.js"), "utf8"),
    );
    expect(guard?.slice(1).join(".")).toBe(floor);
    expect(belowFloor).toBeDefined();
  });
});

describe.skipIf(skip)("every command on the floor Node", () => {
  // The checkout after `make`: bin/ and the compiled and bundled build/ beside the
  // installation's files.
  const tree = scratch("floor-tree");
  const cli: Cli = {
    argv: [floorNode, join(tree, "bin", "mcpfleet.js")],
    env: { PATH: "/usr/bin:/bin", HOME: tree },
  };

  beforeAll(() => {
    const tsc = spawnSync(
      process.execPath,
      [
        join(root, "node_modules", "typescript", "bin", "tsc"),
        "-p",
        join(root, "tsconfig.build.json"),
        "--outDir",
        join(tree, "build"),
        "--sourceMap",
        "false",
      ],
      { cwd: root, encoding: "utf8" },
    );
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
    mkdirSync(join(tree, "bin"));
    copyFileSync(join(root, "bin", "mcpfleet.js"), join(tree, "bin", "mcpfleet.js"));
    for (const f of ["package.json", "schemas", "crds", "generated", "docs", "node_modules"]) {
      symlinkSync(join(root, f), join(tree, f));
    }
    const bundle = spawnSync(
      process.execPath,
      ["--import", "tsx", join(root, "scripts", "bundle.ts"), "--build", join(tree, "build")],
      { cwd: root, encoding: "utf8" },
    );
    expect(bundle.status, bundle.stdout + bundle.stderr).toBe(0);
  }, 120_000);

  it("runs Node NODE_FLOOR itself", async () => {
    const r = await run({ argv: [floorNode], env: {} }, ["--version"]);
    expect(r.stdout.trim()).toBe(`v${floor}`);
  });

  it("version", async () => {
    const r = await run(cli, ["--version"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("validate", () => validatesExamples(cli));
  it("validate on a validate server", () => validatesOnServer(cli));
  it("synth", () => synthesizesExamples(cli));
  it("apply --dry-run=client", () => appliesDryRun(cli));
  it("registry serve on the embedded store", () => servesRegistry(cli));

  it.skipIf(noCluster())(
    "diff, controller --once and status against the test cluster",
    async () => {
      await installCrds(client());
      const kubeconfig = clusterKubeconfig()!;
      await clusterCommands(cli, kubeconfig, testNamespace(kubeconfig, "floor"));
    },
    120_000,
  );

  it("on the release before the floor, every command stops at once with one line, exit 1", async () => {
    for (const args of [["--version"], ["validate", "."], ["registry", "serve"], ["status"]]) {
      const r = await run({ argv: [olderNode, cli.argv[1]!], env: cli.env }, args);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        `mcpfleet: needs Node >= ${floor}, found Node ${belowFloor} (${realpathSync(olderNode)})\n`,
      );
      expect(r.status).toBe(1);
    }
  });
});

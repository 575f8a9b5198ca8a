// The single executable (`make release`, scripts/release.ts): one file that runs every command
// with no Node installed. Built here from the sources (kept under .tools/release/ by digest, so
// only a change rebuilds it), then run with an empty PATH and no project directory around it.
import { spawnSync } from "node:child_process";
import { createReadStream, existsSync, readFileSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { arch } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { testNamespace } from "../cluster/controller-harness.js";
import { client, installCrds } from "../cluster/helpers.js";
import { examples, root } from "./helpers.js";
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
  it("validate on a validate server", () => validatesOnServer(cli));
  it("synth", () => synthesizesExamples(cli));
  it("apply --dry-run=client", () => appliesDryRun(cli));
  it("registry serve on the embedded store", () => servesRegistry(cli));

  it("validates core kinds with the Kubernetes schemas built into it", async () => {
    const file = join(scratch("executable-kube"), "deploy.yaml");
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

  it("takes the code cache built for each bundle, whatever a run has done to its young generation", () => {
    // V8 refuses a cache made under other flags, and a validate run changes one as it goes (a
    // bundle first loaded after that was compiled anew: 100 ms for the packages).
    const work = join(root, ".tools", "release");
    const growth = pathToFileURL(join(root, "src", "young-generation-growth.ts")).href;
    const probe = `import { readFileSync } from "node:fs";
import { Script } from "node:vm";
import { setYoungGenerationGrowth, withCodeCacheFlags } from ${JSON.stringify(growth)};
const [path, factor] = process.argv.slice(2);
if (factor !== "-") setYoungGenerationGrowth(Number(factor));
const source = "(function (exports, require, module) {" + readFileSync(path, "utf8") + "\\n})";
const script = withCodeCacheFlags(() => new Script(source, { filename: path, cachedData: readFileSync(path + ".cache") }));
console.log(script.cachedDataRejected);
`;
    const probePath = join(scratch("executable-cache"), "probe.mts");
    writeFileSync(probePath, probe);
    for (const bundle of ["packages.cjs", "kube-models.cjs", "validators/all.cjs"]) {
      for (const factor of ["-", "1", "2"]) {
        const r = spawnSync(
          process.execPath,
          ["--import", "tsx", probePath, join(work, bundle), factor],
          { cwd: root, encoding: "utf8" },
        );
        expect([bundle, factor, r.stdout.trim()], r.stderr).toEqual([bundle, factor, "false"]);
      }
    }
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

// The Action and the pre-commit hook fetch the executable of their release over HTTP: here the
// release directory `make release` wrote, served on the loopback interface.
let server: Server | undefined;
let releaseUrl = "";
afterAll(() => server?.close());

async function serveRelease(): Promise<string> {
  if (server !== undefined) return releaseUrl;
  server = createServer((req, res) => {
    const file = join(out, basename(req.url ?? "/"));
    if (!existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200);
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return (releaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
}

const INVALID = `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: typo
spec:
  image: ghcr.io/example/server:1.0.0
  transprot: stdio
`;

/**
 * Runs a script of scripts/ as the Action or pre-commit would: bash, a plain PATH. Not waited
 * for synchronously: the release is served from this process.
 */
function script(name: string, args: string[], env: NodeJS.ProcessEnv) {
  return run(
    {
      argv: ["/bin/bash", join(root, "scripts", name)],
      env: { PATH: "/usr/bin:/bin", HOME: scratch("integration-home"), ...env },
    },
    args,
    scratch("integration-cwd"),
  );
}

describe("integrations that fetch the executable instead of building", () => {
  it("action.yml installs the executable of its release, then validates with it", async () => {
    const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as {
      runs: { using: string; steps: { run?: string; uses?: string }[] };
    };
    expect(action.runs.using).toBe("composite");
    expect(action.runs.steps.map((s) => s.run ?? s.uses)).toEqual([
      'bash "$GITHUB_ACTION_PATH/scripts/action-install.sh"',
      'bash "$GITHUB_ACTION_PATH/scripts/action-validate.sh"',
    ]);
    const runner = scratch("runner");
    const githubEnv = join(runner, "env");
    const githubPath = join(runner, "path");
    const install = await script("action-install.sh", [], {
      GITHUB_ACTION_PATH: root,
      MCPFLEET_RELEASE_URL: await serveRelease(),
      RUNNER_TOOL_CACHE: join(runner, "tool-cache"),
      GITHUB_ENV: githubEnv,
      GITHUB_PATH: githubPath,
    });
    expect(install.status, install.stderr).toBe(0);
    const exported = Object.fromEntries(
      readFileSync(githubEnv, "utf8")
        .trim()
        .split("\n")
        .map((l) => l.split("=", 2) as [string, string]),
    );
    expect(exported.MCPFLEET_EXECUTABLE).toMatch(/tool-cache\/mcpfleet\/[^/]+\/mcpfleet-linux-/);
    expect(readFileSync(githubPath, "utf8").trim()).toBe(join(exported.MCPFLEET_EXECUTABLE!, ".."));

    const ok = await script("action-validate.sh", [], {
      ...exported,
      MCPFLEET_PATHS: `${join(examples, "resources")} ${join(examples, "gitops")}`,
      MCPFLEET_ARGS: "--summary",
    });
    expect(ok.stderr).toBe("");
    expect(ok.stdout).toMatch(/resources: \d+ valid, 0 invalid/);
    expect(ok.status).toBe(0);
    const typo = join(scratch("typo"), "typo.yaml");
    writeFileSync(typo, INVALID);
    const bad = await script("action-validate.sh", [], {
      ...exported,
      MCPFLEET_PATHS: typo,
      MCPFLEET_ARGS: "-o junit",
    });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain("<testsuites");
    expect(bad.stdout).toContain("transprot");
  });

  it("the pre-commit hook fetches it once and validates the files of a commit", async () => {
    const hooks = parse(readFileSync(join(root, ".pre-commit-hooks.yaml"), "utf8")) as {
      id: string;
      entry: string;
      language: string;
      require_serial: boolean;
    }[];
    const hook = hooks.find((h) => h.id === "mcpfleet-validate");
    expect(hook).toMatchObject({ language: "script", require_serial: true });
    const [entry, ...args] = hook!.entry.split(" ");
    expect(entry).toBe("scripts/hook-validate.sh");
    const env = { MCPFLEET_RELEASE_URL: await serveRelease(), XDG_CACHE_HOME: scratch("cache") };
    // pre-commit appends the staged files; a server whose group is in another file passes.
    const ok = await script(
      basename(entry!),
      [...args, join(examples, "resources", "mcpserver-sse.yaml")],
      env,
    );
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    const typo = join(scratch("typo"), "typo.yaml");
    writeFileSync(typo, INVALID);
    // The second run uses the cached executable: a release URL that serves nothing is not asked.
    const bad = await script(basename(entry!), [...args, typo], {
      ...env,
      MCPFLEET_RELEASE_URL: "http://127.0.0.1:9/nothing",
    });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('unknown field "transprot"');
  });

  it("a download that does not match the release's SHA-256 is refused", async () => {
    const url = await serveRelease();
    const tampered = scratch("tampered");
    const name = basename(executable);
    // A release whose checksum file names other content.
    const sums = join(out, `${name}.sha256`);
    const original = readFileSync(sums, "utf8");
    writeFileSync(sums, `${"0".repeat(64)}  ${name}\n`);
    try {
      const r = await script("fetch-executable.sh", [url, tampered], {});
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/does not match its SHA-256/);
      expect(existsSync(join(tampered, name))).toBe(false);
    } finally {
      writeFileSync(sums, original);
    }
  });
});

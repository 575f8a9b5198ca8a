// End to end: a Git repository served over smart HTTP, `mcpfleet controller --target cluster`
// against the cluster of this run (the control plane the test run starts, or any cluster given
// with `make test-e2e KUBECONFIG=...`), in a namespace of its own that is deleted afterwards.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseControllerArgs, runController } from "../../src/cli/controller.js";
import { KubeClient } from "../../src/infra/kube/client.js";
import { type GitServer, publishRepo, pushRepo, startGitServer } from "../support/git-server.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { commitFiles, exampleRepo, gitCmd, tmp } from "../controller/helpers.js";
import { clusterControllerArgs } from "./controller-harness.js";

let git: GitServer;
let kubeconfig: string;
let client: KubeClient;
const ns = `mcpfleet-e2e-${randomBytes(3).toString("hex")}`;

beforeAll(async () => {
  if (noCluster()) return;
  git = await startGitServer();
  kubeconfig = clusterKubeconfig()!;
  client = KubeClient.fromFile(kubeconfig);
});

afterAll(async () => {
  if (noCluster()) return;
  await client.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  client.close();
  await git.stop();
});

const until = async (what: () => Promise<boolean>, ms = 60_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 200));
  }
};

const get = (apiVersion: string, kind: string, name: string) =>
  client.get({ apiVersion, kind, metadata: { name, namespace: ns } });

describe.skipIf(noCluster())("controller --target cluster, end to end", () => {
  it("applies, prunes a removed resource, refuses a broken revision and keeps the last good one", async () => {
    const repo = exampleRepo();
    publishRepo(git, repo.dir, "fleet.git");
    const cache = tmp("e2e-cache");
    const once = async () => {
      const err: string[] = [];
      const config = parseControllerArgs([
        "--once",
        ...clusterControllerArgs(`${git.url}/fleet.git`, kubeconfig),
        "-n",
        ns,
        "--controller-namespace",
        ns,
        "--cache-dir",
        cache,
      ])!;
      const code = await runController(config, { stdout: () => {}, stderr: (l) => err.push(l) });
      return { code, err };
    };

    const first = await once();
    expect(first.err.filter((l) => l.startsWith("error"))).toEqual([]);
    expect(first.code).toBe(0);
    expect(await get("apps/v1", "Deployment", "fetch")).toBeDefined();
    const server = await get("toolhive.stacklok.dev/v1alpha1", "MCPServer", "fetch");
    expect((server?.status as { observedGeneration?: number }).observedGeneration).toBe(
      server?.metadata.generation,
    );

    rmSync(join(repo.dir, "fleet", "mcpserver-streamable-http.yaml"));
    gitCmd(repo.dir, "commit", "-q", "-am", "remove fetch");
    pushRepo(git, repo.dir, "fleet.git");
    expect((await once()).code).toBe(0);
    await until(async () => (await get("apps/v1", "Deployment", "fetch")) === undefined);
    expect(await get("toolhive.stacklok.dev/v1alpha1", "MCPServer", "fetch")).toBeUndefined();

    commitFiles(repo.dir, { "fleet/mcpserver-github.yaml": "kind: MCPServer\nspec: [\n" }, "break");
    pushRepo(git, repo.dir, "fleet.git");
    const broken = await once();
    expect(broken.code).toBe(1);
    expect(broken.err.join("\n")).toMatch(/fleet\/mcpserver-github\.yaml:\d+:\d+/);
    expect(await get("apps/v1", "Deployment", "github")).toBeDefined();
  }, 90_000);
});

// End to end: a Git repository served over smart HTTP, `mcpfleet controller --target cluster`
// against a kubeconfig. By default the kubeconfig is the in-repo API double's; with
// MCPFLEET_E2E_KUBECONFIG (`make test-e2e KUBECONFIG=...`) the same steps run against a real
// cluster, in a namespace of their own that is deleted afterwards.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseControllerArgs, runController } from "../../src/cli/controller.js";
import { KubeClient } from "../../src/controller/kube-client.js";
import { type GitServer, publishRepo, pushRepo, startGitServer } from "../support/git-server.js";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { E2E_KUBECONFIG, clusterControllerArgs } from "./cluster-helpers.js";
import { commitFiles, exampleRepo, gitCmd, tmp } from "./helpers.js";

let git: GitServer;
let api: KubeApi | undefined;
let kubeconfig: string;
let client: KubeClient;
const ns = `mcpfleet-e2e-${randomBytes(3).toString("hex")}`;

beforeAll(async () => {
  git = await startGitServer();
  if (E2E_KUBECONFIG !== undefined && E2E_KUBECONFIG !== "") kubeconfig = E2E_KUBECONFIG;
  else {
    api = await startKubeApi();
    kubeconfig = api.kubeconfigPath;
  }
  client = KubeClient.fromFile(kubeconfig);
});

afterAll(async () => {
  await client.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  client.close();
  await api?.stop();
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

describe("controller --target cluster, end to end", () => {
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

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KubeApi } from "../support/kube-api/index.js";
import { harness, startApi, writes } from "./cluster-helpers.js";
import { commitFiles, exampleRepo } from "./helpers.js";

let api: KubeApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => {
  await api.stop();
});

describe("cluster target", () => {
  it("applies a repository, then makes no write for a commit that changes nothing", async () => {
    const repo = exampleRepo();
    const h = harness(api.kubeconfigPath, repo.dir);
    const first = await h.reconciler.sync();
    if (first.kind !== "applied") console.log(first);
    expect(first.kind).toBe("applied");
    const deployments = api.objects({ kind: "Deployment", namespace: "default" });
    expect(deployments.length).toBeGreaterThan(3);
    const fetch = deployments.find((d) => d.metadata.name === "fetch");
    expect(fetch?.metadata.ownerReferences?.[0]).toMatchObject({ kind: "MCPServer", name: "fetch" });

    commitFiles(repo.dir, { "README.md": "nothing rendered changes\n" }, "docs only");
    api.resetRequests();
    const second = await h.reconciler.sync();
    expect(second.kind).toBe("applied");
    expect(writes(api)).toBe(0);
    h.client.close();
  });
});

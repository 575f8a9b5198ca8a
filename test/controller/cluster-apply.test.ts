import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { KubeClient } from "../../src/controller/kube-client.js";
import { type KubeApi, type KObject } from "../support/kube-api/index.js";
import { apiForEachTest, harness, namedObject, writes } from "./cluster-helpers.js";
import { EXAMPLES, commitFiles, exampleRepo, gitCmd } from "./helpers.js";

let api: KubeApi;
apiForEachTest((started) => (api = started));

const named = (kind: string, name: string, namespace?: string): KObject | undefined =>
  namedObject(api, kind, name, namespace);

function inventoryKeys(): string[] {
  const cm = named("ConfigMap", "mcpfleet-inventory", "mcpfleet-system");
  const data = (cm?.binaryData as Record<string, string> | undefined)?.["inventory.json.gz"];
  if (data === undefined) return [];
  const list = JSON.parse(gunzipSync(Buffer.from(data, "base64")).toString()) as [string][];
  return list.map(([k]) => k);
}

describe("cluster target: apply, no-op, status", () => {
  it("applies CRDs, resources and owned workloads; a commit that changes nothing writes nothing", async () => {
    const repo = exampleRepo();
    const h = harness(api.kubeconfigPath, repo.dir);
    const first = await h.reconciler.sync();
    expect(first.kind).toBe("applied");
    expect(api.objects({ kind: "CustomResourceDefinition" })).toHaveLength(12);
    const fetch = named("Deployment", "fetch");
    const server = named("MCPServer", "fetch");
    expect(server).toBeDefined();
    expect(fetch?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "MCPServer",
      name: "fetch",
      uid: server?.metadata?.uid,
      controller: true,
    });
    expect(fetch?.metadata?.managedFields?.some((m) => m.manager === "mcpfleet")).toBe(true);
    // The apply order: CRDs before any custom resource, custom resources before workloads.
    const applies = api.requests.filter((r) => r.verb === "apply").map((r) => r.path);
    const firstCr = applies.findIndex((p) => p.includes("/apis/toolhive.stacklok.dev/"));
    const lastCrd = applies.map((p) => p.includes("customresourcedefinitions")).lastIndexOf(true);
    const firstDeployment = applies.findIndex((p) => p.includes("/deployments/"));
    const lastCr = applies.map((p) => p.includes("/apis/toolhive.stacklok.dev/")).lastIndexOf(true);
    expect(lastCrd).toBeLessThan(firstCr);
    expect(lastCr).toBeLessThan(firstDeployment);

    // Status: computed status, observedGeneration and the three conditions.
    const status = server?.status as {
      observedGeneration?: number;
      url?: string;
      phase?: string;
      conditions?: { type: string; status: string; reason?: string }[];
    };
    expect(status.observedGeneration).toBe(server?.metadata?.generation);
    expect(status.url).toContain("mcp-fetch-proxy.default.svc.cluster.local");
    const types = (status.conditions ?? []).map((c) => c.type);
    expect(types).toEqual(expect.arrayContaining(["Ready", "Reconciling", "Stalled"]));
    // The virtual servers' HMAC secrets were created once, outside the inventory.
    const hmac = named("Secret", "engineering-gateway-hmac-secret");
    expect(
      Buffer.from(String((hmac?.data as Record<string, string>)["hmac-secret"]), "base64"),
    ).toHaveLength(32);
    expect(inventoryKeys().some((k) => k.includes("hmac-secret"))).toBe(false);
    expect(inventoryKeys().some((k) => k === "apps/Deployment/default/fetch")).toBe(true);

    // A commit that changes no rendered object: zero write requests.
    commitFiles(repo.dir, { "README.md": "nothing rendered changes\n" }, "docs only");
    api.resetRequests();
    const second = await h.reconciler.sync();
    expect(second).toMatchObject({ kind: "applied", result: { applied: 0, pruned: 0 } });
    // Not even rendered: only the workloads are listed, for status.
    expect(api.requests.map((r) => r.verb)).toEqual(["list", "list"]);
    expect(writes(api)).toBe(0);

    // A change inside the watched directory that renders the same objects: rendered and
    // compared with the inventory's hashes, still no write.
    const file = join(repo.dir, "fleet", "mcpserver-github.yaml");
    commitFiles(
      repo.dir,
      { "fleet/mcpserver-github.yaml": `# reviewed\n${readFileSync(file, "utf8")}` },
      "comment",
    );
    api.resetRequests();
    const third = await h.reconciler.sync();
    expect(third).toMatchObject({ kind: "applied", result: { applied: 0, pruned: 0 } });
    if (third.kind === "applied") expect(third.result.unchanged).toBeGreaterThan(50);
    expect(api.requests.length).toBeGreaterThan(0);
    expect(writes(api)).toBe(0);

    // Readiness from the cluster: the Deployment reports ready replicas, status follows.
    const client = KubeClient.fromFile(api.kubeconfigPath);
    await client.mergePatch(
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "fetch", namespace: "default" },
      },
      { status: { replicas: 1, readyReplicas: 1 } },
      { subresource: "status" },
    );
    // No new commit: the poll finds the revision applied and refreshes status only.
    api.resetRequests();
    expect((await h.reconciler.sync()).kind).toBe("unchanged");
    expect(api.requests.filter((r) => r.method !== "GET").map((r) => r.path)).toEqual([
      "/apis/toolhive.stacklok.dev/v1alpha1/namespaces/default/mcpservers/fetch/status",
    ]);
    const ready = named("MCPServer", "fetch")?.status as { readyReplicas?: number; phase?: string };
    expect(ready.readyReplicas).toBe(1);
    expect(ready.phase).toBe("Ready");
    client.close();
    h.client.close();
  });

  it("re-applies everything when drift correction is due", async () => {
    const repo = exampleRepo();
    let now = 1_000_000;
    const h = harness(api.kubeconfigPath, repo.dir, {
      driftIntervalMs: 60_000,
      now: () => now,
    });
    expect((await h.reconciler.sync()).kind).toBe("applied");
    api.resetRequests();
    now += 61_000;
    const outcome = await h.reconciler.sync();
    expect(outcome.kind).toBe("applied");
    expect(api.requests.filter((r) => r.verb === "apply").length).toBeGreaterThan(50);
    h.client.close();
  });
});

describe("cluster target: prune and invalid revisions", () => {
  it("prunes a removed resource's workloads, never objects it did not create", async () => {
    const repo = exampleRepo();
    const h = harness(api.kubeconfigPath, repo.dir);
    expect((await h.reconciler.sync()).kind).toBe("applied");
    // Someone else's object, labelled like ours but not applied by the controller.
    const client = KubeClient.fromFile(api.kubeconfigPath);
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "hand-made",
        namespace: "default",
        labels: { "app.kubernetes.io/managed-by": "mcpfleet" },
      },
    });

    // A broken file: nothing applied, nothing deleted, the error names file and line.
    rmSync(join(repo.dir, "fleet", "mcpserver-streamable-http.yaml"));
    commitFiles(
      repo.dir,
      {
        "fleet/broken.yaml":
          "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata:\n  name: broken\nspec:\n  proxyPort: 70000\n",
      },
      "remove fetch, break a file",
    );
    api.resetRequests();
    const invalid = await h.reconciler.sync();
    expect(invalid.kind).toBe("invalid");
    // The only write is the Warning Event that reports it.
    const written = api.requests.filter((r) => r.method !== "GET");
    expect(written.map((r) => r.path)).toEqual(["/api/v1/namespaces/mcpfleet-system/events"]);
    expect(named("Deployment", "fetch")).toBeDefined();
    expect(h.status.lastError?.message).toMatch(/fleet\/broken\.yaml:\d+:\d+/);

    // Fixed: the removed resource's objects go, the hand-made one stays.
    gitCmd(repo.dir, "rm", "-q", "fleet/broken.yaml");
    gitCmd(repo.dir, "commit", "-q", "-m", "fix");
    const fixed = await h.reconciler.sync();
    expect(fixed.kind).toBe("applied");
    if (fixed.kind === "applied") expect(fixed.result.pruned).toBeGreaterThan(2);
    expect(named("MCPServer", "fetch")).toBeUndefined();
    expect(named("Deployment", "fetch")).toBeUndefined();
    expect(named("Service", "mcp-fetch-proxy")).toBeUndefined();
    expect(named("ConfigMap", "hand-made")).toBeDefined();
    expect(named("Deployment", "github")).toBeDefined();
    expect(inventoryKeys().some((k) => k.endsWith("/fetch"))).toBe(false);
    client.close();
    h.client.close();
  });

  it("without --prune keeps what the repository no longer renders", async () => {
    const repo = exampleRepo();
    const h = harness(api.kubeconfigPath, repo.dir, { prune: false });
    await h.reconciler.sync();
    rmSync(join(repo.dir, "fleet", "mcpserver-sse.yaml"));
    gitCmd(repo.dir, "commit", "-q", "-am", "remove sse");
    const outcome = await h.reconciler.sync();
    expect(outcome).toMatchObject({ kind: "applied", result: { pruned: 0 } });
    const removed = readFileSync(join(EXAMPLES, "mcpserver-sse.yaml"), "utf8");
    const name = /^ {2}name: (\S+)/m.exec(removed)?.[1] ?? "";
    expect(named("MCPServer", name)).toBeDefined();
    h.client.close();
  });
});

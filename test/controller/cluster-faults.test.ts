import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KubeClient } from "../../src/controller/kube-client.js";
import { type KubeApi, type KObject } from "../support/kube-api/index.js";
import { apiForEachTest, harness, namedObject } from "./cluster-helpers.js";
import { commitFiles, exampleRepo, gitCmd } from "./helpers.js";

let api: KubeApi;
apiForEachTest((started) => (api = started));

const named = (kind: string, name: string, namespace?: string): KObject | undefined =>
  namedObject(api, kind, name, namespace);

describe("cluster target: API faults", () => {
  it("retries 500s, 409s and 429s with backoff and converges", async () => {
    const repo = exampleRepo();
    const h = harness(api.kubeconfigPath, repo.dir);
    api.failNext({ verb: "apply", path: /\/deployments\// }, 500, 2);
    api.failNext({ verb: "apply", path: /\/services\// }, 409, 2);
    api.failNext({ verb: "apply", path: /\/mcpservers\// }, 429, 1, { retryAfterSeconds: 0 });
    const outcome = await h.reconciler.sync();
    expect(outcome.kind).toBe("applied");
    expect(api.requests.filter((r) => r.injected).length).toBe(5);
    expect(named("Deployment", "fetch")).toBeDefined();
    h.client.close();
  });

  it("a controller stopped mid-apply, restarted on a newer revision, converges with nothing orphaned", async () => {
    const repo = exampleRepo();
    const h1 = harness(api.kubeconfigPath, repo.dir, {
      backoff: { baseMs: 1, capMs: 2, maxAttempts: 2 },
    });
    // Every Deployment write fails: the run stops after Services, ConfigMaps and RBAC went out.
    api.failNext({ verb: "apply", path: /\/deployments\// }, 500, 1000);
    const failed = await h1.reconciler.sync();
    expect(failed).toMatchObject({ kind: "failed", stage: "apply" });
    expect(h1.status.lastError?.message).toMatch(/Deployment default\/\S+/);
    expect(named("Service", "mcp-fetch-proxy")).toBeDefined();
    expect(named("Deployment", "fetch")).toBeUndefined();
    // The failure is an Event on the inventory, and the resources are Stalled.
    const events = api.objects({ kind: "Event", namespace: "mcpfleet-system" });
    expect(events.some((e) => String(e.message).includes("Deployment"))).toBe(true);
    h1.client.close();
    api.clearFaults();

    // Meanwhile the fetch server is removed from the repository; a new process picks up.
    rmSync(join(repo.dir, "fleet", "mcpserver-streamable-http.yaml"));
    gitCmd(repo.dir, "commit", "-q", "-am", "remove fetch");
    const h2 = harness(api.kubeconfigPath, repo.dir);
    const outcome = await h2.reconciler.sync();
    expect(outcome.kind).toBe("applied");
    expect(named("Deployment", "github")).toBeDefined();
    // What the stopped run created for fetch was in the inventory, so it is pruned, not orphaned.
    expect(named("Service", "mcp-fetch-proxy")).toBeUndefined();
    expect(named("MCPServer", "fetch")).toBeUndefined();
    const leftovers = api
      .objects({ namespace: "default" })
      .filter((o) => JSON.stringify(o.metadata?.labels ?? {}).includes('"fetch"'));
    expect(leftovers).toEqual([]);
    h2.client.close();
  });
});

describe("cluster target: immutable fields", () => {
  async function divergedSelector(repoDir: string): Promise<void> {
    // The live Deployment has a selector the new render does not (as after a rename of labels).
    const client = KubeClient.fromFile(api.kubeconfigPath);
    const ref = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "fetch", namespace: "default" },
    };
    const live = await client.get(ref);
    await client.delete(ref);
    const spec = live?.spec as { template: { metadata: { labels: Record<string, string> } } };
    await client.create(
      {
        ...ref,
        metadata: { ...ref.metadata, annotations: live?.metadata.annotations ?? {} },
        spec: {
          ...spec,
          selector: { matchLabels: { legacy: "fetch" } },
          template: {
            ...spec.template,
            metadata: { labels: { ...spec.template.metadata.labels, legacy: "fetch" } },
          },
        },
      },
      { fieldManager: "kubectl-create" },
    );
    client.close();
    commitFiles(
      repoDir,
      {
        "fleet/mcpserver-streamable-http.yaml": (await import("node:fs"))
          .readFileSync(join(repoDir, "fleet", "mcpserver-streamable-http.yaml"), "utf8")
          .replace("value: info", "value: debug"),
      },
      "debug logs",
    );
  }

  it("reports a selector change clearly without --force-recreate", async () => {
    const repo = exampleRepo();
    const h = harness(api.kubeconfigPath, repo.dir);
    await h.reconciler.sync();
    await divergedSelector(repo.dir);
    const outcome = await h.reconciler.sync();
    expect(outcome).toMatchObject({ kind: "failed", code: "ERR_IMMUTABLE_FIELD" });
    if (outcome.kind === "failed") {
      expect(outcome.message).toContain("Deployment default/fetch");
      expect(outcome.message).toContain("spec.selector");
      expect(outcome.message).toContain("--force-recreate");
    }
    h.client.close();
  });

  it("deletes and recreates with --force-recreate", async () => {
    const repo = exampleRepo();
    const h = harness(api.kubeconfigPath, repo.dir, { forceRecreate: true });
    await h.reconciler.sync();
    await divergedSelector(repo.dir);
    const outcome = await h.reconciler.sync();
    expect(outcome.kind).toBe("applied");
    if (outcome.kind === "applied") {
      expect(outcome.result.changes.some((c) => c.action === "recreated")).toBe(true);
    }
    const dep = named("Deployment", "fetch");
    expect(JSON.stringify((dep?.spec as { selector: unknown }).selector)).not.toContain("legacy");
    h.client.close();
  });
});

describe("cluster target: stopping", () => {
  it("stops between apply stages when asked (SIGTERM) and the next run completes", async () => {
    const repo = exampleRepo();
    let stages = 0;
    const h1 = harness(api.kubeconfigPath, repo.dir, {
      // Asked to stop once the CRDs and Namespaces are in.
      stopping: () => ++stages > 2,
    });
    const stopped = await h1.reconciler.sync();
    expect(stopped).toMatchObject({ kind: "failed", code: "ERR_INTERRUPTED" });
    expect(api.objects({ kind: "CustomResourceDefinition" })).toHaveLength(12);
    expect(named("MCPServer", "fetch")).toBeUndefined();
    h1.client.close();
    const h2 = harness(api.kubeconfigPath, repo.dir);
    expect((await h2.reconciler.sync()).kind).toBe("applied");
    expect(named("Deployment", "fetch")).toBeDefined();
    h2.client.close();
  });
});

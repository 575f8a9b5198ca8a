// The controller's cluster target against the real API server, through the recording proxy (to
// count what it sends): first apply in stage order, a no-op poll that writes nothing, status
// from real Deployments, drift correction after another field manager's edit, server-side apply
// conflicts, pruning, invalid revisions, immutable fields and stopping between stages.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { type ApiProxy, startApiProxy } from "../support/cluster/proxy.js";
import {
  EXAMPLES,
  commitDebugLogLevel,
  commitFiles,
  exampleRepo,
  gitCmd,
} from "../controller/helpers.js";
import { harness, reportPodReady, testNamespace, until } from "./controller-harness.js";
import { kubectl } from "./helpers.js";
import type { LiveCondition } from "../../src/controller/conditions.js";

let proxy: ApiProxy;
beforeAll(async () => {
  if (!noCluster()) proxy = await startApiProxy(clusterKubeconfig()!);
});
afterAll(async () => {
  await proxy?.stop();
});

const setup = (opts: Parameters<typeof harness>[3] = {}) => {
  const repo = exampleRepo();
  const ns = testNamespace(clusterKubeconfig()!);
  return { repo, h: harness(proxy.kubeconfigPath, repo.dir, ns, opts) };
};

type Conditions = { type: string; status: string }[];

describe.skipIf(noCluster())("cluster target on the API server: apply and no-op", () => {
  it("applies CRDs, resources and owned workloads in order; a commit that changes nothing writes nothing", async () => {
    const { repo, h } = setup();
    proxy.resetRequests();
    const first = await h.reconciler.sync();
    expect(first.kind).toBe("applied");
    const mine = proxy.requests.filter((r) => r.status > 0);
    expect(mine.filter((r) => r.status >= 400 && r.status !== 404)).toEqual([]);

    const fetch = await h.get("Deployment", "fetch");
    const server = await h.get("MCPServer", "fetch");
    expect(fetch?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "MCPServer",
      name: "fetch",
      uid: server?.metadata.uid,
      controller: true,
    });
    const managers = (
      fetch?.metadata.managedFields as { manager: string; operation: string }[]
    ).map((m) => `${m.manager}/${m.operation}`);
    expect(managers).toContain("mcpfleet/Apply");
    // Stage order: every CRD, then custom resources, then their workloads.
    const applies = mine.filter((r) => r.verb === "apply").map((r) => r.path);
    const lastCrd = applies.map((p) => p.includes("customresourcedefinitions")).lastIndexOf(true);
    const firstCr = applies.findIndex((p) => p.includes("/apis/toolhive.stacklok.dev/"));
    const lastCr = applies.map((p) => p.includes("/apis/toolhive.stacklok.dev/")).lastIndexOf(true);
    const firstDeployment = applies.findIndex((p) => p.includes("/deployments/"));
    expect(lastCrd).toBeGreaterThanOrEqual(0);
    expect(lastCrd).toBeLessThan(firstCr);
    expect(lastCr).toBeLessThan(firstDeployment);
    // Each CRD was read back (Established) before the first custom resource went out.
    const firstCrAt = mine.findIndex(
      (r) => r.verb === "apply" && r.path.includes("/apis/toolhive.stacklok.dev/"),
    );
    const crdReads = mine
      .slice(0, firstCrAt)
      .filter((r) => r.verb === "get" && r.path.includes("customresourcedefinitions/"));
    expect(new Set(crdReads.map((r) => r.path)).size).toBe(12);

    const status = server?.status as {
      observedGeneration?: number;
      url?: string;
      conditions?: Conditions;
    };
    expect(status.observedGeneration).toBe(server?.metadata.generation);
    expect(status.url).toContain(`mcp-fetch-proxy.${h.ns}.svc.cluster.local`);
    expect((status.conditions ?? []).map((c) => c.type)).toEqual(
      expect.arrayContaining(["Ready", "Reconciling", "Stalled"]),
    );
    const hmac = await h.get("Secret", "engineering-gateway-hmac-secret");
    expect(
      Buffer.from(String((hmac?.data as Record<string, string>)["hmac-secret"]), "base64"),
    ).toHaveLength(32);
    const keys = [...(await h.inventory()).keys()];
    expect(keys.some((k) => k.includes("hmac-secret"))).toBe(false);
    expect(keys).toContain(`apps/Deployment/${h.ns}/fetch`);

    // A commit that renders nothing new: nothing written, only the workloads listed for status.
    commitFiles(repo.dir, { "README.md": "nothing rendered changes\n" }, "docs only");
    proxy.resetRequests();
    const second = await h.reconciler.sync();
    expect(second).toMatchObject({ kind: "applied", result: { applied: 0, pruned: 0 } });
    expect(proxy.requests.map((r) => r.verb)).toEqual(["list", "list"]);

    // Same objects from a changed file: rendered and compared with the inventory, no write.
    const file = join(repo.dir, "fleet", "mcpserver-github.yaml");
    commitFiles(
      repo.dir,
      { "fleet/mcpserver-github.yaml": `# reviewed\n${readFileSync(file, "utf8")}` },
      "comment",
    );
    proxy.resetRequests();
    const third = await h.reconciler.sync();
    expect(third).toMatchObject({ kind: "applied", result: { applied: 0, pruned: 0 } });
    expect(proxy.requests.length).toBeGreaterThan(0);
    expect(proxy.writes()).toBe(0);
    h.close();
  }, 120_000);

  it("status follows the Deployment that kube-controller-manager rolls out, and observedGeneration the spec", async () => {
    const { repo, h } = setup();
    expect((await h.reconciler.sync()).kind).toBe("applied");
    // No kubelet: play its part and report fetch's pod Ready; the ReplicaSet and Deployment
    // controllers carry it up to the Deployment's status.
    await reportPodReady(h, "fetch");
    // No new commit: the poll refreshes status only, and writes nothing but status.
    proxy.resetRequests();
    expect((await h.reconciler.sync()).kind).toBe("unchanged");
    const written = proxy.requests.filter((r) => r.method !== "GET").map((r) => r.path);
    expect(written).toContain(
      `/apis/toolhive.stacklok.dev/v1alpha1/namespaces/${h.ns}/mcpservers/fetch/status`,
    );
    expect(written.every((p) => p.endsWith("/status"))).toBe(true);
    const ready = (await h.get("MCPServer", "fetch"))?.status as {
      readyReplicas?: number;
      phase?: string;
    };
    expect(ready).toMatchObject({ readyReplicas: 1, phase: "Ready" });

    // A spec change bumps the generation; status says it was seen.
    const before = (await h.get("MCPServer", "fetch"))?.metadata.generation ?? 0;
    commitDebugLogLevel(repo.dir);
    expect((await h.reconciler.sync()).kind).toBe("applied");
    const after = await h.get("MCPServer", "fetch");
    expect(after?.metadata.generation).toBe(before + 1);
    expect((after?.status as { observedGeneration?: number }).observedGeneration).toBe(before + 1);
    h.close();
  }, 120_000);
});

describe.skipIf(noCluster())("cluster target on the API server: other field managers", () => {
  it("drift correction takes back a field another manager changed, and leaves fields it does not set", async () => {
    let now = 1_000_000;
    const { h } = setup({ driftIntervalMs: 60_000, now: () => now });
    expect((await h.reconciler.sync()).kind).toBe("applied");
    const config = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "fetch-runconfig", namespace: h.ns },
    };
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "fetch", namespace: h.ns },
    };
    const rendered = ((await h.client.get(config))?.data as Record<string, string>)[
      "runconfig.json"
    ];
    expect(rendered).toBeDefined();
    // Someone edits the run-config by hand, and scales the Deployment (Updates by others).
    await h.client.mergePatch(
      config,
      { data: { "runconfig.json": "{}" } },
      { fieldManager: "kubectl-edit" },
    );
    await h.client.mergePatch(
      deployment,
      { spec: { replicas: 3 } },
      { fieldManager: "kubectl-scale" },
    );
    const data = async () =>
      ((await h.client.get(config))?.data as Record<string, string>)["runconfig.json"];
    // A poll before drift correction is due leaves it alone.
    expect((await h.reconciler.sync()).kind).toBe("unchanged");
    expect(await data()).toBe("{}");
    // Drift correction re-applies what drifted (the run-config only), forcing ownership back.
    now += 61_000;
    proxy.resetRequests();
    expect((await h.reconciler.sync()).kind).toBe("applied");
    expect(proxy.requests.filter((r) => r.verb === "apply").map((r) => r.path)).toEqual([
      `/api/v1/namespaces/${h.ns}/configmaps/fetch-runconfig`,
    ]);
    expect(await data()).toBe(rendered);
    const live = await h.client.get(config);
    const owners = (live?.metadata.managedFields as { manager: string; fieldsV1?: unknown }[])
      .filter((m) => JSON.stringify(m.fieldsV1 ?? {}).includes('"f:runconfig.json"'))
      .map((m) => m.manager);
    expect(owners).toEqual(["mcpfleet"]);
    // replicas is not rendered (the examples leave it to the cluster): the other manager's value
    // stays, as it does for an autoscaler.
    expect(((await h.client.get(deployment))?.spec as { replicas: number }).replicas).toBe(3);
    h.close();
  }, 120_000);

  it("another manager's server-side apply of our field conflicts, names us, and is taken back", async () => {
    let now = 1_000_000;
    const { h } = setup({ driftIntervalMs: 60_000, now: () => now });
    expect((await h.reconciler.sync()).kind).toBe("applied");
    const patch = [
      "apiVersion: v1",
      "kind: Service",
      "metadata:",
      "  name: mcp-fetch-proxy",
      `  namespace: ${h.ns}`,
      "spec:",
      "  ports:",
      "  - port: 8080",
      "    name: http",
      "    targetPort: 9999",
      "",
    ].join("\n");
    const refused = kubectl(
      ["apply", "--server-side", "--field-manager=someone", "-f", "-"],
      patch,
    );
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/conflict/i);
    expect(refused.stderr).toContain('"mcpfleet"');
    const taken = kubectl(
      ["apply", "--server-side", "--force-conflicts", "--field-manager=someone", "-f", "-"],
      patch,
    );
    expect(taken.status, taken.stderr).toBe(0);
    const ref = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "mcp-fetch-proxy", namespace: h.ns },
    };
    const port = async () =>
      ((await h.client.get(ref))?.spec as { ports: { targetPort: unknown }[] }).ports[0]
        ?.targetPort;
    expect(await port()).toBe(9999);
    // The controller always forces: its next drift correction wins the field back without an
    // error.
    now += 61_000;
    expect((await h.reconciler.sync()).kind).toBe("applied");
    expect(await port()).not.toBe(9999);
    h.close();
  }, 120_000);
});

describe.skipIf(noCluster())(
  "cluster target on the API server: prune and invalid revisions",
  () => {
    it("prunes a removed resource and what Kubernetes collects with it, never objects it did not create", async () => {
      const { repo, h } = setup();
      expect((await h.reconciler.sync()).kind).toBe("applied");
      await h.client.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: "hand-made",
          namespace: h.ns,
          labels: { "app.kubernetes.io/managed-by": "mcpfleet" },
        },
      });
      rmSync(join(repo.dir, "fleet", "mcpserver-streamable-http.yaml"));
      commitFiles(
        repo.dir,
        {
          "fleet/broken.yaml":
            "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata:\n  name: broken\nspec:\n  proxyPort: 70000\n",
        },
        "remove fetch, break a file",
      );
      proxy.resetRequests();
      const invalid = await h.reconciler.sync();
      expect(invalid.kind).toBe("invalid");
      // Nothing of the revision is written: only the Warning Event that reports it, and the
      // Stalled condition on each custom resource in place (one status write each).
      const writes = proxy.requests.filter((r) => r.method !== "GET").map((r) => r.path);
      expect(writes.filter((p) => !p.endsWith("/status"))).toEqual([
        `/api/v1/namespaces/${h.ns}/events`,
      ]);
      const inPlace = [...((await h.applier.inventory.read())?.entries.values() ?? [])].filter(
        (e) => e.uid !== undefined,
      );
      const statusWrites = writes.filter((p) => p.endsWith("/status"));
      expect(statusWrites.map((p) => p.split("/").at(-2)).sort()).toEqual(
        inPlace.map((e) => e.name).sort(),
      );
      const fetch = (await h.get("MCPServer", "fetch"))?.status as { conditions: LiveCondition[] };
      expect(fetch.conditions.find((c) => c.type === "Stalled")).toMatchObject({
        status: "True",
        reason: "ValidationFailed",
      });
      expect(await h.get("Deployment", "fetch")).toBeDefined();
      expect(h.status.lastError?.message).toMatch(/fleet\/broken\.yaml:\d+:\d+/);
      const events = await h.list("Event");
      expect(
        events.some((e) => e.type === "Warning" && String(e.message).includes("broken.yaml")),
      ).toBe(true);

      gitCmd(repo.dir, "rm", "-q", "fleet/broken.yaml");
      gitCmd(repo.dir, "commit", "-q", "-m", "fix");
      const fixed = await h.reconciler.sync();
      expect(fixed.kind).toBe("applied");
      if (fixed.kind === "applied") expect(fixed.result.pruned).toBeGreaterThan(2);
      expect(await h.get("MCPServer", "fetch")).toBeUndefined();
      expect(await h.get("Service", "mcp-fetch-proxy")).toBeUndefined();
      // The Deployment is pruned; its ReplicaSet and Pod go with it through the garbage collector.
      await until("fetch's Deployment, ReplicaSets and Pods are gone", async () => {
        const left = [
          ...(await h.list("Deployment")),
          ...(await h.list("ReplicaSet")),
          ...(await h.list("Pod")),
        ].filter((o) => o.metadata.name === "fetch" || o.metadata.name.startsWith("fetch-"));
        return left.length === 0;
      });
      expect(await h.get("ConfigMap", "hand-made")).toBeDefined();
      expect(await h.get("Deployment", "github")).toBeDefined();
      expect([...(await h.inventory()).keys()].some((k) => k.endsWith("/fetch"))).toBe(false);
      h.close();
    }, 120_000);

    it("without --prune keeps what the repository no longer renders", async () => {
      const { repo, h } = setup({ prune: false });
      await h.reconciler.sync();
      rmSync(join(repo.dir, "fleet", "mcpserver-sse.yaml"));
      gitCmd(repo.dir, "commit", "-q", "-am", "remove sse");
      expect(await h.reconciler.sync()).toMatchObject({ kind: "applied", result: { pruned: 0 } });
      const removed = readFileSync(join(EXAMPLES, "mcpserver-sse.yaml"), "utf8");
      const name = /^ {2}name: (\S+)/m.exec(removed)?.[1] ?? "";
      expect(await h.get("MCPServer", name)).toBeDefined();
      h.close();
    }, 120_000);
  },
);

describe.skipIf(noCluster())(
  "cluster target on the API server: immutable fields and stopping",
  () => {
    /** The live Deployment gets a selector the render does not have (as after relabelling). */
    async function divergedSelector(
      h: ReturnType<typeof setup>["h"],
      repoDir: string,
    ): Promise<void> {
      const ref = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "fetch", namespace: h.ns },
      };
      const live = await h.client.get(ref);
      await h.client.delete(ref, { propagationPolicy: "Foreground" });
      await until("fetch is deleted", async () => (await h.client.get(ref)) === undefined);
      const spec = live?.spec as { template: { metadata: { labels: Record<string, string> } } };
      await h.client.create(
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
      commitDebugLogLevel(repoDir);
    }

    it("reports a selector change clearly without --force-recreate", async () => {
      const { repo, h } = setup();
      await h.reconciler.sync();
      await divergedSelector(h, repo.dir);
      const outcome = await h.reconciler.sync();
      expect(outcome).toMatchObject({ kind: "failed", code: "ERR_IMMUTABLE_FIELD" });
      if (outcome.kind === "failed") {
        expect(outcome.message).toContain(`Deployment ${h.ns}/fetch`);
        expect(outcome.message).toContain("spec.selector");
        expect(outcome.message).toContain("--force-recreate");
      }
      h.close();
    }, 120_000);

    it("deletes and recreates with --force-recreate", async () => {
      const { repo, h } = setup({ forceRecreate: true });
      await h.reconciler.sync();
      await divergedSelector(h, repo.dir);
      const outcome = await h.reconciler.sync();
      expect(outcome.kind).toBe("applied");
      if (outcome.kind === "applied")
        expect(outcome.result.changes.some((c) => c.action === "recreated")).toBe(true);
      const dep = await h.get("Deployment", "fetch");
      expect(JSON.stringify((dep?.spec as { selector: unknown }).selector)).not.toContain("legacy");
      h.close();
    }, 120_000);

    it("stops between apply stages when asked (SIGTERM) and the next run completes", async () => {
      const repo = exampleRepo();
      const ns = testNamespace(clusterKubeconfig()!);
      let stages = 0;
      const h1 = harness(proxy.kubeconfigPath, repo.dir, ns, { stopping: () => ++stages > 2 });
      expect(await h1.reconciler.sync()).toMatchObject({ kind: "failed", code: "ERR_INTERRUPTED" });
      expect(await h1.get("MCPServer", "fetch")).toBeUndefined();
      h1.close();
      const h2 = harness(proxy.kubeconfigPath, repo.dir, ns);
      expect((await h2.reconciler.sync()).kind).toBe("applied");
      expect(await h2.get("Deployment", "fetch")).toBeDefined();
      h2.close();
    }, 120_000);
  },
);

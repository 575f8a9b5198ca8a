// `mcpfleet controller` as processes against the real API server (through the proxy, which slows
// requests down when a test needs an apply in flight): two controllers elect one leader through a
// Lease; SIGTERM mid-apply finishes the stage in flight, releases the Lease and exits 0; a leader
// killed with SIGKILL mid-apply is replaced once its Lease expires, and the new leader converges
// with nothing orphaned.
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { APPLIED_BY, clusterPlan } from "../../src/controller/cluster-plan.js";
import { type PlannedObject, STAGES, objectKey } from "../../src/controller/revision-plan.js";
import { renderDirectory } from "../../src/controller/pipeline.js";
import type { LiveObject } from "../../src/infra/kube/client.js";
import { type GitServer, publishRepo, pushRepo, startGitServer } from "../support/git-server.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { type ApiProxy, startApiProxy } from "../support/cluster/proxy.js";
import { commitFiles, exampleRepo, tmp } from "../controller/helpers.js";
import {
  type Harness,
  harness,
  testNamespace,
  until,
  clusterControllerArgs,
} from "./controller-harness.js";
import { ROOT, installCrds, client } from "./helpers.js";

let proxy: ApiProxy;
let git: GitServer;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (noCluster()) return;
  proxy = await startApiProxy(clusterKubeconfig()!);
  git = await startGitServer();
  await installCrds(client());
});
afterEach(() => {
  proxy?.setLatency(0);
  for (const c of children.splice(0))
    if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});
afterAll(async () => {
  await proxy?.stop();
  await git?.stop();
});

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `mcpfleet controller` on the cluster target, resources and Lease in `ns`. */
function controller(repoUrl: string, ns: string, podName: string, extra: string[]): Proc {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "src/cli/main.ts"),
      "controller",
      ...clusterControllerArgs(repoUrl, proxy.kubeconfigPath),
      "-n",
      ns,
      "--controller-namespace",
      ns,
      "--cache-dir",
      tmp("cache"),
      "--log-format",
      "text",
      ...extra,
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, POD_NAME: podName } },
  );
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  return { child, output: () => out, exited };
}

/** The plan for namespace `ns` (as the controller run with `-n ns` renders it). */
async function planIn(repoDir: string, ns: string): Promise<PlannedObject[]> {
  const r = await renderDirectory(join(repoDir, "fleet"), repoDir, { namespace: ns });
  if (!r.ok) throw new Error(r.errors.join("\n"));
  return [...clusterPlan(r.plan, { fieldManager: "mcpfleet" }).objects];
}

const lease = (h: Harness): Promise<LiveObject | undefined> =>
  h.get("Lease", "mcpfleet-controller-leader");
const holder = async (h: Harness): Promise<string | undefined> =>
  ((await lease(h))?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;

describe.skipIf(noCluster())("controller processes on the API server", () => {
  it("SIGTERM mid-apply finishes the stage in flight, releases the Lease, exits 0; the next leader converges", async () => {
    const repo = exampleRepo();
    publishRepo(git, repo.dir, "fleet.git");
    const url = `${git.url}/fleet.git`;
    const ns = testNamespace(clusterKubeconfig()!, "procs");
    const h = harness(clusterKubeconfig()!, repo.dir, ns);
    const planned = await planIn(repo.dir, ns);
    proxy.resetRequests();
    // Every apply in the namespace takes a second, so that however busy the machine, SIGTERM
    // arrives while a stage is in flight and before the last one.
    proxy.setLatency(1_000, (r) => r.verb === "apply" && r.path.includes(`/namespaces/${ns}/`));
    const args = ["--listen", "127.0.0.1:0", "--interval", "1h"];
    const a = controller(url, ns, "ctl-a", args);
    const crApply = (r: { verb: string; path: string }) =>
      r.verb === "apply" &&
      r.path.includes(`/apis/toolhive.stacklok.dev/v1alpha1/namespaces/${ns}/`);
    await until(
      "a custom resource is being applied",
      () => proxy.requests.some(crApply) || undefined,
      30_000,
    );
    const trigger = proxy.requests.find(crApply);
    expect(await holder(h)).toBe("ctl-a");
    a.child.kill("SIGTERM");
    expect(await a.exited, a.output()).toBe(0);
    expect(a.output()).toMatch(/^info stopped$/m);
    const next = /stopped before applying the (\w+) stage/.exec(a.output())?.[1];
    expect(STAGES).toContain(next);
    proxy.setLatency(0);

    // Each stage is all there or not started; the one in flight finished, later ones never began.
    const present = new Map(STAGES.map((st) => [st, { total: 0, there: 0 }]));
    for (const o of planned) {
      const c = present.get(o.stage)!;
      c.total++;
      if ((await h.client.get(o.object)) !== undefined) c.there++;
    }
    for (const [stage, c] of present) {
      expect([0, c.total], `stage ${stage}: ${c.there} of ${c.total} present`).toContain(c.there);
    }
    // The stage in flight when SIGTERM came finished; the one the log names never began. The
    // custom resource seen before SIGTERM belongs to an earlier stage.
    const [plural, name] = (trigger?.path ?? "").split("/").slice(-2);
    const seen = planned.find(
      (o) =>
        o.object.metadata.name === name &&
        plural?.startsWith(o.object.kind.toLowerCase().replace(/y$/, "")) === true,
    );
    expect(seen).toBeDefined();
    const stopAt = STAGES.indexOf(next as (typeof STAGES)[number]);
    expect(STAGES.indexOf(seen!.stage)).toBeLessThan(stopAt);
    STAGES.forEach((stage, i) => {
      const c = present.get(stage)!;
      expect(c.there, `stage ${stage}`).toBe(i < stopAt ? c.total : 0);
    });
    // The Lease was given up, not left to expire.
    expect(await holder(h)).toBe("");

    // The next controller leads at once and converges, orphaning nothing.
    const b = controller(url, ns, "ctl-b", ["--once"]);
    expect(await b.exited, b.output()).toBe(0);
    for (const o of planned)
      expect(await h.client.get(o.object), `${o.key} after the restart`).toBeDefined();
    const inventory = await h.inventory();
    expect([...inventory.keys()].sort()).toEqual(planned.map((o) => o.key).sort());
    expect([...inventory.values()].filter((e) => e.hash === "")).toEqual([]);
    h.close();
  }, 120_000);

  it("a leader killed with SIGKILL mid-apply is replaced after its Lease expires; nothing is orphaned", async () => {
    const repo = exampleRepo();
    publishRepo(git, repo.dir, "fleet.git");
    const url = `${git.url}/fleet.git`;
    const ns = testNamespace(clusterKubeconfig()!, "procs");
    const h = harness(clusterKubeconfig()!, repo.dir, ns);
    // A Lease of 4 s: long enough that a busy machine never lets it lapse while its holder lives.
    const args = ["--listen", "127.0.0.1:0", "--interval", "1s", "--lease-duration", "4s"];
    proxy.resetRequests();
    proxy.setLatency(60);
    const a = controller(url, ns, "ctl-a", args);
    const workloadApply = (r: { verb: string; path: string }) =>
      r.verb === "apply" &&
      r.path.includes(`/namespaces/${ns}/`) &&
      !r.path.includes("toolhive.stacklok.dev");
    await until(
      "ctl-a is applying workloads",
      () => proxy.requests.some(workloadApply) || undefined,
      30_000,
    );
    const b = controller(url, ns, "ctl-b", args);
    await until("ctl-b serves", () => /controller started/.test(b.output()) || undefined, 30_000);
    expect(await holder(h)).toBe("ctl-a");
    a.child.kill("SIGKILL");
    expect(await a.exited).toBeNull();
    const lastRenewal = Date.parse(
      String(((await lease(h))?.spec as { renewTime?: string }).renewTime),
    );
    proxy.setLatency(0);
    await until(
      "ctl-b took the Lease over",
      async () => ((await holder(h)) === "ctl-b" ? true : undefined),
      20_000,
    );
    const taken = (await lease(h))?.spec as { leaseTransitions?: number; acquireTime?: string };
    expect(taken.leaseTransitions).toBe(1);
    // Not before the dead leader's Lease expired.
    expect(Date.parse(String(taken.acquireTime))).toBeGreaterThanOrEqual(lastRenewal + 4_000);
    await until(
      "ctl-b applied the revision",
      () => /revision applied/.test(b.output()) || undefined,
      60_000,
    );

    // Everything rendered is there; everything of ours is in the inventory.
    const planned = await planIn(repo.dir, ns);
    for (const o of planned) expect(await h.client.get(o.object), o.key).toBeDefined();
    const inventory = await h.inventory();
    let checked = 0;
    for (const kind of ["Deployment", "Service", "ConfigMap", "MCPServer"]) {
      for (const o of await h.list(kind)) {
        if (o.metadata.annotations?.[APPLIED_BY] !== "mcpfleet") continue;
        expect(inventory.has(objectKey(o)), `${kind} ${o.metadata.name}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10);

    // The new leader applies the next revision: a removed server's objects are pruned.
    rmSync(join(repo.dir, "fleet", "mcpserver-streamable-http.yaml"));
    commitFiles(repo.dir, {}, "remove fetch");
    pushRepo(git, repo.dir, "fleet.git");
    await until(
      "ctl-b pruned fetch",
      async () => ((await h.get("Deployment", "fetch")) === undefined ? true : undefined),
      30_000,
    );
    await until(
      "ctl-b logged the prune",
      () => new RegExp(`Deployment ${ns}/fetch pruned`).test(b.output()) || undefined,
    );
    b.child.kill("SIGTERM");
    expect(await b.exited).toBe(0);
    expect(await holder(h)).toBe("");
    h.close();
  }, 120_000);
});

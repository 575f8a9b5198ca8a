// The controller as a process on the cluster target, against the API double and the Git server:
// SIGTERM in the middle of an apply finishes the stage in flight, starts no other, releases the
// Lease and exits 0, and a restart converges with nothing orphaned; a leader killed with SIGKILL
// is replaced by another process once its Lease expires.
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type PlannedObject,
  STAGES,
  objectKey,
  planObjects,
} from "../../src/controller/cluster-plan.js";
import { InventoryStore } from "../../src/controller/inventory.js";
import { KubeClient } from "../../src/controller/kube-client.js";
import { renderDirectory } from "../../src/controller/pipeline.js";
import { type GitServer, publishRepo, pushRepo, startGitServer } from "../support/git-server.js";
import { type KubeApi, type KObject, startKubeApi } from "../support/kube-api/index.js";
import { clusterControllerArgs } from "./cluster-helpers.js";
import { commitFiles, exampleRepo, tmp } from "./helpers.js";

const ROOT = join(import.meta.dirname, "..", "..");
const NS = "mcpfleet-system";

let api: KubeApi;
let git: GitServer;
const children: ChildProcess[] = [];

beforeEach(async () => {
  api = await startKubeApi();
  git = await startGitServer();
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill();
  await api.stop();
  await git.stop();
});

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `mcpfleet controller` on the cluster target as its own process. */
function controller(repoUrl: string, podName: string, extra: string[]): Proc {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "src/cli/main.ts"),
      "controller",
      ...clusterControllerArgs(repoUrl, api.kubeconfigPath),
      "--controller-namespace",
      NS,
      "--cache-dir",
      tmp("cache"),
      "--log-format",
      "text",
      ...extra,
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, POD_NAME: podName },
    },
  );
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  return { child, output: () => out, exited };
}

async function until(what: string, cond: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function stored(o: {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}) {
  return api
    .objects({
      apiVersion: o.apiVersion,
      kind: o.kind,
      ...(o.metadata.namespace !== undefined ? { namespace: o.metadata.namespace } : {}),
    })
    .find((x) => x.metadata?.name === o.metadata.name);
}

function lease(): KObject | undefined {
  return api
    .objects({ kind: "Lease", namespace: NS })
    .find((l) => l.metadata?.name === "mcpfleet-controller-leader");
}

function holder(): string | undefined {
  return (lease()?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
}

/** The objects the repository renders, stage by stage, as the controller plans them. */
async function plan(repoDir: string): Promise<PlannedObject[]> {
  const r = await renderDirectory(join(repoDir, "fleet"), repoDir);
  if (!r.ok) throw new Error(r.errors.join("\n"));
  return planObjects(r.loaded, r.objects, r.owners, { fieldManager: "mcpfleet" });
}

describe("the controller process on the cluster target", () => {
  it("SIGTERM mid-apply finishes the stage in flight, releases the Lease, exits 0; a restart converges", async () => {
    const repo = exampleRepo();
    publishRepo(git, repo.dir, "fleet.git");
    const url = `${git.url}/fleet.git`;
    const planned = await plan(repo.dir);
    // Every request waits, so the apply of a stage is in flight long enough to be interrupted.
    api.setLatency(60);
    const p = controller(url, "ctl-a", ["--listen", "127.0.0.1:0", "--interval", "1h"]);
    // The first custom resource on its way: the config stage (or the resources stage) is running.
    await until("a custom resource is being applied", () =>
      api.requests.some((r) => r.verb === "apply" && r.path.includes("/toolhive.stacklok.dev/")),
    );
    const trigger = api.requests.find(
      (r) => r.verb === "apply" && r.path.includes("/toolhive.stacklok.dev/"),
    );
    expect(holder()).toBe("ctl-a");
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    expect(p.output()).toMatch(/^info stopped$/m);
    api.setLatency(0);

    // Each stage is all there or not started; the one in flight finished, the last never began.
    const present = new Map<string, { total: number; there: number }>();
    for (const s of STAGES) present.set(s, { total: 0, there: 0 });
    for (const o of planned) {
      const c = present.get(o.stage);
      if (c === undefined) continue;
      c.total++;
      if (stored(o.object) !== undefined) c.there++;
    }
    for (const [stage, c] of present) {
      expect([0, c.total], `stage ${stage}: ${c.there} of ${c.total} present`).toContain(c.there);
    }
    const plural = (kind: string) =>
      kind.toLowerCase().endsWith("y")
        ? `${kind.toLowerCase().slice(0, -1)}ies`
        : `${kind.toLowerCase()}s`;
    const inFlight = planned.find((o) =>
      trigger?.path.endsWith(`/${plural(o.object.kind)}/${o.object.metadata.name}`),
    );
    expect(inFlight).toBeDefined();
    const flight = present.get(inFlight?.stage ?? "crds");
    expect(flight?.there).toBe(flight?.total);
    for (const stage of STAGES.slice(STAGES.indexOf(inFlight?.stage ?? "crds") + 1)) {
      expect(present.get(stage)?.there, `stage ${stage} after the one in flight`).toBe(0);
    }
    expect(p.output()).toMatch(/stopped before applying the \w+ stage/);
    // The Lease was given up, not left to expire.
    expect(holder()).toBe("");

    // A restart (one sync, as the next leader's first) applies everything and orphans nothing.
    const again = controller(url, "ctl-b", ["--once"]);
    expect(await again.exited, again.output()).toBe(0);
    for (const o of planned) {
      expect(stored(o.object), `${o.key} after the restart`).toBeDefined();
    }
    const client = KubeClient.fromFile(api.kubeconfigPath);
    const inventory = await new InventoryStore(client, {
      name: "mcpfleet-inventory",
      namespace: NS,
      fieldManager: "mcpfleet",
    }).read();
    client.close();
    expect([...(inventory?.entries.keys() ?? [])].sort()).toEqual(planned.map((o) => o.key).sort());
    expect([...(inventory?.entries.values() ?? [])].filter((e) => e.hash === "")).toEqual([]);
    const applied = api
      .objects()
      .filter((o) => o.metadata?.annotations?.["mcpfleet.dev/applied-by"] === "mcpfleet");
    expect(applied.length).toBeGreaterThan(0);
    for (const o of applied) {
      expect(inventory?.entries.has(objectKey(o as never)), `${o.kind} ${o.metadata?.name}`).toBe(
        true,
      );
    }
  }, 60_000);

  it("a leader killed with SIGKILL is replaced by another process once its Lease expires", async () => {
    const repo = exampleRepo();
    publishRepo(git, repo.dir, "fleet.git");
    const url = `${git.url}/fleet.git`;
    const args = ["--listen", "127.0.0.1:0", "--interval", "1s", "--lease-duration", "2s"];
    const a = controller(url, "ctl-a", args);
    await until("ctl-a applied the repository", () => /revision applied/.test(a.output()));
    expect(holder()).toBe("ctl-a");
    const b = controller(url, "ctl-b", args);
    await until("ctl-b serves", () => /controller started/.test(b.output()));
    // ctl-b runs too, but only the leader writes: the Lease stays ctl-a's while it renews.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(holder()).toBe("ctl-a");
    expect(b.output()).not.toMatch(/became the leader/);

    a.child.kill("SIGKILL");
    const lastRenewal = Date.parse(String((lease()?.spec as { renewTime?: string }).renewTime));
    expect(await a.exited).toBeNull();
    await until("ctl-b took the Lease over", () => holder() === "ctl-b", 10_000);
    await until("ctl-b logged it", () => /became the leader \(ctl-b\)/.test(b.output()));
    const taken = lease()?.spec as { leaseTransitions?: number; acquireTime?: string };
    expect(taken.leaseTransitions).toBe(1);
    // Not before the dead leader's Lease expired.
    expect(Date.parse(String(taken.acquireTime))).toBeGreaterThanOrEqual(lastRenewal + 2_000);

    // The new leader applies the next revision: a removed server's workloads are pruned.
    const fetch = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "fetch", namespace: "default" },
    };
    expect(stored(fetch)).toBeDefined();
    rmSync(join(repo.dir, "fleet", "mcpserver-streamable-http.yaml"));
    commitFiles(repo.dir, {}, "remove fetch");
    pushRepo(git, repo.dir, "fleet.git");
    await until("ctl-b pruned the fetch server", () => stored(fetch) === undefined, 15_000);
    // Logs say what changed, object by object.
    await until("ctl-b logged the prune", () =>
      /Deployment default\/fetch pruned/.test(b.output()),
    );
    b.child.kill("SIGTERM");
    expect(await b.exited).toBe(0);
    expect(holder()).toBe("");
  }, 60_000);
});

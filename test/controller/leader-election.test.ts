import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseControllerArgs, runController } from "../../src/cli/controller.js";
import { KubeClient } from "../../src/controller/kube-client.js";
import { LeaderElector } from "../../src/controller/leader.js";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { clusterControllerArgs } from "./cluster-helpers.js";
import { exampleRepo, tmp } from "./helpers.js";

let api: KubeApi;
beforeEach(async () => {
  api = await startKubeApi();
});
afterEach(async () => {
  await api.stop();
});

const until = async (what: () => boolean, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
};

function holder(): string | undefined {
  const lease = api.objects({ kind: "Lease", namespace: "mcpfleet-system" })[0];
  return (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
}

describe("leader election", () => {
  it("one replica leads; when it stops renewing, another takes over after the lease expires", async () => {
    const clients = [
      KubeClient.fromFile(api.kubeconfigPath),
      KubeClient.fromFile(api.kubeconfigPath),
    ];
    const make = (i: number) =>
      new LeaderElector(clients[i]!, {
        namespace: "mcpfleet-system",
        name: "mcpfleet-controller-leader",
        identity: `replica-${i}`,
        leaseDurationSeconds: 1,
        renewMs: 150,
      });
    const a = make(0);
    a.start();
    await until(() => a.isLeader);
    const b = make(1);
    b.start();
    await new Promise((r) => setTimeout(r, 400));
    expect(b.isLeader).toBe(false);
    expect(holder()).toBe("replica-0");
    // The leader is killed: it stops renewing without giving the lease up.
    await a.stop();
    await until(() => b.isLeader, 5_000);
    expect(holder()).toBe("replica-1");
    const lease = api.objects({ kind: "Lease", namespace: "mcpfleet-system" })[0];
    expect((lease?.spec as { leaseTransitions?: number }).leaseTransitions).toBe(1);
    await b.stop({ release: true });
    expect(holder()).toBe("");
    for (const c of clients) c.close();
  });

  it("two controllers: only the leader applies, and the other takes over when it stops", async () => {
    const repo = exampleRepo();
    const args = (i: number) =>
      parseControllerArgs([
        ...clusterControllerArgs(`file://${repo.dir}`, api.kubeconfigPath),
        "--interval",
        "1s",
        "--jitter",
        "0",
        "--lease-duration",
        "1s",
        "--listen",
        "127.0.0.1:0",
        "--cache-dir",
        tmp(`leader-${i}`),
        "--log-format",
        "text",
      ])!;
    const lines: string[][] = [[], []];
    const stops = [new AbortController(), new AbortController()];
    const ports: number[] = [0, 0];
    const runs = [0, 1].map((i) =>
      runController(args(i), {
        signal: stops[i]!.signal,
        stderr: (l) => lines[i]!.push(l),
        stdout: (l) => lines[i]!.push(l),
        onListening: (a) => (ports[i] = a.port),
      }),
    );
    await until(() => api.objects({ kind: "Deployment", namespace: "default" }).length > 3, 20_000);
    const leader = lines.findIndex((l) => l.some((x) => x.includes("became the leader")));
    expect(leader).toBeGreaterThanOrEqual(0);
    const other = 1 - leader;
    expect(lines[other]!.some((x) => x.includes("revision applied"))).toBe(false);
    // The leader's endpoints report the applied revision and the objects it applied.
    await until(() => lines[leader]!.some((x) => x.includes("revision applied")), 10_000);
    const health = (await (await fetch(`http://127.0.0.1:${ports[leader]}/healthz`)).json()) as {
      target: string;
      lastAppliedRevision: string | null;
      lastAttemptedRevision: string | null;
    };
    expect(health.target).toBe("cluster");
    expect(health.lastAppliedRevision).toMatch(/^[0-9a-f]{40}$/);
    expect(health.lastAttemptedRevision).toBe(health.lastAppliedRevision);
    const metrics = await (await fetch(`http://127.0.0.1:${ports[leader]}/metrics`)).text();
    expect(metrics).toMatch(
      /mcpfleet_controller_objects_applied_total\{target="cluster"\} [1-9]\d*/,
    );
    expect((await fetch(`http://127.0.0.1:${ports[leader]}/readyz`)).status).toBe(200);
    stops[leader]!.abort();
    expect(await runs[leader]).toBe(0);
    await until(() => lines[other]!.some((x) => x.includes("became the leader")), 10_000);
    await until(() => lines[other]!.some((x) => x.includes("revision applied")), 10_000);
    stops[other]!.abort();
    expect(await runs[other]).toBe(0);
  }, 40_000);
});

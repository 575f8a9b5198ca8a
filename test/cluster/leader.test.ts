// Leader election through a coordination.k8s.io Lease on the real API server: one replica leads,
// another takes over only once the Lease expired; two in-process controllers, of which only the
// leader applies and serves an applied revision on /healthz and /metrics.
import { afterAll, describe, expect, it } from "vitest";
import { parseControllerArgs, runController } from "../../src/cli/controller.js";
import { KubeClient, type LiveObject } from "../../src/infra/kube/client.js";
import { LeaderElector } from "../../src/controller/leader.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { exampleRepo, tmp } from "../controller/helpers.js";
import { testNamespace, until, clusterControllerArgs } from "./controller-harness.js";

const clients: KubeClient[] = [];
afterAll(() => {
  for (const c of clients) c.close();
});
const newClient = (): KubeClient => {
  const c = KubeClient.fromFile(clusterKubeconfig());
  clients.push(c);
  return c;
};

describe.skipIf(noCluster())("leader election on the API server", () => {
  it("one replica leads; when it stops renewing, another takes over after the lease expires", async () => {
    const ns = testNamespace(clusterKubeconfig()!, "leader");
    const admin = newClient();
    await admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    const lease = (): Promise<LiveObject | undefined> =>
      admin.get({
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "mcpfleet-controller-leader", namespace: ns },
      });
    const holder = async () =>
      ((await lease())?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    const make = (i: number) =>
      new LeaderElector(newClient(), {
        namespace: ns,
        name: "mcpfleet-controller-leader",
        identity: `replica-${i}`,
        leaseDurationSeconds: 1,
        renewMs: 150,
      });
    const a = make(0);
    a.start();
    await until("replica-0 leads", () => a.isLeader || undefined, 10_000);
    const b = make(1);
    b.start();
    await new Promise((r) => setTimeout(r, 600));
    expect(b.isLeader).toBe(false);
    expect(await holder()).toBe("replica-0");
    // The leader is killed: it stops renewing without giving the lease up.
    await a.stop();
    await until("replica-1 leads", () => b.isLeader || undefined, 10_000);
    expect(await holder()).toBe("replica-1");
    expect(((await lease())?.spec as { leaseTransitions?: number }).leaseTransitions).toBe(1);
    await b.stop({ release: true });
    expect(await holder()).toBe("");
  }, 60_000);

  it("two controllers: only the leader applies and reports it; the other takes over when it stops", async () => {
    const repo = exampleRepo();
    const ns = testNamespace(clusterKubeconfig()!, "leader");
    const args = (i: number) =>
      parseControllerArgs([
        ...clusterControllerArgs(`file://${repo.dir}`, clusterKubeconfig()!),
        "-n",
        ns,
        "--controller-namespace",
        ns,
        "--interval",
        "1s",
        "--jitter",
        "0",
        // Long enough that a busy machine never lets it lapse while its holder lives; the
        // leader gives it up when it stops, so the takeover does not wait for it.
        "--lease-duration",
        "5s",
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
    // The identity comes from POD_NAME (else host and pid, the same for both in one process):
    // the second starts once the first has read its own.
    const podName = process.env.POD_NAME;
    const start = (i: number) => {
      process.env.POD_NAME = `ctl-${i}`;
      return runController(args(i), {
        signal: stops[i]!.signal,
        stderr: (l) => lines[i]!.push(l),
        stdout: (l) => lines[i]!.push(l),
        onListening: (a) => (ports[i] = a.port),
      });
    };
    const first = start(0);
    await until(
      "ctl-0 leads",
      () => lines[0]!.some((x) => x.includes("became the leader (ctl-0)")) || undefined,
      30_000,
    );
    const runs = [first, start(1)];
    await until("ctl-1 serves", () => ports[1]! > 0 || undefined, 30_000);
    if (podName === undefined) delete process.env.POD_NAME;
    else process.env.POD_NAME = podName;
    await until(
      "a controller applied the revision",
      () => lines.some((l) => l.some((x) => x.includes("revision applied"))) || undefined,
      60_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(lines)}`);
    });
    const leader = lines.findIndex((l) => l.some((x) => x.includes("became the leader")));
    expect(leader).toBeGreaterThanOrEqual(0);
    const other = 1 - leader;
    expect(
      lines[other]!.filter((x) => x.includes("revision applied")),
      JSON.stringify(lines),
    ).toEqual([]);
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
    await until(
      "the other leads",
      () => lines[other]!.some((x) => x.includes("became the leader")) || undefined,
      20_000,
    );
    await until(
      "the other applied",
      () => lines[other]!.some((x) => x.includes("revision applied")) || undefined,
      30_000,
    );
    stops[other]!.abort();
    expect(await runs[other]).toBe(0);
  }, 120_000);
});

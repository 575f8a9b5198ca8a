// What a failed revision leaves visible, on the real API server, whatever it holds: a revision
// with 10,000 invalid documents is named as attempted, its errors summarized (the first lines,
// then counts by level) in the status on the inventory, in `mcpfleet status` and in one Warning
// Event, every one of them small; the revision applied before stays in place and is named, also
// by a controller process that did not apply it itself.
import { beforeAll, describe, expect, it } from "vitest";
import type { LiveObject } from "../../src/infra/kube/client.js";
import type { LiveCondition } from "../../src/controller/conditions.js";
import { OperationRequests } from "../../src/controller/operation-requests.js";
import { inventoryRef, recordedStatusOf, STATUS_KEY } from "../../src/controller/operations.js";
import { silentLogger } from "../../src/controller/logger.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import { ControllerStatus } from "../../src/controller/status.js";
import type { StatusReport } from "../../src/controller/status-report.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { commitFiles, makeRepo } from "../support/git-server.js";
import { runCli } from "../cli/helpers.js";
import { tmp } from "../controller/helpers.js";
import { controllerOnce, harness, testNamespace } from "./controller-harness.js";
import { client, installCrds, kubectl } from "./helpers.js";
import { timeServer } from "../support/fixtures.js";

beforeAll(async () => {
  if (noCluster()) return;
  await installCrds(client());
});

const kubeconfig = () => clusterKubeconfig()!;
const flags = (ns: string) => ["--kubeconfig", kubeconfig(), "--controller-namespace", ns];

const SERVER = timeServer();

/** 8,000 schema errors (an unknown transport) and 2,000 reference errors (a missing group). */
function tenThousandErrors(): string {
  const docs: string[] = [];
  for (let i = 0; i < 8_000; i++) {
    docs.push(
      `apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata:\n  name: bad-${i}\nspec:\n  image: ghcr.io/example/x:1.0.0\n  transport: carrier-pigeon\n`,
    );
  }
  for (let i = 0; i < 2_000; i++) {
    docs.push(
      `apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: VirtualMCPServer\nmetadata:\n  name: gw-${i}\nspec:\n  incomingAuth:\n    type: anonymous\n  groupRef:\n    name: missing-group\n`,
    );
  }
  return docs.join("---\n");
}

/** `mcpfleet controller --once` for the repository, as a CronJob runs it: a new process each time. */
function once(repo: string, ns: string): Promise<{ code: number; lines: string[] }> {
  return controllerOnce(repo, kubeconfig(), ns, tmp("failure-cache"));
}

const bytes = (o: unknown) => Buffer.byteLength(JSON.stringify(o));

/** A live object's condition of `type`. */
function conditionOf(o: LiveObject | undefined, type: string) {
  const status = o?.status as { conditions?: LiveCondition[] } | undefined;
  return status?.conditions?.find((c) => c.type === type);
}

describe.skipIf(noCluster())("a revision with 10,000 errors", () => {
  it("is recorded as attempted and failed, summarized in bounds, the revision before named in place", async () => {
    const repo = tmp("failure-repo");
    const first = makeRepo(repo, { "fleet/time.yaml": SERVER });
    const ns = testNamespace(kubeconfig(), "failure");
    const c = client();
    const inventory = () =>
      c.get(inventoryRef({ client: c, namespace: ns, fieldManager: "mcpfleet" }));
    const time = () =>
      c.get({
        apiVersion: "toolhive.stacklok.dev/v1alpha1",
        kind: "MCPServer",
        metadata: { name: "time", namespace: ns },
      });

    expect((await once(repo, ns)).code).toBe(0);
    const applied = await time();
    expect(recordedStatusOf((await inventory())!)).toMatchObject({
      ready: true,
      lastAppliedRevision: first,
      lastError: null,
    });

    const broken = commitFiles(repo, { "fleet/broken.yaml": tenThousandErrors() }, "10,000 errors");
    // A new process: it applied nothing itself, the inventory says what is in place.
    const failed = await once(repo, ns);
    expect(failed.code).toBe(1);
    expect(failed.lines.at(-1)).toMatch(/is invalid \(10000 errors\); nothing was applied$/);

    // The inventory: the failure recorded, in a few KiB.
    const live = (await inventory())!;
    const statusText = (live.data as Record<string, string>)[STATUS_KEY]!;
    expect(Buffer.byteLength(statusText)).toBeLessThan(32 * 1024);
    expect(bytes(live)).toBeLessThan(256 * 1024);
    const recorded = recordedStatusOf(live)!;
    expect(recorded).toMatchObject({
      ready: false,
      lastAttemptedRevision: broken,
      lastError: { stage: "validate", code: "ERR_INVALID_RESOURCES", revision: broken },
    });
    const message = recorded.lastError!.message;
    expect(message).toMatch(
      new RegExp(
        `^revision ${broken.slice(0, 12)} is invalid and was not applied; ${first.slice(0, 12)} stays in place: 10,000 errors: fleet/broken\\.yaml:7:\\d+: MCPServer/${ns}/bad-0: /spec/transport: .*\\(schema\\); `,
      ),
    );
    expect(message).toMatch(/; and 9,980 more: 7,980 schema, 2,000 reference$/);
    // Twenty errors quoted, then the count of the rest.
    expect(message.split(" 10,000 errors: ")[1]!.split("; ")).toHaveLength(21);

    // `mcpfleet status`: not ready, the failed revision attempted, the one before applied.
    const json = await runCli(["status", "-o", "json", ...flags(ns)]);
    expect(json.status).toBe(0);
    const report = JSON.parse(json.stdout) as StatusReport;
    expect(report).toMatchObject({
      ready: false,
      lastAppliedRevision: first,
      lastAttemptedRevision: broken,
      lastError: { stage: "validate", code: "ERR_INVALID_RESOURCES", revision: broken, message },
    });
    const text = await runCli(["status", ...flags(ns)]);
    expect(text.status).toBe(0);
    expect(Buffer.byteLength(text.stdout)).toBeLessThan(32 * 1024);
    const out = text.stdout.split("\n");
    expect(out).toContain("ready       False");
    expect(out).toContain(`attempted   ${broken}`);
    expect(out.find((l) => l.startsWith("applied "))).toMatch(new RegExp(`^applied     ${first}`));
    expect(out.find((l) => l.startsWith("last error "))).toMatch(
      /^last error {2}validate ERR_INVALID_RESOURCES \(revision [0-9a-f]{12}, .+\): revision .* 10,000 errors: .*and 9,980 more: 7,980 schema, 2,000 reference$/,
    );
    // The resource in place is the one applied before, as ready as it was, and Stalled: it says
    // which revision was not applied and which stays in place.
    const inPlace = await time();
    expect(inPlace?.metadata.generation).toBe(applied?.metadata.generation);
    expect(conditionOf(inPlace, "Ready")).toEqual(conditionOf(applied, "Ready"));
    expect((inPlace?.status as { phase?: string }).phase).toBe(
      (applied?.status as { phase?: string }).phase,
    );
    expect(conditionOf(applied, "Stalled")).toMatchObject({ status: "False" });
    const stalled = conditionOf(inPlace, "Stalled");
    expect(stalled).toMatchObject({ status: "True", reason: "ValidationFailed" });
    expect(message.startsWith(stalled?.message ?? "-")).toBe(true);
    expect(stalled?.message).toMatch(new RegExp(`^revision ${broken.slice(0, 12)} is invalid`));
    expect(conditionOf(inPlace, "Reconciling")).toMatchObject({
      status: "False",
      reason: "ValidationFailed",
    });
    expect(bytes(inPlace?.status)).toBeLessThan(16 * 1024);
    expect(report.resources).toMatchObject([{ name: "time", stalled: "ValidationFailed" }]);
    expect(out.find((l) => l.startsWith("MCPServer "))?.split(/ {2,}/)[5]).toBe("ValidationFailed");

    // What `kubectl get` shows: the resource's Ready as before, its Stalled reason, the Event.
    const got = kubectl([
      "get",
      "mcpservers",
      "-n",
      ns,
      "-o",
      `custom-columns=NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,STALLED:.status.conditions[?(@.type=="Stalled")].reason`,
      "--no-headers",
    ]);
    expect(got.status, got.stderr).toBe(0);
    expect(got.stdout.trim().split(/\s+/)).toEqual([
      "time",
      conditionOf(applied, "Ready")!.status,
      "ValidationFailed",
    ]);

    // One Warning Event, under 1 KiB, with the first lines and the counts.
    const events = (await c.list("v1", "Event", { namespace: ns })).filter(
      (e: LiveObject) => e.reason === "ValidationFailed",
    );
    expect(events).toHaveLength(1);
    const event = String(events[0]!.message);
    expect(Buffer.byteLength(event)).toBeLessThanOrEqual(1024);
    expect(event).toMatch(
      new RegExp(
        `^revision ${broken.slice(0, 12)} is invalid and was not applied; ${first.slice(0, 12)} stays in place: 10,000 errors: fleet/broken\\.yaml:7:`,
      ),
    );
    expect(event).toMatch(/; and 9,99\d more: [\d,]+ schema, 2,000 reference$/);
    const listed = kubectl([
      "get",
      "events",
      "-n",
      ns,
      "--field-selector",
      "reason=ValidationFailed",
      "-o",
      "jsonpath={.items[*].message}",
    ]);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toBe(event);

    // The next good revision is applied and the resource is no longer Stalled.
    commitFiles(repo, { "fleet/broken.yaml": "# fixed\n" }, "fixed");
    expect((await once(repo, ns)).code).toBe(0);
    expect(conditionOf(await time(), "Stalled")).toMatchObject({
      status: "False",
      reason: "ReconciliationSucceeded",
    });
    c.close();
  }, 180_000);

  it("a fresh reconciler over an earlier process's inventory names the revision in place", async () => {
    const repo = tmp("failure-fresh");
    const first = makeRepo(repo, { "fleet/time.yaml": SERVER });
    const ns = testNamespace(kubeconfig(), "failure");
    const earlier = harness(kubeconfig(), repo, ns);
    expect((await earlier.reconciler.sync()).kind).toBe("applied");
    earlier.close();

    const broken = commitFiles(repo, { "fleet/time.yaml": "kind: MCPServer\nspec: [\n" }, "2");
    const h = harness(kubeconfig(), repo, ns);
    const status = new ControllerStatus(h.source.refName, h.applier.target);
    const operations = new OperationRequests({
      client: h.client,
      namespace: ns,
      fieldManager: "mcpfleet",
      status,
      log: silentLogger,
    });
    const reconciler = new Reconciler({
      source: h.source,
      applier: h.applier,
      status,
      namespace: ns,
      appliedRevision: () => operations.appliedRevision(),
    });
    try {
      expect((await reconciler.sync()).kind).toBe("invalid");
      await operations.record();
      expect(status.lastError?.message).toMatch(
        new RegExp(
          `^revision ${broken.slice(0, 12)} is invalid and was not applied; ${first.slice(0, 12)} stays in place: fleet/time\\.yaml`,
        ),
      );
      const [event] = (await h.list("Event")).filter((e) => e.reason === "ValidationFailed");
      expect(String(event?.message)).toContain(`${first.slice(0, 12)} stays in place`);
      const report = JSON.parse(
        (await runCli(["status", "-o", "json", ...flags(ns)])).stdout,
      ) as StatusReport;
      expect(report).toMatchObject({
        ready: false,
        lastAppliedRevision: first,
        lastAttemptedRevision: broken,
        lastError: { revision: broken },
      });
    } finally {
      h.close();
    }
  }, 90_000);
});

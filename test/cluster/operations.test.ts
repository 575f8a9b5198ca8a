// Day-2 operations against the real API server: `mcpfleet suspend` holds a pushed commit back
// and `mcpfleet resume` applies it; a running controller answers `mcpfleet reconcile` with a sync
// at once and records the request it handled; `mcpfleet status` says what the cluster holds; and
// each command fails with one line and exit 1 when there is no cluster or no controller.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseControllerArgs, runController } from "../../src/cli/controller.js";
import type { LiveObject } from "../../src/infra/kube/client.js";
import { OperationRequests } from "../../src/controller/operation-requests.js";
import {
  REQUESTED_AT_ANNOTATION,
  SUSPEND_ANNOTATION,
  inventoryRef,
  recordedStatusOf,
} from "../../src/controller/operations.js";
import { silentLogger } from "../../src/controller/logger.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import type { StatusReport } from "../../src/controller/status-report.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { commitFiles, makeRepo } from "../support/git-server.js";
import { runCli } from "../cli/helpers.js";
import { tmp } from "../controller/helpers.js";
import { controllerOnce, harness, testNamespace, until } from "./controller-harness.js";
import { timeServer } from "../support/fixtures.js";
import { client, installCrds, tmpDir } from "./helpers.js";

beforeAll(async () => {
  if (noCluster()) return;
  await installCrds(client());
});

/** An MCPServer whose only change between commits is its argument. */
const server = (name: string, arg: string): string => timeServer(name, [arg]);

const argsOf = (o: LiveObject | undefined) => (o?.spec as { args?: string[] } | undefined)?.args;

function kubeconfig(): string {
  return clusterKubeconfig()!;
}

/** The connection flags of every operations command, for the controller in `ns`. */
const flags = (ns: string) => ["--kubeconfig", kubeconfig(), "--controller-namespace", ns];

describe.skipIf(noCluster())("suspend and resume (the sync's own check)", () => {
  it("a suspended controller leaves a pushed commit unapplied; resumed, it applies it", async () => {
    const repo = tmp("ops-repo");
    const first = makeRepo(repo, { "fleet/time.yaml": server("time", "--first") });
    const ns = testNamespace(kubeconfig(), "ops");
    const h = harness(kubeconfig(), repo, ns);
    const operations = new OperationRequests({
      client: h.client,
      namespace: ns,
      fieldManager: "mcpfleet",
      status: h.status,
      log: silentLogger,
    });
    const reconciler = new Reconciler({
      source: h.source,
      applier: h.applier,
      status: h.status,
      namespace: ns,
      suspended: () => operations.suspended(),
    });
    try {
      expect(await reconciler.sync()).toMatchObject({ kind: "applied" });
      await operations.record();
      expect(argsOf(await h.get("MCPServer", "time"))).toEqual(["--first"]);

      const suspended = await runCli(["suspend", ...flags(ns)]);
      expect(suspended.stderr).toBe("");
      expect(suspended.status).toBe(0);
      expect(suspended.stdout).toContain(`mcpfleet-inventory in namespace ${ns} is suspended`);
      const inventory = await h.client.get(
        inventoryRef({ client: h.client, namespace: ns, fieldManager: "mcpfleet" }),
      );
      expect(inventory?.metadata.annotations?.[SUSPEND_ANNOTATION]).toBe("true");

      const second = commitFiles(repo, { "fleet/time.yaml": server("time", "--second") }, "2");
      expect(await reconciler.sync()).toEqual({ kind: "suspended" });
      expect(h.status.suspended).toBe(true);
      expect(argsOf(await h.get("MCPServer", "time"))).toEqual(["--first"]);
      expect(h.status.lastAppliedRevision).toBe(first);
      expect(h.status.lastAttemptedRevision).toBe(first);

      // A controller run as a CronJob (--once) honours the suspension too, and exits 0.
      const { code: once, lines } = await controllerOnce(repo, kubeconfig(), ns, tmp("ops-once"));
      expect(once).toBe(0);
      expect(lines).toContain(
        "sync skipped: the controller is suspended (mcpfleet resume lifts it)",
      );
      expect(argsOf(await h.get("MCPServer", "time"))).toEqual(["--first"]);

      const resumed = await runCli(["resume", "--no-wait", ...flags(ns)]);
      expect(resumed.status).toBe(0);
      expect(resumed.stdout).toMatch(/^resumed; sync requested of the controller of /);
      const annotations = (
        await h.client.get(
          inventoryRef({ client: h.client, namespace: ns, fieldManager: "mcpfleet" }),
        )
      )?.metadata.annotations;
      expect(annotations?.[SUSPEND_ANNOTATION]).toBeUndefined();
      expect(annotations?.[REQUESTED_AT_ANNOTATION]).toMatch(/^\d{4}-\d\d-\d\dT/);

      expect(await reconciler.sync()).toMatchObject({ kind: "applied" });
      expect(h.status.suspended).toBe(false);
      expect(h.status.lastAppliedRevision).toBe(second);
      expect(argsOf(await h.get("MCPServer", "time"))).toEqual(["--second"]);
    } finally {
      h.close();
    }
  }, 90_000);
});

describe.skipIf(noCluster())("a running controller", () => {
  const stop = new AbortController();
  let running: Promise<number> | undefined;
  const lines: string[] = [];
  afterAll(async () => {
    stop.abort();
    await running;
  });

  it("answers reconcile requests at once, refuses them while suspended, and status says what the cluster holds", async () => {
    const repo = tmp("ops-live");
    const first = makeRepo(repo, {
      "fleet/time.yaml": server("time", "--first"),
      "fleet/clock.yaml": server("clock", "--first"),
    });
    const ns = testNamespace(kubeconfig(), "ops-live");
    const c = client();
    const get = (kind: string, name: string) =>
      c.get({
        apiVersion: "toolhive.stacklok.dev/v1alpha1",
        kind,
        metadata: { name, namespace: ns },
      });
    const recorded = async () => {
      const live = await c.get(
        inventoryRef({ client: c, namespace: ns, fieldManager: "mcpfleet" }),
      );
      return live !== undefined ? recordedStatusOf(live) : undefined;
    };
    // An hour between polls: every sync after the first is one the requests asked for.
    const config = parseControllerArgs([
      "--repo",
      pathToFileURL(repo).href,
      "--branch",
      "main",
      "--path",
      "fleet",
      "--kubeconfig",
      kubeconfig(),
      "--prune",
      "-n",
      ns,
      "--controller-namespace",
      ns,
      "--cache-dir",
      tmp("ops-cache"),
      "--interval",
      "1h",
      "--jitter",
      "0",
      "--listen",
      "127.0.0.1:0",
      "--log-format",
      "text",
    ])!;
    running = runController(config, {
      signal: stop.signal,
      stdout: (l) => lines.push(l),
      stderr: (l) => lines.push(l),
      // Without a watch the annotations would be read once an hour: every request below is
      // answered because the watch of the inventory wakes the controller.
      operationsPollMs: 3_600_000,
    });
    await until("the first revision is applied and recorded", async () => {
      const r = await recorded();
      return r?.lastAppliedRevision === first || undefined;
    });

    // Reconcile now: the new commit is applied without waiting for the poll an hour away.
    const second = commitFiles(repo, { "fleet/time.yaml": server("time", "--second") }, "2");
    const reconciled = await runCli(["reconcile", "--timeout", "60s", ...flags(ns)]);
    expect(reconciled.stderr).toBe("");
    expect(reconciled.status).toBe(0);
    const requestedAt = /requestedAt ([^)]+)\)/.exec(reconciled.stdout)?.[1];
    expect(requestedAt).toBeDefined();
    expect(reconciled.stdout).toContain(`synced: revision ${second} of branch main is applied`);
    expect(argsOf(await get("MCPServer", "time"))).toEqual(["--second"]);
    expect(await recorded()).toMatchObject({
      lastHandledReconcileAt: requestedAt,
      lastAppliedRevision: second,
      lastError: null,
    });

    // Suspended: a request is refused, and status says so.
    const suspended = await runCli(["suspend", ...flags(ns)]);
    expect(suspended.status).toBe(0);
    const third = commitFiles(repo, { "fleet/time.yaml": server("time", "--third") }, "3");
    const refused = await runCli(["reconcile", ...flags(ns)]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `mcpfleet: the controller of mcpfleet-inventory in namespace ${ns} is suspended; mcpfleet resume lifts the suspension and syncs\n`,
    );
    const whileSuspended = await runCli(["status", "-o", "json", ...flags(ns)]);
    expect(whileSuspended.status).toBe(0);
    expect(JSON.parse(whileSuspended.stdout)).toMatchObject({
      suspended: true,
      lastAppliedRevision: second,
      lastHandledReconcileAt: requestedAt,
    });

    // Resume asks for a sync and waits for it: the commit held back is applied.
    const resumed = await runCli(["resume", "--timeout", "60s", ...flags(ns)]);
    expect(resumed.stderr).toBe("");
    expect(resumed.status).toBe(0);
    expect(resumed.stdout).toContain(`synced: revision ${third} of branch main is applied`);
    expect(argsOf(await get("MCPServer", "time"))).toEqual(["--third"]);

    // Status, as JSON, YAML and text, against what the cluster holds.
    const inventory = await c.get(
      inventoryRef({ client: c, namespace: ns, fieldManager: "mcpfleet" }),
    );
    const live = await Promise.all(["clock", "time"].map((n) => get("MCPServer", n)));
    const readyOf = (o: LiveObject | undefined) =>
      (
        o?.status as { conditions?: { type: string; status: string }[] } | undefined
      )?.conditions?.find((x) => x.type === "Ready");
    const json = await runCli(["status", "-o", "json", ...flags(ns)]);
    expect(json.status).toBe(0);
    const report = JSON.parse(json.stdout) as StatusReport;
    expect(report).toMatchObject({
      inventory: "mcpfleet-inventory",
      namespace: ns,
      ref: "branch main",
      suspended: false,
      ready: true,
      lastAppliedRevision: (inventory?.data as Record<string, string>).revision,
      lastAttemptedRevision: third,
      lastError: null,
      reconcileRequestedAt: inventory?.metadata.annotations?.[REQUESTED_AT_ANNOTATION],
      lastHandledReconcileAt: inventory?.metadata.annotations?.[REQUESTED_AT_ANNOTATION],
      objects: Number((inventory?.data as Record<string, string>).objects),
    });
    expect(report.lastAppliedRevision).toBe(third);
    expect(report.resources).toEqual(
      live.map((o) => ({
        apiVersion: "toolhive.stacklok.dev/v1alpha1",
        kind: "MCPServer",
        namespace: ns,
        name: o!.metadata.name,
        ready: readyOf(o)!.status,
        reason: (readyOf(o) as { reason?: string }).reason,
        message: (readyOf(o) as { message?: string }).message,
        phase: (o!.status as { phase: string }).phase,
      })),
    );
    const yaml = await runCli(["status", "-o", "yaml", ...flags(ns)]);
    expect(parseYaml(yaml.stdout)).toEqual(report);
    const text = await runCli(["status", ...flags(ns)]);
    expect(text.status).toBe(0);
    const out = text.stdout.split("\n");
    expect(out).toContain(`controller  mcpfleet-inventory in namespace ${ns}`);
    expect(out).toContain(`suspended   False`);
    expect(out.find((l) => l.startsWith("applied "))).toMatch(
      new RegExp(`^applied     ${third} at \\d{4}-`),
    );
    expect(out).toContain(`reconcile   requested ${report.reconcileRequestedAt}, handled`);
    const header = out.findIndex((l) => l.startsWith("KIND"));
    expect(out[header]).toMatch(/^KIND +NAMESPACE +NAME +READY +PHASE +STALLED +MESSAGE$/);
    for (const [i, o] of live.entries()) {
      const cells = out[header + 1 + i]!.split(/ {2,}/);
      expect(cells.slice(0, 5)).toEqual([
        "MCPServer",
        ns,
        o!.metadata.name,
        readyOf(o)!.status,
        (o!.status as { phase: string }).phase,
      ]);
    }

    // A request answered by a failed sync fails the command with that sync's error, and status
    // is no longer ready while the last good revision stays applied.
    const broken = commitFiles(repo, { "fleet/time.yaml": "kind: MCPServer\nspec: [\n" }, "4");
    const failed = await runCli(["reconcile", "--timeout", "60s", ...flags(ns)]);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toMatch(
      new RegExp(
        `^mcpfleet: the controller of mcpfleet-inventory in namespace ${ns} synced, and the sync failed at validate: revision ${broken.slice(0, 12)} is invalid and was not applied; ${third.slice(0, 12)} stays in place: .*fleet/time\\.yaml.* \\(ERR_INVALID_RESOURCES\\)\n$`,
      ),
    );
    const afterFailure = JSON.parse(
      (await runCli(["status", "-o", "json", ...flags(ns)])).stdout,
    ) as StatusReport;
    expect(afterFailure).toMatchObject({
      ready: false,
      lastAppliedRevision: third,
      lastAttemptedRevision: broken,
      lastError: { stage: "validate", code: "ERR_INVALID_RESOURCES", revision: broken },
    });
  }, 180_000);
});

describe.skipIf(noCluster())("errors", () => {
  it("no kubeconfig, an unreachable server, no inventory, and a controller that never answers: one line, exit 1", async () => {
    const missing = await runCli(["status", "--kubeconfig", "/nonexistent/kubeconfig"]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe(
      "mcpfleet: cannot load the kubeconfig /nonexistent/kubeconfig: no such file (give --kubeconfig FILE or set KUBECONFIG)\n",
    );

    const dir = tmpDir("ops-unreachable");
    const unreachable = join(dir, "kubeconfig");
    writeFileSync(
      unreachable,
      `apiVersion: v1
kind: Config
clusters: [{ name: gone, cluster: { server: "https://127.0.0.1:1", insecure-skip-tls-verify: true } }]
users: [{ name: me, user: {} }]
contexts: [{ name: gone, context: { cluster: gone, user: me } }]
current-context: gone
`,
    );
    for (const command of ["status", "suspend", "reconcile"]) {
      const r = await runCli([command, "--kubeconfig", unreachable, "--controller-namespace", "x"]);
      expect(r.status, command).toBe(1);
      expect(r.stderr, command).toMatch(
        /^mcpfleet: cannot reach the API server https:\/\/127\.0\.0\.1:1 \(context gone\): it refused the connection;[^\n]*\n$/,
      );
    }

    const c = client();
    const empty = testNamespace(kubeconfig(), "ops-empty");
    await c.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: empty } });
    const noInventory = `mcpfleet: no controller inventory ConfigMap mcpfleet-inventory in namespace ${empty}: no controller with --field-manager mcpfleet has synced there (give its --controller-namespace and --field-manager)\n`;
    for (const command of ["status", "suspend", "resume", "reconcile"]) {
      const r = await runCli([command, ...flags(empty)]);
      expect(r.status, command).toBe(1);
      expect(r.stderr, command).toBe(noInventory);
    }

    // An inventory nobody serves: the request is set, and the wait ends with its timeout.
    await c.create({
      ...inventoryRef({ client: c, namespace: empty, fieldManager: "mcpfleet" }),
      data: { revision: "" },
    });
    const waited = await runCli(["reconcile", "--timeout", "1s", ...flags(empty)]);
    expect(waited.status).toBe(1);
    expect(waited.stderr).toBe(
      `mcpfleet: the controller of mcpfleet-inventory in namespace ${empty} did not answer the request within 1s; is it running, and does it lead? (mcpfleet status shows what it recorded)\n`,
    );
    const usage = await runCli(["status", "-o", "table", ...flags(empty)]);
    expect(usage.status).toBe(2);
  }, 90_000);
});

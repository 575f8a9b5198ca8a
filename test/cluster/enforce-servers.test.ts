// enforceServers at apply time, against the real API server, with a real registry server
// (`mcpfleet registry serve`, started here) as the upstream the MCPRegistry's api source points
// at. Cases: a listed image runs and an unlisted one is withheld (status Failed,
// ImageValidated=False, a Warning Event naming the image); offline validation leaves the api
// source to apply time; the registry going away keeps the last listing (status says so) and
// refuses an image it never listed; the image added upstream lets the server run at the next
// reconcile without a commit; a server whose image stops being listed loses its workload; a
// registry never reached refuses every image; enforcement turned off lets everything run;
// `mcpfleet apply` of examples/enforce-servers reads the catalog ConfigMap from the cluster.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { runApply } from "../../src/cli/apply.js";
import { ImagePolicyApplier } from "../../src/controller/image-policy.js";
import { KubeClient } from "../../src/infra/kube/client.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import { ControllerStatus } from "../../src/controller/status.js";
import { validatePaths } from "../../src/validate/index.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { commitFiles, gitCmd, makeRepo } from "../support/git-server.js";
import { tmp } from "../controller/helpers.js";
import { GROUP_VERSION, harness, testNamespace } from "./controller-harness.js";
import { ROOT } from "./helpers.js";
import { freePort } from "../support/ports.js";

const MAIN = join(ROOT, "src/cli/main.ts");

const ALLOWED = "ghcr.io/example/allowed:1.0";
const LATER = "ghcr.io/example/later:2.0";

/** A registry server on `port` whose one source is a toolhive catalog of `images`. */
async function startRegistry(port: number, images: string[]): Promise<ChildProcess> {
  const dir = tmp("upstream");
  const servers = Object.fromEntries(
    images.map((image, i) => [`server-${i}`, { image, description: `server ${i}` }]),
  );
  writeFileSync(
    join(dir, "catalog.json"),
    JSON.stringify({ version: "1.0.0", last_updated: "2025-01-01T00:00:00Z", servers }),
  );
  const config = {
    sources: [
      {
        name: "catalog",
        format: "toolhive",
        file: { path: "catalog.json" },
        syncPolicy: { interval: "1h" },
      },
    ],
    registries: [{ name: "default", sources: ["catalog"] }],
    auth: { mode: "anonymous" },
    database: { embedded: {} },
  };
  writeFileSync(join(dir, "config.yaml"), stringify(config));
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      MAIN,
      "registry",
      "serve",
      "--config",
      join(dir, "config.yaml"),
      "--address",
      "127.0.0.1",
      "--port",
      String(port),
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  running.push(child);
  // Serving, and the catalog synced: the images are in the API.
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`registry server exited: ${out}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/default/v0.1/servers`);
      if (res.ok) {
        const body = (await res.json()) as { servers: unknown[] };
        if (body.servers.length === images.length) return child;
      }
    } catch {
      /* not listening yet */
    }
    if (i > 600) throw new Error(`registry server not ready: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopRegistry(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

const running: ChildProcess[] = [];
afterAll(async () => {
  for (const c of running) await stopRegistry(c);
});

function registryDoc(endpoint: string, enforce: boolean): string {
  return stringify({
    apiVersion: GROUP_VERSION,
    kind: "MCPRegistry",
    metadata: { name: "approved" },
    spec: {
      enforceServers: enforce,
      configYAML: stringify({
        sources: [{ name: "upstream", api: { endpoint }, syncPolicy: { interval: "1m" } }],
        registries: [{ name: "default", sources: ["upstream"] }],
        auth: { mode: "anonymous" },
        database: { embedded: {} },
      }),
    },
  });
}

function serverDoc(name: string, image: string): string {
  return stringify({
    apiVersion: GROUP_VERSION,
    kind: "MCPServer",
    metadata: { name },
    spec: { image, transport: "stdio" },
  });
}

type Status = {
  phase?: string;
  message?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
};

function setup(endpoint: string, servers: Record<string, string>) {
  const repo = tmp("repo");
  const files: Record<string, string> = { "fleet/registry.yaml": registryDoc(endpoint, true) };
  for (const [name, image] of Object.entries(servers))
    files[`fleet/${name}.yaml`] = serverDoc(name, image);
  makeRepo(repo, files);
  const ns = testNamespace(clusterKubeconfig()!, "enforce");
  // Without prune: the policy itself removes a refused server's workload.
  const h = harness(clusterKubeconfig()!, repo, ns, { prune: false });
  let clock = Date.now();
  const policy = new ImagePolicyApplier(h.applier, h.client, {
    fieldManager: "mcpfleet",
    now: () => clock,
    timeoutMs: 5_000,
  });
  const status = new ControllerStatus(h.source.refName, policy.target);
  const reconciler = new Reconciler({ source: h.source, applier: policy, status, namespace: ns });
  const statusOf = async (name: string) => (await h.get("MCPServer", name))?.status as Status;
  const condition = async (name: string) =>
    (await statusOf(name))?.conditions?.find((c) => c.type === "ImageValidated");
  return {
    repo,
    h,
    ns,
    reconciler,
    statusOf,
    condition,
    /** Moves the catalogs' clock past every source's interval. */
    later: () => (clock += 2 * 60_000),
  };
}

describe.skipIf(noCluster())("enforceServers at apply time", () => {
  it("runs listed images, withholds the rest, keeps the last listing while the registry is away, and admits an image added upstream", async () => {
    const port = await freePort();
    let upstream = await startRegistry(port, [ALLOWED]);
    const endpoint = `http://127.0.0.1:${port}/default`;
    const t = setup(endpoint, { good: ALLOWED, bad: LATER });

    // Offline, the api source cannot be read: a warning, no error, so the revision is valid.
    const offline = await validatePaths([join(t.repo, "fleet")]);
    expect(offline.summary.errors).toBe(0);
    expect(offline.resources.find((r) => r.kind === "MCPRegistry")?.warnings[0]?.message).toContain(
      "checks them at apply time",
    );

    expect((await t.reconciler.sync()).kind).toBe("applied");
    expect(await t.h.get("Deployment", "good")).toBeDefined();
    expect(await t.h.get("Deployment", "bad")).toBeUndefined();
    expect(await t.h.get("MCPServer", "bad")).toBeDefined();
    const bad = await t.statusOf("bad");
    expect(bad.phase).toBe("Failed");
    expect(bad.message).toContain(`"${LATER}"`);
    expect(await t.condition("bad")).toMatchObject({ status: "False", reason: "ImageNotListed" });
    expect((await t.condition("bad"))?.message).toContain('consulted: "approved"');
    expect(bad.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ImageNotListed",
    });
    expect(await t.condition("good")).toMatchObject({ status: "True", reason: "ImageListed" });
    expect((await t.statusOf("good")).phase).not.toBe("Failed");
    const events = (await t.h.list("Event")).filter(
      (e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === "bad",
    ) as { reason?: string; type?: string; message?: string }[];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "Warning", reason: "ImageNotListed" });
    expect(events[0]!.message).toContain(LATER);

    // The registry goes away: the last listing holds, and status says so; a new image is refused.
    await stopRegistry(upstream);
    t.later();
    commitFiles(
      t.repo,
      {
        "fleet/newcomer.yaml": serverDoc("newcomer", "ghcr.io/example/new:1"),
        "fleet/twin.yaml": serverDoc("twin", ALLOWED),
      },
      "two more servers",
    );
    expect((await t.reconciler.sync()).kind).toBe("applied");
    expect(await t.h.get("Deployment", "twin")).toBeDefined();
    expect(await t.h.get("Deployment", "newcomer")).toBeUndefined();
    const held = await t.condition("good");
    expect(held).toMatchObject({ status: "True", reason: "ImageListed" });
    expect(held?.message).toContain("cannot be read");
    expect(held?.message).toContain("holds");
    expect(await t.condition("newcomer")).toMatchObject({ status: "False" });

    // Back, listing the image of `bad` too: the next reconcile runs it, with no new commit.
    upstream = await startRegistry(port, [ALLOWED, LATER]);
    t.later();
    const again = await t.reconciler.sync();
    expect(again.kind).toBe("unchanged");
    expect(await t.h.get("Deployment", "bad")).toBeDefined();
    expect(await t.condition("bad")).toMatchObject({ status: "True", reason: "ImageListed" });
    expect((await t.statusOf("bad")).phase).not.toBe("Failed");

    // An image no longer listed: its workload goes (prune is off; the policy removes it).
    await stopRegistry(upstream);
    upstream = await startRegistry(port, [LATER]);
    t.later();
    expect((await t.reconciler.sync()).kind).toBe("unchanged");
    expect(await t.h.get("Deployment", "good")).toBeUndefined();
    expect(await t.h.get("ConfigMap", "good-runconfig")).toBeUndefined();
    expect(await t.condition("good")).toMatchObject({ status: "False", reason: "ImageNotListed" });
    expect(await t.h.get("Deployment", "bad")).toBeDefined();

    // Enforcement off: every server runs at the next reconcile.
    commitFiles(t.repo, { "fleet/registry.yaml": registryDoc(endpoint, false) }, "enforcement off");
    expect((await t.reconciler.sync()).kind).toBe("applied");
    for (const name of ["good", "bad", "newcomer", "twin"]) {
      expect(await t.h.get("Deployment", name), name).toBeDefined();
      expect(await t.condition(name), name).toBeUndefined();
    }
    await stopRegistry(upstream);
  });

  it("refuses every image while the registry has never been reached (fail closed)", async () => {
    const port = await freePort();
    const t = setup(`http://127.0.0.1:${port}/default`, { first: ALLOWED });
    expect((await t.reconciler.sync()).kind).toBe("applied");
    expect(await t.h.get("Deployment", "first")).toBeUndefined();
    const c = await t.condition("first");
    expect(c).toMatchObject({ status: "False", reason: "RegistryUnavailable" });
    expect(c?.message).toContain("approved/upstream");
    expect((await t.statusOf("first")).phase).toBe("Failed");
    // The registry comes up: the next reconcile admits the image.
    await startRegistry(port, [ALLOWED]);
    t.later();
    expect((await t.reconciler.sync()).kind).toBe("unchanged");
    expect(await t.h.get("Deployment", "first")).toBeDefined();
    expect(gitCmd(t.repo, "rev-list", "--count", "HEAD")).toBe("1");
  });
});

describe.skipIf(noCluster())("enforceServers through mcpfleet apply", () => {
  it("reads the example's catalog ConfigMap from the cluster: none yet refuses, applied admits", async () => {
    const kubeconfig = clusterKubeconfig()!;
    const ns = testNamespace(kubeconfig, "enforce-cli");
    const dir = join(tmp("example"), "fleet");
    const example = join(ROOT, "examples", "enforce-servers");
    writeExample(
      dir,
      {
        "registry.yaml": readFileSync(join(example, "registry.yaml"), "utf8"),
      },
      ns,
    );
    const apply = async () => {
      const out: string[] = [];
      const code = await runApply(
        [dir, "--kubeconfig", kubeconfig, "-n", ns, "--controller-namespace", ns],
        { out: (l) => out.push(l), err: (l) => out.push(l) },
      );
      return { code, out };
    };
    const c = KubeClient.fromFile(kubeconfig);
    try {
      const first = await apply();
      expect(first.code, first.out.join("\n")).toBe(0);
      const deployment = (name: string) =>
        c.get({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace: ns } });
      expect(await deployment("time")).toBeUndefined();
      expect(await deployment("fetch")).toBeUndefined();
      expect(first.out).toContainEqual(
        expect.stringMatching(
          new RegExp(`^MCPServer ${ns}/time: workloads not applied: .*\\(RegistryUnavailable\\)$`),
        ),
      );
      const server = await c.get({
        apiVersion: GROUP_VERSION,
        kind: "MCPServer",
        metadata: { name: "time", namespace: ns },
      });
      const conditions = (server?.status as Status | undefined)?.conditions ?? [];
      expect(conditions.find((x) => x.type === "ImageValidated")).toMatchObject({
        status: "False",
        reason: "RegistryUnavailable",
      });
      // The catalog as the example ships it, applied the way its comment says.
      const catalog = readFileSync(join(example, "catalog.yaml"), "utf8").replaceAll(
        "namespace: mcp-approved",
        `namespace: ${ns}`,
      );
      await c.apply(parse(catalog) as never, { fieldManager: "kubectl" });
      const second = await apply();
      expect(second.code, second.out.join("\n")).toBe(0);
      expect(second.out.filter((l) => l.includes("not applied"))).toEqual([]);
      expect(await deployment("time")).toBeDefined();
      expect(await deployment("fetch")).toBeDefined();
    } finally {
      c.close();
    }
  }, 120_000);
});

/** Writes `files` under `dir` with the example's namespace replaced by `ns`. */
function writeExample(dir: string, files: Record<string, string>, ns: string): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text.replaceAll("namespace: mcp-approved", `namespace: ${ns}`));
  }
}

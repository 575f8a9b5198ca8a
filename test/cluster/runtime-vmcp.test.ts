// vmcp runs as its rendered pod would, against the real API server: the rendered arguments and
// environment (VMCP_NAME and VMCP_NAMESPACE put it in Kubernetes mode), the rendered config, and
// the token of the rendered ServiceAccount where a pod finds it. vmcp only reads the in-cluster
// account (no kubeconfig), so it is started in a mount namespace of its own whose /run holds
// that account's files; the rest of the machine never sees them. What is checked: it starts,
// answers /health, and reports its status on the VirtualMCPServer through the rendered Role.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { resourceObject } from "../../src/controller/revision-plan.js";
import type { KubeClient } from "../../src/infra/kube/client.js";
import { loadPaths } from "../../src/synth/load.js";
import type { KubeObject } from "../../src/synth/model.js";
import { DEFAULT_SYNTH_OPTIONS } from "../../src/synth/options.js";
import { synthesize } from "../../src/synth/render.js";
import { noCluster } from "../support/cluster/context.js";
import { programPath, runtimeMissing } from "../synth/runtime-tools.js";
import {
  ROOT,
  client,
  installCrds,
  kubeconfig,
  kubectl,
  namespace,
  tmpDir,
  until,
} from "./helpers.js";
import { freePort } from "../support/ports.js";

const VMCP = "engineering-tools";

/** Why vmcp cannot be given its in-cluster account here, if it cannot. */
function accountMissing(): string | undefined {
  if (process.getuid?.() !== 0) return "a mount namespace for the pod's account needs root";
  const probe = spawnSync("unshare", ["--mount", "--propagation", "private", "true"]);
  if (probe.status !== 0) return `unshare --mount fails: ${probe.stderr?.toString().trim()}`;
  return undefined;
}

const missing = runtimeMissing() ?? accountMissing();
if (missing !== undefined) {
  if (process.env.REQUIRE_RUNTIME === "1" && !noCluster()) {
    throw new Error(`vmcp in-cluster test cannot run (REQUIRE_RUNTIME=1): ${missing}`);
  }
  console.warn(`vmcp in-cluster tests SKIPPED: ${missing}`);
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

type Obj = KubeObject & { spec?: Record<string, unknown> };
type Env = { name: string; value?: string };

/** The API server's address and CA, as the kubeconfig of the run names them. */
function apiServer(): { host: string; port: string; ca: Buffer } {
  const kc = parse(readFileSync(kubeconfig(), "utf8")) as {
    clusters: { cluster: { server: string; "certificate-authority-data"?: string } }[];
  };
  const cluster = kc.clusters[0]!.cluster;
  const url = new URL(cluster.server);
  const data = cluster["certificate-authority-data"];
  if (data === undefined) throw new Error("the run's kubeconfig has no inline CA");
  return { host: url.hostname, port: url.port, ca: Buffer.from(data, "base64") };
}

describe.skipIf(noCluster() || missing !== undefined)("vmcp in Kubernetes mode", () => {
  let c: KubeClient;
  let ns: string;
  let objects: Obj[];
  beforeAll(async () => {
    c = client();
    await installCrds(c);
    ns = await namespace(c, "vmcp");
    const loaded = await loadPaths([join(ROOT, "examples", "resources")], { namespace: ns });
    expect(loaded.valid).toBe(true);
    objects = synthesize(loaded.resources, DEFAULT_SYNTH_OPTIONS).objects;
    // The virtual server itself, in the form the controller applies it: vmcp reports onto it.
    const source = loaded.resources.find(
      (r) => r.kind === "VirtualMCPServer" && r.metadata.name === VMCP,
    );
    expect(source).toBeDefined();
    await c.apply(resourceObject(source!), { fieldManager: "mcpfleet-test" });
    // Its account and what the account may do, as rendered.
    for (const kind of ["ServiceAccount", "Role", "RoleBinding"]) {
      const o = objects.find((x) => x.kind === kind && x.metadata.name === `${VMCP}-vmcp`);
      expect(o, `${kind} ${VMCP}-vmcp rendered`).toBeDefined();
      await c.apply(o!, { fieldManager: "mcpfleet-test" });
    }
  });

  it("starts on the rendered pod's account and reports its status on the VirtualMCPServer", async () => {
    const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata.name === VMCP)!;
    const pod = (
      deployment as unknown as {
        spec: {
          template: {
            spec: {
              serviceAccountName: string;
              containers: { name: string; args: string[]; env?: Env[] }[];
            };
          };
        };
      }
    ).spec.template.spec;
    const container = pod.containers.find((x) => x.name === "vmcp")!;
    const configMap = objects.find(
      (o) => o.kind === "ConfigMap" && o.metadata.name === `${VMCP}-vmcp-config`,
    ) as unknown as { data: Record<string, string> };

    const dir = tmpDir("vmcp");
    const config = join(dir, "config.yaml");
    writeFileSync(config, configMap.data["config.yaml"]!);
    const account = join(dir, "serviceaccount");
    mkdirSync(account);
    const token = kubectl(["create", "token", pod.serviceAccountName, "-n", ns]);
    expect(token.status, token.stderr).toBe(0);
    const api = apiServer();
    writeFileSync(join(account, "token"), token.stdout.trim());
    writeFileSync(join(account, "ca.crt"), api.ca);
    writeFileSync(join(account, "namespace"), ns);

    const port = await freePort();
    // The rendered arguments, but listening where the test can reach it.
    const args = [
      ...container.args.filter((a) => !a.startsWith("--host=") && !a.startsWith("--port=")),
      "--host=127.0.0.1",
      `--port=${port}`,
    ].map((a) => (a.startsWith("--config=") ? `--config=${config}` : a));
    expect(args[0]).toBe("serve");
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      KUBERNETES_SERVICE_HOST: api.host,
      KUBERNETES_SERVICE_PORT: api.port,
    };
    // Literal variables as rendered (VMCP_NAME, VMCP_NAMESPACE); Secret-backed ones a stand-in.
    for (const e of container.env ?? []) env[e.name] = e.value ?? "stand-in";
    expect(env.VMCP_NAME).toBe(VMCP);
    expect(env.VMCP_NAMESPACE).toBe(ns);

    const script = [
      "mount -t tmpfs tmpfs /run",
      "mkdir -p /run/secrets/kubernetes.io",
      'cp -r "$ACCOUNT" /run/secrets/kubernetes.io/serviceaccount',
      'exec "$@"',
    ].join(" && ");
    const child = spawn(
      "unshare",
      [
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "vmcp",
        programPath("vmcp"),
        ...args,
      ],
      { env: { ...env, ACCOUNT: account }, stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(child);
    let log = "";
    child.stdout.on("data", (d: Buffer) => (log += d.toString()));
    child.stderr.on("data", (d: Buffer) => (log += d.toString()));

    const health = await until(
      "vmcp answers /health",
      async () => {
        if (child.exitCode !== null) throw new Error(`vmcp exited ${child.exitCode}:\n${log}`);
        try {
          const r = await fetch(`http://127.0.0.1:${port}/health`);
          return r.status;
        } catch {
          return undefined;
        }
      },
      60_000,
    );
    expect(health, log).toBe(200);

    // vmcp writes its runtime status through the status subresource with the rendered Role;
    // a schema without those fields would prune them and the report would be lost unseen.
    const reported = await until(
      "vmcp's status report on the VirtualMCPServer",
      async () => {
        if (child.exitCode !== null) throw new Error(`vmcp exited ${child.exitCode}:\n${log}`);
        const live = await c.get({
          apiVersion: "toolhive.stacklok.dev/v1beta1",
          kind: "VirtualMCPServer",
          metadata: { name: VMCP, namespace: ns },
        });
        const runtime = (live?.status as { runtime?: { phase?: string } } | undefined)?.runtime;
        return runtime?.phase !== undefined ? runtime : undefined;
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${log}`);
    });
    expect(reported.phase, log).toMatch(/^(Pending|Ready|Degraded|Failed)$/);
    expect(log).not.toMatch(/forbidden/i);
  }, 150_000);
});

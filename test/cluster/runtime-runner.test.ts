// The proxy runner starts from what synth renders, against the real API server: the runner
// container's arguments and environment from the rendered Deployment, the rendered run-config
// where it looks for one, and a kubeconfig instead of the in-cluster account. It reads the
// run-config, applies the pod patch and creates the MCP server's StatefulSet through the API
// server, which is checked here; the runner is stopped once it has (it would go on to wait
// for a pod no kubelet runs).
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { KubeClient } from "../../src/infra/kube/client.js";
import { loadPaths } from "../../src/synth/load.js";
import type { KubeObject } from "../../src/synth/model.js";
import { DEFAULT_SYNTH_OPTIONS } from "../../src/synth/options.js";
import { synthesize } from "../../src/synth/render.js";
import { noCluster } from "../support/cluster/context.js";
import { programPath, runtimeMissing } from "../synth/runtime-tools.js";
import { ROOT, client, kubeconfig, namespace, tmpDir, until } from "./helpers.js";
import { freePort } from "../support/ports.js";

const missing = runtimeMissing();
if (missing !== undefined) console.warn(`runtime runner tests SKIPPED: ${missing}`);

type Env = { name: string; value?: string; valueFrom?: unknown };
type Container = { name: string; args: string[]; env?: Env[] };
type Obj = Record<string, unknown>;

const children: ChildProcess[] = [];
let cleanupNamespace: (() => Promise<unknown>) | undefined;
afterAll(async () => {
  await cleanupNamespace?.();
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

function runnerContainer(deployment: KubeObject): Container {
  const spec = (
    deployment as unknown as { spec: { template: { spec: { containers: Container[] } } } }
  ).spec.template.spec;
  const c = spec.containers.find((x) => x.name === "toolhive");
  if (c === undefined) throw new Error(`no runner container in ${deployment.metadata.name}`);
  return c;
}

/** Starts the runner as its pod would, in `ns`; returns its output so far on demand. */
function startRunner(objects: KubeObject[], name: string, ns: string): () => string {
  const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata.name === name)!;
  const configMap = objects.find(
    (o) => o.kind === "ConfigMap" && o.metadata.name === `${name}-runconfig`,
  )!;
  const dir = tmpDir("runner");
  // The runner reads /etc/runconfig/runconfig.json in its pod, else ./runconfig.json.
  writeFileSync(
    join(dir, "runconfig.json"),
    (configMap as unknown as { data: Record<string, string> }).data["runconfig.json"]!,
  );
  const container = runnerContainer(deployment);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    KUBECONFIG: kubeconfig(),
    POD_NAMESPACE: ns,
  };
  // Literal variables as rendered; those read from Secrets get a stand-in value.
  for (const e of container.env ?? []) env[e.name] = e.value ?? "stand-in";
  env.HOME = dir;
  env.XDG_CONFIG_HOME = dir;
  const child = spawn(programPath("thv-proxyrunner"), container.args, {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let log = "";
  child.stdout.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr.on("data", (d: Buffer) => (log += d.toString()));
  return () => log;
}

describe.skipIf(noCluster() || missing !== undefined)("the proxy runner on the API server", () => {
  let c: KubeClient;
  let objects: KubeObject[];
  const restricted = `restricted-runner-${Date.now().toString(36)}`;
  beforeAll(async () => {
    c = client();
    await c.create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: restricted,
        labels: { "pod-security.kubernetes.io/enforce": "restricted" },
      },
    });
    cleanupNamespace = () =>
      c
        .delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: restricted } })
        .catch(() => false);
    await until("the default ServiceAccount", () =>
      c.get({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "default", namespace: restricted },
      }),
    );
    const loaded = await loadPaths([join(ROOT, "examples", "resources")]);
    expect(loaded.valid).toBe(true);
    objects = synthesize(loaded.resources, DEFAULT_SYNTH_OPTIONS).objects;
  });

  it.each(["time", "fetch", "yardstick"])(
    "MCPServer %s: the runner creates the server's StatefulSet from the rendered pod patch",
    async (name) => {
      const ns = await namespace(c, `runner-${name}`);
      const log = startRunner(objects, name, ns);
      const set = await until(
        `StatefulSet ${name} created by the runner`,
        () =>
          c.get({ apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name, namespace: ns } }),
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${log()}`);
      });
      const pod = (set.spec as { template: { spec: Obj } }).template.spec;
      const patch = JSON.parse(
        runnerContainer(objects.find((o) => o.kind === "Deployment" && o.metadata.name === name)!)
          .args.find((a) => a.startsWith("--k8s-pod-patch="))!
          .slice("--k8s-pod-patch=".length),
      ) as { spec: { serviceAccountName: string; containers: { name: string; env?: Env[] }[] } };
      expect(pod.serviceAccountName).toBe(patch.spec.serviceAccountName);
      const mcp = (pod.containers as { name: string; env?: Env[]; image: string }[]).find(
        (x) => x.name === "mcp",
      );
      expect(mcp, log()).toBeDefined();
      for (const e of patch.spec.containers[0]?.env ?? []) expect(mcp!.env).toContainEqual(e);
      // The MCP server's pod is the runner's to secure: it passes the restricted standard.
      const template = (set.spec as { template: { metadata?: Obj; spec: Obj } }).template;
      const refused = await c
        .request("POST", await c.path("v1", "Pod", restricted), {
          query: { dryRun: "All" },
          body: {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
              name: `pod-${name}`,
              namespace: restricted,
              labels: template.metadata?.labels,
            },
            spec: {
              ...template.spec,
              serviceAccountName: undefined,
              serviceAccount: undefined,
              automountServiceAccountToken: false,
            },
          },
        })
        .then(
          () => undefined,
          (err: Error) => err.message,
        );
      expect(refused).toBeUndefined();
    },
    90_000,
  );

  // The second resolves a bearer token and a header through the runner's secrets provider
  // (TOOLHIVE_SECRET_<name>); without one configured the runner would stop.
  it.each([
    ["plain", {}],
    [
      "with secrets",
      {
        externalAuthConfigRef: { name: "api-bearer" },
        headerForward: {
          addHeadersFromSecret: [
            { headerName: "X-Api-Key", valueSecretRef: { name: "api-key", key: "key" } },
          ],
        },
      },
    ],
  ])(
    "MCPRemoteProxy %s: the runner starts with the rendered arguments and serves /health",
    async (_label, extra) => {
      const port = await freePort();
      const resources = (
        await loadPaths([join(ROOT, "examples", "resources", "mcpgroup-engineering.yaml")])
      ).resources;
      const bearer = {
        apiVersion: "toolhive.stacklok.dev/v1alpha1",
        kind: "MCPExternalAuthConfig",
        metadata: { name: "api-bearer", namespace: "default" },
        spec: {
          type: "bearerToken",
          bearerToken: { tokenSecretRef: { name: "api-token", key: "token" } },
        },
      } as unknown as (typeof resources)[number];
      const proxy = {
        apiVersion: "toolhive.stacklok.dev/v1alpha1",
        kind: "MCPRemoteProxy",
        metadata: { name: "remote", namespace: "default" },
        spec: {
          remoteURL: "http://127.0.0.1:9/mcp",
          proxyPort: port,
          transport: "streamable-http",
          ...extra,
        },
      } as unknown as (typeof resources)[number];
      resources.push(bearer);
      const rendered = synthesize([...resources, proxy], DEFAULT_SYNTH_OPTIONS).objects;
      const ns = await namespace(c, "runner-remote");
      const log = startRunner(rendered, "remote", ns);
      const status = await until(
        "the remote proxy answers /health",
        async () => {
          try {
            return (await fetch(`http://127.0.0.1:${port}/health`)).status;
          } catch {
            return undefined;
          }
        },
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${log()}`);
      });
      expect(status, log()).toBeLessThan(500);
      expect(log()).toContain("workload started successfully");
    },
    90_000,
  );
});

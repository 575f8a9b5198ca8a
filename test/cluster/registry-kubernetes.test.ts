// The registry's kubernetes source against the real API server: exported resources become
// entries, watch events sync at once, claims come from the annotation.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/infra/kube/client.js";
import { kubeEntry } from "../../src/registry/sources/kubernetes.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { pino } from "pino";
import { parseConfig } from "../../src/registry/config/load.js";
import { RegistryServer } from "../../src/registry/server.js";

import { testNamespace } from "./controller-harness.js";
import { client, installCrds } from "./helpers.js";

/** A namespace of this file's own: the server is shared by every cluster test of the run. */
const NS = noCluster() ? "unused" : testNamespace(clusterKubeconfig()!, "registry");

function mcpServer(name: string, annotations: Record<string, string>) {
  return {
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind: "MCPServer",
    metadata: { name, namespace: NS, annotations },
    spec: { image: "ghcr.io/example/fetch:1.0.0", transport: "streamable-http", proxyPort: 8080 },
  };
}

describe.skipIf(noCluster())("kubernetes source on the API server", () => {
  let dir: string;
  let server: RegistryServer;
  let kube: KubeClient | undefined;
  let objects: k8s.CustomObjectsApi;
  const group = {
    group: "toolhive.stacklok.dev",
    version: "v1alpha1",
    namespace: NS,
    plural: "mcpservers",
  };
  const list = async () =>
    (
      (await (await fetch(`${server.url}/cluster/v0.1/servers`)).json()) as {
        servers: { server: { name: string; description: string; remotes: unknown[] } }[];
      }
    ).servers;
  const until = async (cond: () => Promise<boolean>) => {
    for (let i = 0; i < 100; i++) {
      if (await cond()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("condition not met in 10 s");
  };

  beforeAll(async () => {
    await installCrds(client());
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(clusterKubeconfig()!);
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
    objects = kc.makeApiClient(k8s.CustomObjectsApi);
    kube = new KubeClient(kc);
    await objects.createNamespacedCustomObject({
      ...group,
      body: mcpServer("fetch", {
        "toolhive.stacklok.dev/registry-export": "true",
        "toolhive.stacklok.dev/registry-url": "https://fetch.team-a.example/mcp",
        "toolhive.stacklok.dev/registry-description": "Fetches web pages",
        "toolhive.stacklok.dev/authz-claims": '{"team":"a"}',
      }),
    });
    await objects.createNamespacedCustomObject({ ...group, body: mcpServer("hidden", {}) });
    dir = mkdtempSync(join(tmpdir(), "kube-src-"));
    const yaml = `
sources:
  - name: k8s
    kubernetes: { namespaces: [${NS}] }
registries:
  - name: cluster
    sources: [k8s]
auth: { mode: anonymous }
`;
    const path = join(dir, "config.yaml");
    writeFileSync(path, yaml);
    server = await RegistryServer.start(
      { ...parseConfig(yaml, path), path, baseDir: dir },
      { port: 0, log: pino({ level: "silent" }), kubeClient: () => kube! },
    );
    await until(async () => (await fetch(`${server.url}/readiness`)).status === 200);
  });
  afterAll(async () => {
    await server?.close();
    kube?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves exported resources with claims from the annotation", async () => {
    const servers = await list();
    expect(servers.map((s) => s.server.name)).toEqual([`com.toolhive.k8s.${NS}/fetch`]);
    expect(servers[0]?.server).toMatchObject({
      description: "Fetches web pages",
      remotes: [{ type: "streamable-http", url: "https://fetch.team-a.example/mcp" }],
    });
    // The watches' first events start one more sync right after the first: wait it out.
    const status = async () =>
      (
        (await (await fetch(`${server.url}/v1/sources/k8s`)).json()) as {
          status: { phase: string };
        }
      ).status;
    // The status that was Ready: a watch event may start another sync before a second read.
    let seen = await status();
    await until(async () => (seen = await status()).phase === "Ready");
    expect(seen).toMatchObject({ phase: "Ready", entryCount: 1 });
  });

  it("follows the cluster through its watch", async () => {
    await objects.createNamespacedCustomObject({
      ...group,
      body: mcpServer("later", {
        "toolhive.stacklok.dev/registry-export": "true",
        "toolhive.stacklok.dev/registry-url": "https://later.example/sse",
      }),
    });
    await until(async () => (await list()).length === 2);
    await objects.deleteNamespacedCustomObject({ ...group, name: "fetch" });
    await until(
      async () =>
        (await list()).map((s) => s.server.name).join() === `com.toolhive.k8s.${NS}/later`,
    );
  });

  it("converts annotations and rejects bad claims", () => {
    const e = kubeEntry("MCPServer", {
      metadata: {
        name: "x",
        namespace: "ns",
        annotations: { "toolhive.stacklok.dev/authz-claims": '{"a":["b","c"]}' },
      },
      spec: { transport: "sse" },
      status: { url: "http://mcp-x-proxy.ns.svc.cluster.local:8080/sse#x" },
    });
    expect(e).toMatchObject({
      name: "com.toolhive.k8s.ns/x",
      claims: { a: ["b", "c"] },
      server: { remotes: [{ type: "sse" }] },
    });
    expect(
      kubeEntry("MCPServer", {
        metadata: {
          name: "x",
          namespace: "ns",
          annotations: { "toolhive.stacklok.dev/authz-claims": "{nope" },
        },
        status: { url: "http://x" },
      }),
    ).toMatch(/not JSON/);
    expect(kubeEntry("MCPServer", { metadata: { name: "x", namespace: "ns" } })).toMatch(
      /no .*registry-url/,
    );
  });
});

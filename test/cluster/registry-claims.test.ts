// Entries of a kubernetes source (on the real API server) take their claims from the authz-claims
// annotation; in oauth mode they filter what each caller sees (claimless ones only for superAdmin).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/infra/kube/client.js";
import { parseConfig } from "../../src/registry/config/load.js";
import { RegistryServer } from "../../src/registry/server.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { AUDIENCE, startIssuer, type TestIssuer } from "../support/oidc.js";
import { call } from "../registry-auth/helpers.js";
import { testNamespace } from "./controller-harness.js";
import { client, installCrds } from "./helpers.js";
import { untilReady } from "../registry/helpers.js";

const NS = noCluster() ? "unused" : testNamespace(clusterKubeconfig()!, "claims");

let issuer: TestIssuer;
let server: RegistryServer;
let kube: KubeClient | undefined;

function exported(name: string, claims?: string) {
  return {
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind: "MCPServer",
    metadata: {
      name,
      namespace: NS,
      annotations: {
        "toolhive.stacklok.dev/registry-export": "true",
        "toolhive.stacklok.dev/registry-url": `https://${name}.example/mcp`,
        ...(claims !== undefined ? { "toolhive.stacklok.dev/authz-claims": claims } : {}),
      },
    },
    spec: { image: "ghcr.io/example/x:1.0.0", transport: "streamable-http", proxyPort: 8080 },
  };
}

beforeAll(async () => {
  if (noCluster()) return;
  await installCrds(client());
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(clusterKubeconfig()!);
  await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  const objects = kc.makeApiClient(k8s.CustomObjectsApi);
  kube = new KubeClient(kc);
  const group = {
    group: "toolhive.stacklok.dev",
    version: "v1alpha1",
    namespace: NS,
    plural: "mcpservers",
  };
  for (const body of [
    exported("for-a", '{"team":"a"}'),
    exported("for-b", '{"team":"b"}'),
    exported("for-a-ops", '{"team":"a","groups":["ops"]}'),
    exported("no-claims"),
  ]) {
    await objects.createNamespacedCustomObject({ ...group, body });
  }
  issuer = await startIssuer({
    a: { team: "a" },
    aops: { team: "a", groups: ["ops", "dev"] },
    root: { groups: ["root"] },
  });
  const dir = mkdtempSync(join(tmpdir(), "kube-auth-"));
  const yaml = JSON.stringify({
    sources: [{ name: "k8s", kubernetes: { namespaces: [NS] } }],
    registries: [{ name: "cluster", sources: ["k8s"] }],
    auth: {
      oauth: {
        resourceUrl: "https://registry.test",
        providers: [
          { name: "local", issuerUrl: issuer.issuer, audience: AUDIENCE, allowPrivateIP: true },
        ],
      },
      authz: { roles: { superAdmin: [{ groups: "root" }] } },
    },
  });
  const path = join(dir, "config.yaml");
  writeFileSync(path, yaml);
  server = await RegistryServer.start(
    { ...parseConfig(yaml, path), path, baseDir: dir },
    { port: 0, log: pino({ level: "silent" }), kubeClient: () => kube!, generationPollMs: 100 },
  );
  await untilReady(server.url);
});

afterAll(async () => {
  await server?.close();
  kube?.close();
  await issuer?.close();
});

async function names(client: string): Promise<string[]> {
  const r = await call(`${server.url}/cluster/v0.1/servers`, { token: await issuer.token(client) });
  expect(r.status).toBe(200);
  return (r.body.servers as { server: { name: string } }[]).map((s) =>
    s.server.name.replace(`com.toolhive.k8s.${NS}/`, ""),
  );
}

describe.skipIf(noCluster())("kubernetes entries and claims", () => {
  it("filters cluster entries by their annotation's claims", async () => {
    expect(await names("a")).toEqual(["for-a"]);
    expect(await names("aops")).toEqual(["for-a", "for-a-ops"]);
    expect(await names("root")).toEqual(["for-a", "for-a-ops", "for-b", "no-claims"]);
  });
});

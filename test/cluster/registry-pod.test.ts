// An MCPRegistry applied by the controller on the real API server, and its pod run as the kubelet
// would run it: our registry server from the image's tree, with the live Deployment's arguments
// and environment, the live ConfigMap, and the rendered ServiceAccount's token where a pod finds
// it (the API server reached through a Service address on the pod's loopback). What is checked:
// its kubernetes source lists the MCPServers, MCPRemoteProxies and VirtualMCPServers the
// controller applied, with the claims of their annotation; one applied later shows up without a
// restart; and once the pod is ready (this test reports it, as the kubelet would), the
// MCPRegistry's status says so.
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFiles, makeRepo } from "../support/git-server.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { buildImageTree, mcpfleetImage } from "../support/image.js";
import {
  forwardIntoPod,
  podFetch,
  podsMissing,
  type RunningPod,
  startPod,
  untilPod,
} from "../support/pod.js";
import { tmp } from "../controller/helpers.js";
import {
  harness,
  type Harness,
  reportPodReady,
  testNamespace,
  until,
} from "./controller-harness.js";
import { kubectl } from "./helpers.js";

const missing = noCluster() ? "no cluster" : podsMissing();
if (missing !== undefined && !noCluster()) {
  if (process.env.REQUIRE_CLUSTER === "1")
    throw new Error(`registry pod in the cluster: ${missing}`);
  console.warn(`registry pod in the cluster SKIPPED: ${missing}`);
}

const REGISTRY = `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPRegistry
metadata: {name: catalog}
spec:
  displayName: What runs here
  configYAML: |
    sources:
      - name: cluster
        kubernetes: {}
    registries:
      - name: default
        sources: [cluster]
    auth:
      mode: anonymous
`;

const exported = (claims: string): Record<string, string> => ({
  "toolhive.stacklok.dev/registry-export": "true",
  "toolhive.stacklok.dev/authz-claims": claims,
});

function annotated(kind: string, name: string, spec: string, claims: string): string {
  return `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: ${kind}
metadata:
  name: ${name}
  annotations: ${JSON.stringify(exported(claims))}
spec:
${spec}`;
}

const FETCH = annotated(
  "MCPServer",
  "fetch",
  "  image: ghcr.io/example/fetch:1.0.0\n  transport: streamable-http\n  proxyPort: 8080\n",
  '{"team":"a"}',
);
const REMOTE = annotated(
  "MCPRemoteProxy",
  "search",
  "  remoteURL: https://search.example.com/mcp\n  transport: streamable-http\n",
  '{"team":"b"}',
);
const GROUP = `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPGroup
metadata: {name: tools}
spec: {}
`;
const VMCP = annotated(
  "VirtualMCPServer",
  "gateway",
  "  groupRef: tools\n  incomingAuth: {type: anonymous}\n",
  '{"team":"c"}',
);
const LATER = annotated(
  "MCPServer",
  "later",
  "  image: ghcr.io/example/later:1.0.0\n  transport: streamable-http\n  proxyPort: 8080\n",
  '{"team":"d"}',
);

/** The API server's address and CA, as the run's kubeconfig names them. */
function apiServer(): { host: string; port: number; ca: Buffer } {
  const kc = parse(readFileSync(clusterKubeconfig()!, "utf8")) as {
    clusters: { cluster: { server: string; "certificate-authority-data": string } }[];
  };
  const cluster = kc.clusters[0]!.cluster;
  const url = new URL(cluster.server);
  return {
    host: url.hostname,
    port: Number(url.port),
    ca: Buffer.from(cluster["certificate-authority-data"], "base64"),
  };
}

type Entry = { name: string; claims?: Record<string, unknown> };

describe.skipIf(missing !== undefined)(
  "an applied MCPRegistry's pod lists what is deployed",
  () => {
    let h: Harness;
    let repo: string;
    let pod: RunningPod;
    let tree: string;
    beforeAll(() => {
      tree = buildImageTree();
    }, 300_000);
    afterAll(async () => {
      await pod?.stop();
      h?.close();
    });

    it("lists the applied servers with their claims, sees a new one, and reports Ready", async () => {
      const ns = testNamespace(clusterKubeconfig()!, "registry-pod");
      repo = tmp("registry-pod-repo");
      makeRepo(repo, {
        "fleet/registry.yaml": REGISTRY,
        "fleet/servers.yaml": [FETCH, REMOTE, GROUP, VMCP].join("---\n"),
      });
      h = harness(clusterKubeconfig()!, repo, ns);
      const first = await h.reconciler.sync();
      expect(first.kind, JSON.stringify(first)).toBe("applied");

      const deployment = await h.get("Deployment", "catalog-api");
      const config = await h.get("ConfigMap", "catalog-registry-server-config");
      expect(deployment).toBeDefined();
      expect(config).toBeDefined();
      const account = (
        deployment as unknown as { spec: { template: { spec: { serviceAccountName: string } } } }
      ).spec.template.spec.serviceAccountName;
      const token = kubectl(["create", "token", account, "-n", ns]);
      expect(token.status, token.stderr).toBe(0);
      const api = apiServer();

      pod = await startPod({
        deployment: deployment!,
        objects: [config!],
        image: () => mcpfleetImage(tree),
        account: {
          token: token.stdout.trim(),
          ca: api.ca,
          namespace: ns,
          host: "127.0.0.1",
          port: "443",
        },
        sidecar: (netns) => forwardIntoPod(netns!, 443, api),
      });
      const ready = await untilPod(
        pod,
        "the registry's readiness probe",
        "http://127.0.0.1:8080/readiness",
        (r) => r.status === 200,
      );
      console.log(`registry pod in the cluster: ready after ${ready.afterMs} ms`);

      const entries = (): Entry[] => {
        const r = podFetch(pod, "http://127.0.0.1:8080/v1/sources/cluster/entries");
        if (r?.status !== 200) return [];
        return (JSON.parse(r.body) as { entries: Entry[] }).entries;
      };
      const listed = await until("the three exported resources are listed", () => {
        const e = entries();
        return e.length >= 3 ? e : undefined;
      });
      const byName = Object.fromEntries(listed.map((e) => [e.name, e.claims]));
      expect(byName).toEqual({
        [`com.toolhive.k8s.${ns}/fetch`]: { team: "a" },
        [`com.toolhive.k8s.${ns}/search`]: { team: "b" },
        [`com.toolhive.k8s.${ns}/gateway`]: { team: "c" },
      });
      const servers = podFetch(pod, "http://127.0.0.1:8080/registry/default/v0.1/servers");
      expect(servers?.status).toBe(200);
      expect(servers!.body).toContain(`com.toolhive.k8s.${ns}/fetch`);

      // A server applied later is listed by the running pod: its watch, not a restart.
      commitFiles(repo, { "fleet/later.yaml": LATER }, "later");
      expect((await h.reconciler.sync()).kind).toBe("applied");
      await until(
        "the server applied later is listed",
        () => entries().some((e) => e.name === `com.toolhive.k8s.${ns}/later`),
        30_000,
      );
      expect(pod.child.exitCode).toBeNull();

      // Play the kubelet: the pod answers its readiness probe, so report its pod Ready.
      await reportPodReady(h, "catalog-api");
      expect((await h.reconciler.sync()).kind).toMatch(/applied|unchanged/);
      const status = (await h.get("MCPRegistry", "catalog"))?.status as {
        phase?: string;
        url?: string;
        readyReplicas?: number;
        conditions?: { type: string; status: string }[];
      };
      expect(status).toMatchObject({
        phase: "Ready",
        url: `http://catalog-api.${ns}.svc.cluster.local:8080`,
        readyReplicas: 1,
      });
      expect(status.conditions).toContainEqual(
        expect.objectContaining({ type: "Ready", status: "True" }),
      );
    }, 240_000);
  },
);

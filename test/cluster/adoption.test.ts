// Objects the reference operator created are taken over by applying ours server-side: the
// Deployments, StatefulSets and Services it makes are created on the real API server in the
// shape its builders give them (selectors, labels, a StatefulSet's service name and claim
// templates: the fields Kubernetes refuses to change), then everything synth renders for the
// same resources is applied with force as our field manager. No immutable-field error may occur,
// and the selectors stay the reference's. Those shapes are written here from the reference's
// builders, independently of src/synth, so a change to our labels that would break adoption
// fails this test.
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { KubeClient } from "../../src/infra/kube/client.js";
import { loadPaths } from "../../src/synth/load.js";
import type { KubeObject, Resource } from "../../src/synth/model.js";
import { DEFAULT_SYNTH_OPTIONS } from "../../src/synth/options.js";
import { synthesize } from "../../src/synth/render.js";
import { noCluster } from "../support/cluster/context.js";
import { ROOT, client, installCrds, namespace } from "./helpers.js";

type Labels = Record<string, string>;
const REFERENCE_MANAGER = "toolhive-operator";

function toolhiveLabels(app: string, name: string): Labels {
  return {
    app,
    "app.kubernetes.io/name": app,
    "app.kubernetes.io/instance": name,
    toolhive: "true",
    "toolhive-name": name,
  };
}

function deployment(
  name: string,
  ns: string,
  labels: Labels,
  selector: Labels,
  container: string,
): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: ns, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: container, image: "registry.example/reference:1" }] },
      },
    },
  };
}

function service(
  name: string,
  ns: string,
  labels: Labels,
  selector: Labels,
  port: number,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns, labels },
    spec: { selector, ports: [{ name: "http", port, targetPort: port, protocol: "TCP" }] },
  };
}

/** What the reference operator creates for `r` that Kubernetes will not let another shape replace. */
function referenceObjects(r: Resource, ns: string): KubeObject[] {
  const n = r.metadata.name;
  const spec = r.spec as Record<string, unknown>;
  switch (r.kind) {
    case "MCPServer": {
      const l = toolhiveLabels("mcpserver", n);
      return [deployment(n, ns, l, l, "toolhive"), service(`mcp-${n}-proxy`, ns, l, l, 8080)];
    }
    case "MCPRemoteProxy": {
      const l = toolhiveLabels("mcpremoteproxy", n);
      return [
        deployment(n, ns, l, l, "toolhive"),
        service(`mcp-${n}-remote-proxy`, ns, l, l, 8080),
      ];
    }
    case "VirtualMCPServer": {
      const l = toolhiveLabels("virtualmcpserver", n);
      return [deployment(n, ns, l, l, "vmcp"), service(`vmcp-${n}`, ns, l, l, 4483)];
    }
    case "MCPRegistry": {
      const selector = {
        "app.kubernetes.io/name": `${n}-api`,
        "app.kubernetes.io/component": "registry-api",
      };
      const l = {
        ...selector,
        "app.kubernetes.io/managed-by": REFERENCE_MANAGER,
        "toolhive.stacklok.io/registry-name": n,
      };
      return [
        deployment(`${n}-api`, ns, l, selector, "registry-api"),
        service(`${n}-api`, ns, l, selector, 8080),
      ];
    }
    case "EmbeddingServer": {
      const l = {
        "app.kubernetes.io/name": "embeddingserver",
        "app.kubernetes.io/instance": n,
        "app.kubernetes.io/component": "embedding-server",
        "app.kubernetes.io/managed-by": REFERENCE_MANAGER,
      };
      const cache = spec.modelCache as
        { enabled?: boolean; size?: string; accessMode?: string } | undefined;
      const claims =
        cache !== undefined && cache.enabled !== false
          ? [
              {
                metadata: { name: "model-cache", labels: l },
                spec: {
                  accessModes: [cache.accessMode ?? "ReadWriteOnce"],
                  resources: { requests: { storage: cache.size ?? "10Gi" } },
                },
              },
            ]
          : undefined;
      const set = {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: n, namespace: ns, labels: l },
        spec: {
          replicas: 1,
          serviceName: n,
          selector: { matchLabels: l },
          template: {
            metadata: { labels: l },
            spec: { containers: [{ name: "embedding", image: "registry.example/reference:1" }] },
          },
          ...(claims !== undefined ? { volumeClaimTemplates: claims } : {}),
        },
      } as unknown as KubeObject;
      return [set, service(n, ns, l, l, (spec.port as number | undefined) ?? 8080)];
    }
    default:
      return [];
  }
}

describe.skipIf(noCluster())("adopting the reference operator's objects", () => {
  let c: KubeClient;
  let resources: Resource[];
  beforeAll(async () => {
    c = client();
    await installCrds(c);
    const loaded = await loadPaths([join(ROOT, "examples", "resources")]);
    expect(loaded.valid).toBe(true);
    resources = loaded.resources;
  });

  it("server-side apply of ours takes over every object, no immutable field in the way", async () => {
    const ns = await namespace(c, "adopt");
    const inNs = (o: KubeObject): KubeObject => ({
      ...o,
      metadata: { ...o.metadata, namespace: ns },
    });
    const theirs = resources.flatMap((r) => referenceObjects(r, ns));
    expect(new Set(theirs.map((o) => o.kind))).toEqual(
      new Set(["Deployment", "StatefulSet", "Service"]),
    );
    for (const o of theirs) await c.create(o, { fieldManager: REFERENCE_MANAGER });

    const ours = synthesize(resources, DEFAULT_SYNTH_OPTIONS).objects.map(inNs);
    const failures: string[] = [];
    for (const o of ours) {
      try {
        await c.apply(o, { fieldManager: "mcpfleet", force: true });
      } catch (err) {
        failures.push(`${o.kind} ${o.metadata.name}: ${(err as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
    // Every reference object was one of ours, and keeps its selector.
    for (const t of theirs) {
      const mine = ours.find((o) => o.kind === t.kind && o.metadata.name === t.metadata.name);
      expect(mine, `${t.kind} ${t.metadata.name} rendered`).toBeDefined();
      const live = await c.get(t);
      const selector = (s: unknown): unknown =>
        (s as { spec: { selector: unknown } }).spec.selector;
      expect(selector(live)).toEqual(selector(t));
    }
  }, 120_000);

  it("a different selector is refused (the test can fail)", async () => {
    const ns = await namespace(c, "adopt-neg");
    const server = resources.find((r) => r.kind === "MCPServer")!;
    const [theirs] = referenceObjects(server, ns);
    await c.create(theirs!, { fieldManager: REFERENCE_MANAGER });
    const l = {
      app: "mcpserver",
      "app.kubernetes.io/name": "mcpserver",
      "app.kubernetes.io/instance": server.metadata.name,
    };
    const other = deployment(server.metadata.name, ns, l, l, "toolhive");
    await expect(c.apply(other, { fieldManager: "mcpfleet", force: true })).rejects.toThrow(
      /immutable/,
    );
  }, 60_000);
});

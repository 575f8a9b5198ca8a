import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderEmbeddingServer } from "../../src/synth/constructs/embeddingserver.js";
import { renderVirtualMCPServer } from "../../src/synth/constructs/vmcp/index.js";
import { checkObjects } from "../../src/synth/kube-check.js";
import { loadTexts, resourcesOfText } from "../../src/synth/load.js";
import type { KubeObject, Resource } from "../../src/synth/model.js";
import { synthesize } from "../../src/synth/render.js";
import { toYaml } from "../../src/synth/yaml.js";
import { REFERENCE_RESOURCES } from "../schema/helpers.js";
import { hasSharedData } from "../support/shared-data.js";

const only = { EmbeddingServer: renderEmbeddingServer };

async function render(text: string): Promise<KubeObject[]> {
  const result = await loadTexts([{ name: "embedding.yaml", text }], { namespace: "ml" });
  if (!result.valid) {
    throw new Error(
      result.report.resources
        .flatMap((r) => r.errors.map((e) => `${e.path}: ${e.message}`))
        .join("\n"),
    );
  }
  return synthesize(result.resources, undefined, only).objects;
}

function find(objects: KubeObject[], kind: string, name: string): KubeObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (o === undefined) throw new Error(`no ${kind}/${name}`);
  return o;
}

interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  ports?: unknown[];
  resources?: unknown;
  volumeMounts?: unknown[];
  [k: string]: unknown;
}
interface StatefulSetSpec {
  replicas?: number;
  serviceName: string;
  template: {
    metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
    spec: { containers: Container[]; volumes?: unknown[]; [k: string]: unknown };
  };
  volumeClaimTemplates?: {
    metadata: {
      name: string;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
    spec: Record<string, unknown>;
  }[];
}

function sts(objects: KubeObject[], name: string): StatefulSetSpec {
  return find(objects, "StatefulSet", name).spec as StatefulSetSpec;
}
function embedding(objects: KubeObject[], name: string): Container {
  const c = sts(objects, name).template.spec.containers.find((x) => x.name === "embedding");
  if (c === undefined) throw new Error("no embedding container");
  return c;
}

const FULL = `
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: EmbeddingServer
metadata: {name: embed}
spec:
  model: sentence-transformers/all-MiniLM-L6-v2
  hfTokenSecretRef: {name: hf, key: token}
  image: ghcr.io/huggingface/text-embeddings-inference:cpu-1.8
  imagePullPolicy: Always
  port: 9090
  replicas: 2
  args: [--max-batch-tokens, "16384"]
  env:
    - {name: RUST_LOG, value: debug}
    - {name: HF_HOME, value: /data/hf}
  resources:
    requests: {cpu: "1", memory: 2Gi}
  modelCache:
    enabled: true
    storageClassName: fast-ssd
    size: 20Gi
    accessMode: ReadWriteMany
  podTemplateSpec:
    metadata:
      annotations: {sidecar.example.com/inject: "false"}
    spec:
      nodeSelector: {pool: gpu}
      containers:
        - name: embedding
          resources:
            limits: {memory: 4Gi}
  resourceOverrides:
    statefulSet:
      labels: {team: ml}
      annotations: {owner: ml}
      podTemplateMetadataOverrides:
        labels: {tier: inference}
    service:
      annotations: {prometheus.io/scrape: "true"}
    persistentVolumeClaim:
      labels: {backup: "no"}
      annotations: {snapshot: daily}
`;

const MINIMAL = `
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: EmbeddingServer
metadata: {name: small}
spec: {}
`;

describe("EmbeddingServer", async () => {
  const full = await render(FULL);
  const minimal = await render(MINIMAL);

  it("renders StatefulSet and Service <name> with container embedding", () => {
    expect(sts(full, "embed").serviceName).toBe("embed");
    const svc = find(full, "Service", "embed").spec as Record<string, unknown>;
    expect(svc.ports).toEqual([{ name: "http", port: 9090, targetPort: 9090, protocol: "TCP" }]);
    expect(embedding(full, "embed").ports).toEqual([
      { name: "http", containerPort: 9090, protocol: "TCP" },
    ]);
  });

  it("runs --model-id <model> --port <port> followed by spec.args", () => {
    expect(embedding(full, "embed").args).toEqual([
      "--model-id",
      "sentence-transformers/all-MiniLM-L6-v2",
      "--port",
      "9090",
      "--max-batch-tokens",
      "16384",
    ]);
  });

  it("sets MODEL_ID, RUST_LOG, HF_TOKEN from its Secret and spec.env (which wins by name)", () => {
    const env = embedding(full, "embed").env ?? [];
    expect(env).toEqual([
      { name: "MODEL_ID", value: "sentence-transformers/all-MiniLM-L6-v2" },
      { name: "RUST_LOG", value: "debug" },
      { name: "HF_TOKEN", valueFrom: { secretKeyRef: { name: "hf", key: "token" } } },
      { name: "HF_HOME", value: "/data/hf" },
    ]);
  });

  it("uses spec.image and imagePullPolicy, else the default image and IfNotPresent", () => {
    expect(embedding(full, "embed").image).toBe(
      "ghcr.io/huggingface/text-embeddings-inference:cpu-1.8",
    );
    expect(embedding(full, "embed").imagePullPolicy).toBe("Always");
    expect(embedding(minimal, "small").image).toBe(
      "ghcr.io/huggingface/text-embeddings-inference:cpu-1.8",
    );
    expect(embedding(minimal, "small").imagePullPolicy).toBe("IfNotPresent");
  });

  it("defaults the model and port", () => {
    expect(embedding(minimal, "small").args).toEqual([
      "--model-id",
      "BAAI/bge-small-en-v1.5",
      "--port",
      "8080",
    ]);
    expect(embedding(minimal, "small").env).toContainEqual({
      name: "MODEL_ID",
      value: "BAAI/bge-small-en-v1.5",
    });
  });

  it("writes replicas only when set", () => {
    expect(sts(full, "embed").replicas).toBe(2);
    expect("replicas" in sts(minimal, "small")).toBe(false);
  });

  it("caches the model on a volume claim template model-cache mounted at /data", () => {
    const claims = sts(full, "embed").volumeClaimTemplates ?? [];
    expect(claims).toHaveLength(1);
    expect(claims[0]?.metadata.name).toBe("model-cache");
    expect(claims[0]?.spec).toEqual({
      accessModes: ["ReadWriteMany"],
      storageClassName: "fast-ssd",
      resources: { requests: { storage: "20Gi" } },
    });
    expect(embedding(full, "embed").volumeMounts).toEqual([
      { name: "model-cache", mountPath: "/data" },
    ]);
  });

  it("defaults the cache claim to 10Gi ReadWriteOnce in the cluster's default class", async () => {
    const objects = await render(MINIMAL.replace("spec: {}", "spec: {modelCache: {}}"));
    const claim = sts(objects, "small").volumeClaimTemplates?.[0];
    expect(claim?.spec).toEqual({
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "10Gi" } },
    });
  });

  it("downloads into an emptyDir without a cache (modelCache absent or disabled)", async () => {
    const disabled = await render(
      MINIMAL.replace("spec: {}", "spec: {modelCache: {enabled: false}}"),
    );
    for (const objects of [minimal, disabled]) {
      const s = sts(objects, "small");
      expect(s.volumeClaimTemplates).toBeUndefined();
      expect(s.template.spec.volumes).toEqual([{ name: "model-cache", emptyDir: {} }]);
      expect(embedding(objects, "small").env).toContainEqual({ name: "HF_HOME", value: "/data" });
    }
  });

  it("merges spec.resources and podTemplateSpec into the embedding container", () => {
    expect(embedding(full, "embed").resources).toEqual({
      requests: { cpu: "1", memory: "2Gi" },
      limits: { memory: "4Gi" },
    });
    const template = sts(full, "embed").template;
    expect(template.spec.nodeSelector).toEqual({ pool: "gpu" });
    expect(template.metadata.annotations?.["sidecar.example.com/inject"]).toBe("false");
  });

  it("applies resourceOverrides to the StatefulSet, its pods, the Service and the claim", () => {
    const set = find(full, "StatefulSet", "embed");
    expect(set.metadata.labels?.team).toBe("ml");
    expect(set.metadata.annotations).toEqual({ owner: "ml" });
    expect(sts(full, "embed").template.metadata.labels.tier).toBe("inference");
    expect(find(full, "Service", "embed").metadata.annotations).toEqual({
      "prometheus.io/scrape": "true",
    });
    const claim = sts(full, "embed").volumeClaimTemplates?.[0];
    expect(claim?.metadata.labels?.backup).toBe("no");
    expect(claim?.metadata.annotations).toEqual({ snapshot: "daily" });
  });

  it("probes /health, allowing a long start-up for the model download", () => {
    const c = embedding(full, "embed");
    for (const probe of ["startupProbe", "livenessProbe", "readinessProbe"]) {
      expect((c[probe] as { httpGet: unknown }).httpGet).toEqual({ path: "/health", port: 9090 });
    }
    expect((c.startupProbe as { failureThreshold: number }).failureThreshold).toBeGreaterThan(60);
  });

  it("shortens a long name so the StatefulSet's pods can be labelled, and the optimizer URL follows", async () => {
    const long = `embeddings-${"x".repeat(50)}`;
    const text = [
      MINIMAL.replace("name: small", `name: ${long}`),
      "apiVersion: toolhive.stacklok.dev/v1alpha1",
      "kind: MCPGroup",
      "metadata: {name: g}",
      "---",
      "apiVersion: toolhive.stacklok.dev/v1alpha1",
      "kind: VirtualMCPServer",
      "metadata: {name: v}",
      "spec:",
      "  groupRef: g",
      "  incomingAuth: {type: anonymous}",
      `  embeddingServerRef: {name: ${long}}`,
    ].join("\n");
    const result = await loadTexts(
      [{ name: "long.yaml", text: text.replace("spec: {}", "spec: {}\n---") }],
      {
        namespace: "ml",
      },
    );
    expect(result.valid).toBe(true);
    const objects = synthesize(result.resources, undefined, {
      ...only,
      VirtualMCPServer: renderVirtualMCPServer,
    }).objects;
    const set = objects.find((o) => o.kind === "StatefulSet");
    const name = set?.metadata.name ?? "";
    expect(name.length).toBeLessThanOrEqual(52);
    expect(`${name}-0123456789`.length).toBeLessThanOrEqual(63);
    expect(objects.find((o) => o.kind === "Service" && o.metadata.name === name)).toBeDefined();
    const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "v-vmcp-config");
    expect((cm?.data as Record<string, string>)["config.yaml"]).toContain(
      `embeddingService: http://${name}.ml.svc.cluster.local:8080`,
    );
    expect(checkObjects(objects)).toEqual([]);
  });

  it("passes the Kubernetes checks", () => {
    expect(checkObjects([...full, ...minimal])).toEqual([]);
  });

  it("renders every EmbeddingServer of the examples and the reference resources", () => {
    const withReference = hasSharedData(
      REFERENCE_RESOURCES,
      "EmbeddingServers of the reference resources",
    );
    const dirs = [
      join(import.meta.dirname, "../../examples/resources"),
      ...(withReference ? [REFERENCE_RESOURCES] : []),
    ];
    const all: Resource[] = dirs.flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => f.endsWith(".yaml"))
        .flatMap((f) => resourcesOfText(readFileSync(join(dir, f), "utf8"), "default"))
        .filter((r) => r.kind === "EmbeddingServer"),
    );
    // Reference files reuse names in one namespace; keep one of each, as the ResourceSet does.
    const resources = [
      ...new Map(all.map((r) => [`${r.metadata.namespace}/${r.metadata.name}`, r])).values(),
    ];
    expect(resources.length).toBeGreaterThan(withReference ? 2 : 0);
    const objects = synthesize(resources, undefined, only).objects;
    expect(objects.filter((o) => o.kind === "StatefulSet")).toHaveLength(resources.length);
    expect(checkObjects(objects)).toEqual([]);
    expect(toYaml(synthesize([...resources].reverse(), undefined, only).objects)).toBe(
      toYaml(objects),
    );
  });
});

// Every pod synth renders (and the install bundle's controller) passes the "restricted" Pod Security Standard, as the API server's own
// PodSecurity admission enforces it: each pod template rendered from examples/ and from the
// reference operator's test inputs becomes a Pod, dry-run created in a namespace labelled
// pod-security.kubernetes.io/enforce=restricted. (Admission enforces on Pods; a Deployment whose
// template breaks the standard is accepted and its pods refused, so Pods are what is checked.)
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeApiError, type KubeClient } from "../../src/infra/kube/client.js";
import { installObjects } from "../../src/synth/install.js";
import { loadPaths } from "../../src/synth/load.js";
import type { KubeObject } from "../../src/synth/model.js";
import { DEFAULT_SYNTH_OPTIONS } from "../../src/synth/options.js";
import { synthesize } from "../../src/synth/render.js";
import { noCluster } from "../support/cluster/context.js";
import { ROOT, SHARED_DATA, client, until } from "./helpers.js";
import { hasSharedData } from "../support/shared-data.js";

const PEER_INPUTS = join(SHARED_DATA, "peer-tests", "synth", "inputs");
const havePeer = hasSharedData(PEER_INPUTS, "pod security of the reference inputs");

type PodTemplate = {
  metadata?: { labels?: Record<string, string> };
  spec: Record<string, unknown>;
};

async function renderedWorkloads(): Promise<KubeObject[]> {
  const inputs = [[join(ROOT, "examples")]];
  if (havePeer)
    for (const f of readdirSync(PEER_INPUTS)
      .filter((x) => x.endsWith(".yaml"))
      .sort())
      inputs.push([join(PEER_INPUTS, f)]);
  // The install bundle's controller too.
  const out: KubeObject[] = installObjects();
  for (const paths of inputs) {
    const loaded = await loadPaths(paths);
    if (!loaded.valid) continue;
    out.push(...synthesize(loaded.resources, DEFAULT_SYNTH_OPTIONS).objects);
  }
  return out;
}

function podOf(workload: KubeObject, namespace: string): KubeObject {
  const spec = (
    workload as unknown as {
      spec: { template: PodTemplate; volumeClaimTemplates?: { metadata: { name: string } }[] };
    }
  ).spec;
  const template = spec.template;
  // A StatefulSet's pods get a volume per claim template, as its controller adds them.
  const claims = (spec.volumeClaimTemplates ?? []).map((c) => ({
    name: c.metadata.name,
    persistentVolumeClaim: { claimName: `${c.metadata.name}-${workload.metadata.name}-0` },
  }));
  const volumes = [...((template.spec.volumes as unknown[] | undefined) ?? []), ...claims];
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `${workload.kind.toLowerCase()}-${workload.metadata.name}`
        .slice(0, 63)
        .replace(/-+$/, ""),
      namespace,
      labels: template.metadata?.labels ?? {},
    },
    spec: {
      ...template.spec,
      ...(volumes.length > 0 ? { volumes } : {}),
      serviceAccountName: undefined,
      automountServiceAccountToken: false,
    },
  };
}

async function dryRunPod(c: KubeClient, pod: KubeObject): Promise<string | undefined> {
  try {
    await c.request("POST", await c.path("v1", "Pod", pod.metadata.namespace), {
      query: { dryRun: "All", fieldManager: "mcpfleet" },
      body: pod,
    });
    return undefined;
  } catch (err) {
    return err instanceof KubeApiError || err instanceof Error ? err.message : String(err);
  }
}

describe.skipIf(noCluster())("pod security", () => {
  let c: KubeClient;
  const ns = `restricted-${randomBytes(3).toString("hex")}`;
  beforeAll(async () => {
    c = client();
    await c.create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: ns,
        labels: {
          "pod-security.kubernetes.io/enforce": "restricted",
          "pod-security.kubernetes.io/enforce-version": "latest",
        },
      },
    });
    // Pods run as the namespace's default account, which its controller creates.
    await until("the default ServiceAccount", () =>
      c.get({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "default", namespace: ns },
      }),
    );
  });
  afterAll(async () => {
    await c
      .delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } })
      .catch(() => false);
  });

  it("a pod without a security context is refused there (the check can fail)", async () => {
    const refused = await dryRunPod(c, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "plain", namespace: ns },
      spec: { containers: [{ name: "c", image: "busybox:1.37" }] },
    });
    expect(refused).toMatch(/violates PodSecurity "restricted/);
  });

  it("every rendered pod passes the restricted standard", async () => {
    const workloads = (await renderedWorkloads()).filter(
      (o) => o.kind === "Deployment" || o.kind === "StatefulSet",
    );
    expect(new Set(workloads.map((w) => w.kind))).toEqual(new Set(["Deployment", "StatefulSet"]));
    expect(workloads.length).toBeGreaterThan(15);
    const failures: string[] = [];
    for (const w of workloads) {
      const refused = await dryRunPod(c, podOf(w, ns));
      if (refused !== undefined)
        failures.push(`${w.kind} ${w.metadata.namespace}/${w.metadata.name}: ${refused}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);
});

// The one plan of a revision drives every consumer: the pipeline builds it once (objects as
// rendered, in apply order), the directory target writes its workloads, the cluster target's dry
// run sends exactly its objects (marked), and the image policy withholds exactly a refused
// server's workloads. The cluster target talks to a stand-in API server that serves discovery,
// finds nothing and echoes every apply.
import { readFileSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { objectName } from "../../src/controller/applier.js";
import { ClusterApplier } from "../../src/controller/cluster-applier.js";
import { APPLIED_BY, MANAGED_BY_LABEL, clusterPlan } from "../../src/controller/cluster-plan.js";
import { type ImageVerdict, withholdRefused } from "../../src/controller/image-policy.js";
import { KubeClient } from "../../src/controller/kube-client.js";
import { renderDirectory } from "../../src/controller/pipeline.js";
import { DirTarget } from "../../src/controller/render-target.js";
import {
  type RevisionPlan,
  STAGES,
  objectKey,
  planWorkloads,
} from "../../src/controller/revision-plan.js";
import type { KubeObject } from "../../src/synth/model.js";
import { EXAMPLES, tmp } from "./helpers.js";

const revision = { commit: "c".repeat(40), ref: "main" };
const CLUSTER_SCOPED = new Set([
  "Namespace",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
]);

let plan: RevisionPlan;

beforeAll(async () => {
  const rendered = await renderDirectory(EXAMPLES, EXAMPLES);
  if (!rendered.ok) throw new Error(rendered.errors.join("\n"));
  plan = rendered.plan;
});

/** An API server that serves discovery for `kinds`, has no objects, and echoes applies. */
async function standInServer(kinds: readonly KubeObject[]) {
  const discovery = new Map<string, { name: string; kind: string; namespaced: boolean }[]>();
  for (const o of kinds) {
    const path = o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
    const list = discovery.get(path) ?? [];
    if (list.some((r) => r.kind === o.kind)) continue;
    list.push({
      name: `${o.kind.toLowerCase()}s`,
      kind: o.kind,
      namespaced: !CLUSTER_SCOPED.has(o.kind),
    });
    discovery.set(path, list);
  }
  const applied: { dryRun: string | null; object: KubeObject }[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      const reply = (status: number, data: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(data));
      };
      const resources = discovery.get(url.pathname);
      if (req.method === "GET" && resources !== undefined) return reply(200, { resources });
      if (req.method === "PATCH") {
        const object = JSON.parse(body) as KubeObject;
        applied.push({ dryRun: url.searchParams.get("dryRun"), object });
        return reply(200, object);
      }
      reply(404, { message: "not found", reason: "NotFound" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "stand-in", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "nobody" }],
    contexts: [{ name: "stand-in", cluster: "stand-in", user: "nobody" }],
    currentContext: "stand-in",
  });
  return { client: new KubeClient(kc), applied, close: () => server.close() };
}

/** The cluster target's server-side dry run of `p`: its result and what it sent. */
async function clusterDryRun(p: RevisionPlan) {
  const support: KubeObject[] = [
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } },
    { apiVersion: "v1", kind: "Secret", metadata: { name: "x" } },
  ];
  const stand = await standInServer([...plan.objects.map((o) => o.object), ...support]);
  try {
    const applier = new ClusterApplier({
      client: stand.client,
      fieldManager: "mcpfleet",
      prune: true,
      forceRecreate: false,
      namespace: "mcpfleet-system",
      backoff: { maxAttempts: 1 },
    });
    const result = await applier.apply(p, revision, { dryRun: true });
    return { result, applied: stand.applied, writes: stand.client.writes };
  } finally {
    stand.client.close();
    stand.close();
  }
}

describe("the revision plan", () => {
  it("holds every object once, as rendered, in stage order, with its key set", () => {
    const stages = plan.objects.map((p) => STAGES.indexOf(p.stage));
    expect(stages).toEqual([...stages].sort((a, b) => a - b));
    for (const stage of STAGES)
      expect(
        plan.objects.some((p) => p.stage === stage),
        stage,
      ).toBe(true);
    expect(plan.keys).toEqual(new Set(plan.objects.map((p) => objectKey(p.object))));
    expect(plan.keys.size).toBe(plan.objects.length);
    for (const p of plan.objects) {
      expect(p.object.metadata.annotations?.[APPLIED_BY], p.key).toBeUndefined();
      // Every workload belongs to a resource of the plan.
      if (p.stage === "workloads") expect(plan.keys.has(p.owner ?? ""), p.key).toBe(true);
    }
    expect(plan.resources.length).toBe(
      plan.objects.filter((p) => /config|resources/.test(p.stage)).length,
    );
  });

  it("the directory target writes exactly its workloads, in apply order", async () => {
    const out = join(tmp("plan"), "out");
    const result = await new DirTarget(out).apply(plan, revision);
    const written: KubeObject[] = [];
    for (const file of (
      JSON.parse(readFileSync(join(out, ".mcpfleet-output.json"), "utf8")) as { files: string[] }
    ).files) {
      if (!file.endsWith(".yaml")) continue;
      for (const doc of parseAllDocuments(readFileSync(join(out, file), "utf8"))) {
        const o = doc.toJS() as KubeObject;
        // Each namespace's file opens with its Namespace, as synth writes it.
        if (o.kind !== "Namespace") written.push(o);
      }
    }
    const workloads = planWorkloads(plan);
    const byKey = new Map(workloads.map((o) => [objectKey(o), o]));
    expect(written.length).toBe(workloads.length);
    for (const o of written) expect(o, objectKey(o)).toEqual(byKey.get(objectKey(o)));
    expect(result.changes.map((c) => c.object)).toEqual(workloads.map(objectName));
  });

  it("the cluster target's dry run sends every object of the plan, marked, and reports each", async () => {
    const { result, applied, writes } = await clusterDryRun(plan);
    expect(applied.every((a) => a.dryRun === "All")).toBe(true);
    expect(writes).toBe(applied.length);
    expect(new Set(applied.map((a) => objectKey(a.object)))).toEqual(plan.keys);
    expect(new Set(result.changes.map((c) => c.object))).toEqual(
      new Set(plan.objects.map((p) => objectName(p.object))),
    );
    expect(result).toMatchObject({ applied: plan.objects.length, unchanged: 0, pruned: 0 });
    // What is sent is the plan's object with the marker (our CRDs come unmarked).
    const sent = new Map(applied.map((a) => [objectKey(a.object), a.object]));
    const marked = new Map(
      clusterPlan(plan, { fieldManager: "mcpfleet" }).objects.map((c) => [c.key, c.object]),
    );
    for (const p of plan.objects) {
      const s = sent.get(p.key);
      if (p.stage === "crds") {
        expect(s, p.key).toEqual(p.object);
        continue;
      }
      expect(s?.metadata.labels?.[MANAGED_BY_LABEL], p.key).toBe("mcpfleet");
      expect(s?.metadata.annotations?.[APPLIED_BY], p.key).toBe("mcpfleet");
      expect(s, p.key).toEqual(marked.get(p.key));
    }
  });

  it("the cluster plan selects stages per the target's options and marks what it keeps", () => {
    const tenant = clusterPlan(plan, { fieldManager: "m", crds: false, namespaces: false });
    expect(tenant.objects.some((p) => p.stage === "crds" || p.stage === "namespaces")).toBe(false);
    expect(tenant.objects.map((p) => p.key)).toEqual(
      plan.objects.filter((p) => p.stage !== "crds" && p.stage !== "namespaces").map((p) => p.key),
    );
    expect(tenant.keys).toEqual(new Set(tenant.objects.map((p) => p.key)));
    expect(tenant.objects.every((p) => p.object.metadata.annotations?.[APPLIED_BY] === "m")).toBe(
      true,
    );
    // The plan it was taken from is untouched.
    expect(
      plan.objects.some((p) => p.object.metadata.annotations?.[APPLIED_BY] !== undefined),
    ).toBe(false);
  });

  it("the image policy withholds exactly a refused server's workloads and keeps the rest", async () => {
    const servers = plan.objects.filter((p) => p.object.kind === "MCPServer").map((p) => p.key);
    const [refused, admitted] = servers;
    expect(refused).toBeDefined();
    expect(admitted).toBeDefined();
    const verdict = (allowed: boolean): ImageVerdict => ({
      allowed,
      image: "img",
      reason: allowed ? "ImageListed" : "ImageNotListed",
      message: "m",
    });
    const verdicts = new Map([
      [refused!, verdict(false)],
      [admitted!, verdict(true)],
    ]);
    const { admitted: kept, withheld } = withholdRefused(plan, verdicts);
    const owned = plan.objects.filter((p) => p.owner === refused);
    expect(owned.length).toBeGreaterThan(0);
    expect(withheld).toEqual(owned.map((p) => p.object));
    expect(kept.objects).toEqual(plan.objects.filter((p) => p.owner !== refused));
    expect(kept.keys).toEqual(new Set(kept.objects.map((p) => p.key)));
    // The refused resource itself stays (its status carries the verdict), as do its peers' workloads.
    expect(kept.keys.has(refused!)).toBe(true);
    expect(kept.objects.some((p) => p.owner === admitted)).toBe(true);
    expect(kept.resources).toBe(plan.resources);
    // Nothing refused: the plan as it was.
    expect(withholdRefused(plan, new Map([[admitted!, verdict(true)]])).admitted).toBe(plan);

    // The cluster target sends what the policy kept, and nothing withheld.
    const { applied } = await clusterDryRun(kept);
    expect(new Set(applied.map((a) => objectKey(a.object)))).toEqual(kept.keys);
  });
});

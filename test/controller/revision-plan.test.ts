// The one plan of a revision drives every consumer: the pipeline builds it once (objects as
// rendered, in apply order), the directory target writes its workloads, the cluster plan marks
// and selects its stages, and the image policy withholds exactly a refused server's workloads.
// What the cluster target does with it on the real API server: test/cluster/revision-plan.test.ts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { objectName } from "../../src/controller/applier.js";
import { APPLIED_BY, clusterPlan } from "../../src/controller/cluster-plan.js";
import { type ImageVerdict, withholdRefused } from "../../src/controller/image-policy.js";
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

let plan: RevisionPlan;

beforeAll(async () => {
  const rendered = await renderDirectory(EXAMPLES, EXAMPLES);
  if (!rendered.ok) throw new Error(rendered.errors.join("\n"));
  plan = rendered.plan;
});

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

  it("the image policy withholds exactly a refused server's workloads and keeps the rest", () => {
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
  });
});

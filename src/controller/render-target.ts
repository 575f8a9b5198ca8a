// `--target dir:PATH`: each good revision's plan's workloads are written to PATH in the layout
// `mcpfleet synth` writes (`<namespace>.yaml`, objects in apply order; no install bundle), with
// `revision.txt` naming the commit. It writes as synth does (output-dir.ts): each file atomically,
// removing only files it wrote there itself; an invalid revision writes nothing and the previous
// output stays.
import * as fs from "node:fs";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../synth/model.js";
import { namespaceFileObjects } from "../synth/output.js";
import {
  type OutputGuard,
  checkOutputDir,
  readOutputManifest,
  writeOutputDir,
} from "../synth/output-dir.js";
import { toYaml } from "../synth/yaml.js";
import type { Applier, ApplyResult, ObjectChange } from "./applier.js";
import type { Checkout, Revision } from "../infra/git/source.js";
import { type RenderOptions, renderFiles } from "./pipeline.js";
import { type RevisionPlan, objectName, planWorkloads } from "./revision-plan.js";

export const REVISION_FILE = "revision.txt";
/** File of objects without a namespace (synthesis puts every object in one; kept for safety). */
const CLUSTER_FILE = "_cluster.yaml";

/** The output files of a set of objects: one multi-document YAML file per namespace. */
export function manifestFiles(objects: readonly KubeObject[]): Map<string, string> {
  const groups = new Map<string, KubeObject[]>();
  for (const o of objects) {
    const ns = o.metadata.namespace;
    const file = ns !== undefined && ns !== "" ? `${ns}.yaml` : CLUSTER_FILE;
    const list = groups.get(file) ?? [];
    list.push(o);
    groups.set(file, list);
  }
  const files = new Map<string, string>();
  for (const file of [...groups.keys()].sort()) {
    const objects = groups.get(file) ?? [];
    // As synth writes it: each namespace's file starts with its Namespace.
    files.set(
      file,
      toYaml(file === CLUSTER_FILE ? objects : namespaceFileObjects(file.slice(0, -5), objects)),
    );
  }
  return files;
}

function key(o: KubeObject): string {
  return `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
}

/** The objects of the manifests this target wrote into `dir`, each as the YAML it was written as. */
function readObjects(dir: string): Map<string, { name: string; text: string }> {
  const out = new Map<string, { name: string; text: string }>();
  for (const file of readOutputManifest(dir) ?? []) {
    if (!file.endsWith(".yaml") || !fs.existsSync(join(dir, file))) continue;
    const text = fs.readFileSync(join(dir, file), "utf8");
    for (const doc of parseAllDocuments(text)) {
      if (!("toJS" in doc)) continue;
      const o = doc.toJS() as KubeObject | null;
      if (o === null || typeof o !== "object" || typeof o.kind !== "string") continue;
      if (typeof o.metadata?.name !== "string") continue;
      // The Namespace heading each file is written with its namespace's objects, not applied.
      if (o.kind === "Namespace" && o.apiVersion === "v1") continue;
      out.set(key(o), { name: objectName(o), text: toYaml([o]) });
    }
  }
  return out;
}

export class DirTarget implements Applier {
  readonly target: string;
  readonly outDir: string;

  private readonly guard: OutputGuard;

  /** `inputs`: what the controller reads (its cache); the output may not hold or be one of them. */
  constructor(outDir: string, { inputs = [] }: { inputs?: readonly string[] } = {}) {
    this.outDir = resolve(outDir);
    this.target = `dir:${outDir}`;
    this.guard = {
      flag: "--target dir:",
      inputs,
      generator: "mcpfleet controller",
      // Output of a controller from before the manifest: revision.txt and manifests only.
      legacy: { signature: REVISION_FILE, extraFiles: [REVISION_FILE] },
    };
    checkOutputDir(this.outDir, this.guard);
  }

  /** The revision currently in the output directory, if any. */
  currentRevision(): string | undefined {
    try {
      return fs.readFileSync(join(this.outDir, REVISION_FILE), "utf8").trim() || undefined;
    } catch {
      return undefined;
    }
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Applier contract is async
  async apply(
    plan: RevisionPlan,
    revision: Revision,
    options: { dryRun?: boolean } = {},
  ): Promise<ApplyResult> {
    // CRDs, Namespaces and the custom resources are the cluster's business; manifests hold what
    // was synthesized for them.
    const objects = planWorkloads(plan);
    const old = readObjects(this.outDir);
    const changes: ObjectChange[] = [];
    let applied = 0;
    let unchanged = 0;
    const seen = new Set<string>();
    for (const o of objects) {
      const k = key(o);
      seen.add(k);
      const before = old.get(k);
      const action =
        before === undefined ? "created" : before.text === toYaml([o]) ? "unchanged" : "configured";
      if (action === "unchanged") unchanged++;
      else applied++;
      changes.push({ object: objectName(o), action });
    }
    let pruned = 0;
    for (const [k, { name }] of old) {
      if (seen.has(k)) continue;
      pruned++;
      changes.push({ object: name, action: "pruned" });
    }
    const files = manifestFiles(objects);
    files.set(REVISION_FILE, `${revision.commit}\n`);
    if (options.dryRun === true || this.sameAsOnDisk(files)) {
      return { applied, unchanged, pruned, changes };
    }
    writeOutputDir(this.outDir, files, this.guard);
    return { applied, unchanged, pruned, changes };
  }

  /** True when `dir` already holds exactly these files (a no-op revision writes nothing). */
  private sameAsOnDisk(files: ReadonlyMap<string, string>): boolean {
    const written = readOutputManifest(this.outDir);
    if (written === undefined || written.length !== files.size) return false;
    for (const [file, text] of files) {
      const path = join(this.outDir, file);
      if (!fs.existsSync(path) || fs.readFileSync(path, "utf8") !== text) return false;
    }
    return true;
  }
}

export type RenderTargetOutcome =
  | { ok: true; result: ApplyResult; objects: number }
  | { ok: false; errors: string[]; warnings: string[] };

/** Validates and synthesizes a checked-out revision and, when valid, writes it to `target`. */
export async function renderToDir(
  checkout: Checkout,
  target: DirTarget,
  options: RenderOptions = {},
): Promise<RenderTargetOutcome> {
  const rendered = await renderFiles(checkout.files, options);
  if (!rendered.ok) return rendered;
  const result = await target.apply(rendered.plan, checkout);
  return { ok: true, result, objects: planWorkloads(rendered.plan).length };
}

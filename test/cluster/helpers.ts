// Shared by the tests against a real API server (test/support/cluster/): the kubeconfig the
// global setup provides, namespaces of their own, the project's CRDs installed once, kubectl,
// and `mcpfleet synth` run as the CLI.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll } from "vitest";
import { KubeApiError, KubeClient, type LiveObject } from "../../src/infra/kube/client.js";
import { crdObjects } from "../../src/synth/install.js";
import type { KubeObject } from "../../src/synth/model.js";
import { clusterKubeconfig, kubectlPath } from "../support/cluster/context.js";

export const ROOT = join(import.meta.dirname, "..", "..");
export const SHARED_DATA = join(ROOT, "..", "shared", "data");

/** The kubeconfig of the cluster under test (only called where the tests run). */
export function kubeconfig(): string {
  const k = clusterKubeconfig();
  if (k === undefined) throw new Error("no cluster for this run");
  return k;
}

const cleanups: (() => Promise<unknown> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function tmpDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `mcpfleet-cluster-${prefix}-`));
  dirs.push(d);
  return d;
}

/** A client of the cluster under test, closed after the file. */
export function client(config = kubeconfig()): KubeClient {
  const c = KubeClient.fromFile(config);
  cleanups.push(() => c.close());
  return c;
}

/** A namespace of its own (`<prefix>-<random>`), deleted when the file is done. */
export async function namespace(c: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  await c.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  cleanups.push(() =>
    c.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name } }).catch(() => false),
  );
  return name;
}

/** Creates a namespace that several tests share (the names synth inputs hard-code); keeps it. */
export async function ensureNamespace(c: KubeClient, name: string): Promise<void> {
  try {
    await c.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 409)) throw err;
  }
}

/** Polls `probe` until it returns a value (not undefined or false); fails after `ms`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function conditionTrue(o: LiveObject | undefined, type: string): boolean {
  const conds = (o?.status as { conditions?: { type: string; status: string }[] } | undefined)
    ?.conditions;
  return conds?.some((c) => c.type === type && c.status === "True") ?? false;
}

/** Applies the project's CRDs (crds/) as `manager` and waits until each is Established. */
export async function installCrds(c: KubeClient, manager = "mcpfleet-test"): Promise<KubeObject[]> {
  const crds = crdObjects();
  for (const crd of crds) await c.apply(crd, { fieldManager: manager });
  for (const crd of crds) {
    await until(`${crd.metadata.name} Established`, async () =>
      conditionTrue(await c.get(crd), "Established"),
    );
  }
  return crds;
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function kubectl(args: string[], input?: string): Run {
  const r = spawnSync(kubectlPath(), ["--kubeconfig", kubeconfig(), ...args], {
    encoding: "utf8",
    input,
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `mcpfleet synth` as its users run it. */
export function synthCli(args: string[]): Run {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "synth", ...args],
    { cwd: ROOT, encoding: "utf8", timeout: 120_000 },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every YAML file under `dir`, recursively, sorted. */
export function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...yamlFiles(p));
    else if (/\.ya?ml$/.test(e)) out.push(p);
  }
  return out;
}

/** The objects of a multi-document YAML file. */
export function objectsOf(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(file, "utf8"))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null && typeof o === "object" && "kind" in o);
}

// What `mcpfleet synth` writes, checked by a real API server: the install bundle applies with
// `kubectl apply --server-side` and with our own apply client (and again, as a no-op), and every
// object rendered from examples/ and from the reference operator's test inputs passes a
// server-side dry-run create with strict field validation, the API server's own validation of
// the core kinds (no field it does not know, every required one, every enum and format).
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { eachLimit } from "../../src/controller/cluster-applier.js";
import { KubeApiError, type KubeClient } from "../../src/infra/kube/client.js";
import type { KubeObject } from "../../src/synth/model.js";
import { noCluster } from "../support/cluster/context.js";
import {
  ROOT,
  SHARED_DATA,
  client,
  conditionTrue,
  ensureNamespace,
  installCrds,
  kubectl,
  namespace,
  objectsOf,
  synthCli,
  tmpDir,
  until,
  yamlFiles,
} from "./helpers.js";
import { hasSharedData } from "../support/shared-data.js";

const PEER_INPUTS = join(SHARED_DATA, "peer-tests", "synth", "inputs");
const havePeerInputs = hasSharedData(PEER_INPUTS, "synth dry-run of the reference inputs");

/**
 * `mcpfleet synth -o json` of `inputs`, asynchronously (several run at once); undefined when
 * synth refuses the input as invalid (exit 1: nothing is rendered).
 */
function synthJson(inputs: string[]): Promise<KubeObject[] | undefined> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(ROOT, "src/cli/main.ts"),
        "synth",
        "-o",
        "json",
        "--no-install",
        ...inputs,
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("exit", (code) => {
      if (code === 1) return resolve(undefined);
      if (code !== 0) return reject(new Error(`synth ${inputs.join(" ")} exited ${code}: ${err}`));
      resolve((JSON.parse(out) as { items: KubeObject[] }).items);
    });
  });
}

/** Dry-run create of each object; returns "Kind ns/name: message" for each refusal. */
async function dryRunCreate(c: KubeClient, objects: KubeObject[]): Promise<string[]> {
  const failures: string[] = [];
  for (const ns of new Set(
    objects.map((o) => o.metadata.namespace).filter((n) => n !== undefined),
  )) {
    await ensureNamespace(c, ns);
  }
  await eachLimit(objects, 8, async (o) => {
    try {
      const path = await c.path(o.apiVersion, o.kind, o.metadata.namespace);
      await c.request("POST", path, {
        query: { dryRun: "All", fieldValidation: "Strict", fieldManager: "mcpfleet" },
        body: o,
      });
    } catch (err) {
      const name = `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;
      // A dry-run create of something another test created for real is a conflict, not a defect.
      if (err instanceof KubeApiError && err.reason === "AlreadyExists") return;
      failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return failures;
}

describe.skipIf(noCluster())("synth output on the API server", () => {
  let c: KubeClient;
  beforeAll(async () => {
    c = client();
    await installCrds(c);
  });

  it("the install bundle applies with kubectl apply --server-side, then with our client", async () => {
    const out = tmpDir("synth");
    const synth = synthCli(["examples", "-d", out, "--install"]);
    expect(synth.status, synth.stderr).toBe(0);
    const install = join(out, "install");
    const files = yamlFiles(install);
    expect(files.length).toBeGreaterThan(0);
    const applied = kubectl([
      "apply",
      "--server-side",
      "--field-manager=kubectl-install",
      "-f",
      install,
      "-R",
    ]);
    expect(applied.stderr).toBe("");
    expect(applied.status).toBe(0);
    const objects = files.flatMap(objectsOf);
    for (const o of objects) {
      expect(applied.stdout).toMatch(new RegExp(`/${o.metadata.name} serverside-applied`));
    }
    // Our own client, as the controller applies: CRDs Established before anything else.
    for (const o of objects) {
      await c.apply(o, { fieldManager: "mcpfleet", force: false });
      if (o.kind === "CustomResourceDefinition") {
        await until(o.metadata.name, async () => conditionTrue(await c.get(o), "Established"));
      }
    }
    const deployment = objects.find((o) => o.kind === "Deployment");
    expect(deployment).toBeDefined();
    const live = await c.get(deployment!);
    const managers = (live?.metadata.managedFields as { manager: string }[]).map((m) => m.manager);
    expect(managers).toEqual(expect.arrayContaining(["kubectl-install", "mcpfleet"]));
    // Applying the same bundle again changes nothing: same resourceVersion everywhere.
    const before = await Promise.all(objects.map((o) => c.get(o)));
    const again = kubectl([
      "apply",
      "--server-side",
      "--field-manager=kubectl-install",
      "-f",
      install,
      "-R",
    ]);
    expect(again.status, again.stderr).toBe(0);
    const after = await Promise.all(objects.map((o) => c.get(o)));
    expect(after.map((o) => o?.metadata.resourceVersion)).toEqual(
      before.map((o) => o?.metadata.resourceVersion),
    );
  }, 120_000);

  it("every object rendered from examples/ passes a strict server-side dry-run create", async () => {
    const objects = (await synthJson(["examples"])) ?? [];
    expect(objects.length).toBeGreaterThan(50);
    expect(await dryRunCreate(c, objects)).toEqual([]);
  }, 120_000);

  it("what synth renders reads back as rendered: a second manager applies it without a conflict", async () => {
    // The API server fills defaults into what it stores. Where a default lands inside an atomic
    // field we set (fieldRef without apiVersion, a port without protocol...), the live value
    // differs from the manifest and anyone else applying the same manifest gets a conflict.
    const objects = (await synthJson(["examples/resources"])) ?? [];
    expect(objects.length).toBeGreaterThan(50);
    const ns = await namespace(c, "synth-ssa");
    const inNs = objects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ns } }));
    for (const manager of ["mcpfleet", "kubectl-user"]) {
      const conflicts: string[] = [];
      await eachLimit(inNs, 8, async (o) => {
        try {
          await c.apply(o, { fieldManager: manager, force: false });
        } catch (err) {
          const message = (err as Error).message;
          // Kubernetes writes status.phase into every StatefulSet volumeClaimTemplate, which no
          // manifest carries; the only conflict no manifest can avoid.
          if (o.kind === "StatefulSet" && /conflict.*\.spec\.volumeClaimTemplates$/.test(message))
            return;
          conflicts.push(`${o.kind} ${o.metadata.name}: ${message}`);
        }
      });
      expect(conflicts, manager).toEqual([]);
    }
  }, 120_000);

  const inputs = havePeerInputs
    ? readdirSync(PEER_INPUTS)
        .filter((f) => f.endsWith(".yaml"))
        .sort()
    : [];
  it.skipIf(!havePeerInputs)(
    "every object rendered from the reference operator's test inputs passes a strict dry-run create",
    async () => {
      expect(inputs.length).toBeGreaterThan(10);
      // One synth per input: the inputs reuse names across files.
      const rendered = new Map<string, KubeObject[]>();
      await eachLimit(inputs, 3, async (f) => {
        const objects = await synthJson([join(PEER_INPUTS, f)]);
        if (objects !== undefined) rendered.set(f, objects);
      });
      // Inputs `mcpfleet validate` refuses render nothing (docs/compat.md says why); most render.
      expect(rendered.size).toBeGreaterThan(inputs.length / 2);
      const failures: string[] = [];
      for (const [f, objects] of rendered) {
        expect(objects.length, f).toBeGreaterThan(0);
        failures.push(...(await dryRunCreate(c, objects)).map((m) => `${f}: ${m}`));
      }
      expect(failures).toEqual([]);
    },
    240_000,
  );
});

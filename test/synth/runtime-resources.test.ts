// The runtime programs read our custom resources from the API server through the reference
// operator's v1beta1 Go types (vmcp's status reporter reads its VirtualMCPServer; in discovered
// mode its backend watcher lists the group's workloads). The API server stores one form for
// every served version, so every resource of examples/ and of the reference operator's test
// inputs, in the form the controller applies it, must decode into those types
// (tools/runtime/resource-check, the programs' own types and JSON decoding).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resourceObject } from "../../src/controller/revision-plan.js";
import { loadPaths } from "../../src/synth/load.js";
import type { KubeObject } from "../../src/synth/model.js";
import { SHARED_DATA } from "../schema/helpers.js";
import { hasSharedData } from "../support/shared-data.js";
import { ROOT, programPath, runtimeMissing } from "./runtime-tools.js";

const missing = runtimeMissing();
if (missing !== undefined) console.warn(`runtime resource decode tests SKIPPED: ${missing}`);
const PEER_INPUTS = join(SHARED_DATA, "peer-tests", "synth", "inputs");
const havePeer = hasSharedData(PEER_INPUTS, "decoding the reference inputs as stored");

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-resources-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Decoded {
  kind: string;
  name: string;
  error: string;
}

function decode(objects: readonly KubeObject[]): Decoded[] {
  const file = join(dir, "objects.json");
  writeFileSync(file, JSON.stringify(objects));
  const run = spawnSync(programPath("resource-check"), [file], { encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Decoded[];
}

async function storedObjects(path: string): Promise<KubeObject[]> {
  const loaded = await loadPaths([path]);
  expect(loaded.valid, `${path} validates`).toBe(true);
  return loaded.resources.map(resourceObject);
}

describe.skipIf(missing !== undefined)("resources as stored, read by the runtime programs", () => {
  it("every resource of examples/ decodes into the v1beta1 types", async () => {
    const objects = await storedObjects(join(ROOT, "examples"));
    expect(objects.length).toBeGreaterThan(20);
    const failed = decode(objects).filter((d) => d.error !== "");
    expect(failed).toEqual([]);
  });

  it.skipIf(!havePeer)("every resource of the reference inputs decodes too", async () => {
    const files = readdirSync(PEER_INPUTS).filter((f) => f.endsWith(".yaml"));
    const objects: KubeObject[] = [];
    for (const f of files) {
      const loaded = await loadPaths([join(PEER_INPUTS, f)]);
      // Inputs the validator refuses are not applied, so not read either.
      if (loaded.valid) objects.push(...loaded.resources.map(resourceObject));
    }
    expect(objects.length).toBeGreaterThan(20);
    expect(decode(objects).filter((d) => d.error !== "")).toEqual([]);
  });

  it("the v1alpha1 spelling `groupRef: <name>`, stored as written, is what breaks them", () => {
    const written = {
      apiVersion: "toolhive.stacklok.dev/v1alpha1",
      kind: "VirtualMCPServer",
      metadata: { name: "tools", namespace: "default" },
      spec: { groupRef: "engineering", incomingAuth: { type: "anonymous" } },
    } as unknown as KubeObject;
    const [asWritten] = decode([written]);
    expect(asWritten!.error).toMatch(/groupRef/);
    const stored = resourceObject(written as never);
    expect((stored as unknown as { spec: { groupRef: unknown } }).spec.groupRef).toEqual({
      name: "engineering",
    });
    expect(decode([stored])[0]!.error).toBe("");
  });
});

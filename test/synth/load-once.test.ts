// synth, apply and diff render the bytes that were validated: each file is read once, by the
// validation, and the resources are taken from that same text (a second read could see a file
// changed in between and render something never validated).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type * as Sources from "../../src/validate/sources.js";

const reads = new Map<string, number>();
vi.mock("../../src/validate/sources.js", async (original) => {
  const real = await original<typeof Sources>();
  return {
    ...real,
    readFileCapped: (path: string, maxBytes: number) => {
      reads.set(path, (reads.get(path) ?? 0) + 1);
      return real.readFileCapped(path, maxBytes);
    },
  };
});

const { loadPaths } = await import("../../src/synth/load.js");

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-load-once-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const server = (name: string) => `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: ${name}
spec:
  image: ghcr.io/example/${name}:1.0.0
  transport: stdio
`;

describe("loadPaths", () => {
  it("reads each file once and loads the resources from the text it validated", async () => {
    for (const name of ["alpha", "beta", "gamma"]) {
      writeFileSync(join(dir, `${name}.yaml`), server(name));
    }
    const loaded = await loadPaths([dir]);
    expect(loaded.valid).toBe(true);
    expect(loaded.resources.map((r) => r.metadata.name).sort()).toEqual(["alpha", "beta", "gamma"]);
    expect([...reads.entries()].filter(([p]) => p.startsWith(dir)).map(([, n]) => n)).toEqual([
      1, 1, 1,
    ]);
  });
});

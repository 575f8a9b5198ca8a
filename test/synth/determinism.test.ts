// Same input, same bytes, whatever the order of the documents; long names are shortened
// deterministically and stay valid.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { projectRoot } from "../../src/project.js";
import { loadPaths } from "../../src/synth/load.js";
import type { Resource } from "../../src/synth/model.js";
import { renderFiles } from "../../src/synth/output.js";
import { find, proxy, render, res, server } from "./helpers.js";

function shuffled<V>(items: readonly V[], seed: number): V[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j] as V, out[i] as V];
  }
  return out;
}

describe("determinism", () => {
  it("gives the same bytes for every order of the examples", async () => {
    const { resources } = await loadPaths([join(projectRoot(), "examples")]);
    render(resources);
    const first = renderFiles(resources, undefined, { install: false });
    expect(first.files.size).toBeGreaterThan(0);
    for (const seed of [1, 7, 42, 1234]) {
      const again = renderFiles(shuffled(resources, seed), undefined, { install: false });
      expect([...again.files.entries()]).toEqual([...first.files.entries()]);
    }
  });

  it("writes one file per namespace, in name order", () => {
    const resources: Resource[] = [
      { ...server("b"), metadata: { name: "b", namespace: "zeta" } },
      { ...server("a"), metadata: { name: "a", namespace: "alpha" } },
      res("MCPToolConfig", "only-config", {}, "config-only"),
    ];
    render(resources);
    const { files } = renderFiles(resources, undefined, { install: false });
    expect([...files.keys()]).toEqual(["alpha.yaml", "zeta.yaml"]);
    expect(files.get("alpha.yaml")).toContain("namespace: alpha");
    expect(files.get("alpha.yaml")).not.toContain("namespace: zeta");
  });
});

describe("long names", () => {
  const long = `a${"-very-long-name".repeat(15)}`;
  const other = `${long}-2`;

  it("are shortened deterministically into valid names", () => {
    const objects = render([server(long), server(other)]);
    const services = objects.filter((o) => o.kind === "Service").map((o) => o.metadata.name);
    expect(services).toHaveLength(2);
    for (const name of services) expect(name.length).toBeLessThanOrEqual(63);
    expect(new Set(services).size).toBe(2);
    const again = render([server(other), server(long)]);
    expect(again.filter((o) => o.kind === "Service").map((o) => o.metadata.name)).toEqual(services);
  });

  it("with dots become valid DNS labels where a label is needed", () => {
    const objects = render([server("team.fetch"), proxy("gh.remote")]);
    expect(find(objects, "Service", "mcp-team-fetch-proxy")).toBeDefined();
    expect(find(objects, "Service", "mcp-gh-remote-remote-proxy")).toBeDefined();
    expect(find(objects, "ConfigMap", "team.fetch-runconfig")).toBeDefined();
  });

  it("keep names that fit unchanged", () => {
    const objects = render([server("short")]);
    expect(find(objects, "Service", "mcp-short-proxy")).toBeDefined();
  });
});

describe("collisions", () => {
  it("refuses to write two objects of the same kind, namespace and name", () => {
    // Validation reports this before synthesis; renderFiles refuses it on its own as well.
    const clash = res("MCPRemoteProxy", "same", { remoteURL: "https://x.example.com/mcp" });
    expect(() => renderFiles([server("same"), clash], undefined, { install: false })).toThrow(
      /render the same object v1\/ConfigMap team-a\/same-runconfig/,
    );
  });
});

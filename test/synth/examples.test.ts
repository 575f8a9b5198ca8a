// Every example renders, passes the Kubernetes checks, and matches its snapshot: the objects its
// resources create and their computed status, in test/synth/__snapshots__/<example>.yaml.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../src/project.js";
import type { RendererTable } from "../../src/synth/context.js";
import { RENDERERS } from "../../src/synth/constructs/index.js";
import { loadPaths, resourcesOfText } from "../../src/synth/load.js";
import { type Resource, ResourceSet } from "../../src/synth/model.js";
import { synthesize } from "../../src/synth/render.js";
import { toYaml } from "../../src/synth/yaml.js";
import { computeStatus } from "../../src/synth/status.js";
import { render } from "./helpers.js";

const dir = join(projectRoot(), "examples", "resources");
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".yaml"))
  .sort();
const loaded = await loadPaths([join(projectRoot(), "examples")]);
const all = loaded.resources;
const set = new ResourceSet(all);

/** Only `target` is rendered, with every other resource visible for references. */
function only(target: Resource): RendererTable {
  const table: Record<string, unknown> = {};
  for (const [kind, renderer] of Object.entries(RENDERERS)) {
    table[kind] = (...args: Parameters<NonNullable<RendererTable["MCPServer"]>>) => {
      const r = args[1];
      if (
        r.kind === target.kind &&
        r.metadata.namespace === target.metadata.namespace &&
        r.metadata.name === target.metadata.name
      ) {
        (renderer as (...a: unknown[]) => void)(...args);
      }
    };
  }
  return table;
}

describe("examples", () => {
  it("all validate and all render objects that pass the Kubernetes checks", () => {
    expect(loaded.valid).toBe(true);
    expect(all.length).toBeGreaterThanOrEqual(files.length);
    const objects = render(all);
    expect(objects.length).toBeGreaterThan(0);
  });

  it.each(files)("%s matches its snapshot", async (file) => {
    const text = readFileSync(join(dir, file), "utf8");
    const mine = resourcesOfText(text, "default");
    expect(mine.length).toBeGreaterThan(0);
    const parts: string[] = [];
    for (const r of mine) {
      const target = set.get(r.kind, r.metadata.namespace, r.metadata.name);
      if (target === undefined) throw new Error(`${r.kind}/${r.metadata.name} not loaded`);
      const { objects } = synthesize(all, undefined, only(target));
      parts.push(`# ${r.kind}/${r.metadata.namespace}/${r.metadata.name}: objects\n`);
      parts.push(objects.length > 0 ? toYaml(objects) : "# (none)\n");
      parts.push(`---\n# ${r.kind}/${r.metadata.namespace}/${r.metadata.name}: status\n`);
      parts.push(stringify(computeStatus(target, set), { lineWidth: 0 }));
    }
    await expect(parts.join("")).toMatchFileSnapshot(
      join("__snapshots__", `${basename(file, ".yaml")}.yaml`),
    );
  });
});

// The layering docs/architecture.md draws, kept by reading every import in src/: no cycle of any
// length (type-only imports included, which ESLint's import-x/no-cycle passes over), and no
// folder importing from a folder above it.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "..", "src");

/** Highest first: a folder may import only from folders after it in this list. */
const LAYERS = [
  "cli",
  "controller",
  "synth",
  "validate",
  "registry",
  "infra",
  "yaml",
  "schema",
  ".",
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith(".ts")
        ? [join(dir, e.name)]
        : [],
  );
}

/** The src/ files a file imports (static and type-only, relative specifiers only). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"/g)) {
    out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts")));
  }
  return out;
}

const files = sources(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const rel = (f: string): string => relative(SRC, f);

/** Layer of a file: its top folder under src/, or "." for a module directly in src/. */
function layerOf(file: string): string {
  const top = rel(file).split("/");
  return top.length === 1 ? "." : top[0]!;
}

describe("src/ layering", () => {
  it("reads the imports of every module", () => {
    expect(files.length).toBeGreaterThan(200);
    expect(graph.get(join(SRC, "cli", "main.ts"))?.length).toBeGreaterThan(0);
  });

  it("has no import cycle", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string): void => {
      state.set(f, "open");
      stack.push(f);
      for (const g of graph.get(f) ?? []) {
        if (!graph.has(g)) continue;
        if (state.get(g) === "open") {
          cycles.push(stack.slice(stack.indexOf(g)).concat(g).map(rel).join(" > "));
        } else if (state.get(g) === undefined) visit(g);
      }
      stack.pop();
      state.set(f, "done");
    };
    for (const f of files) if (state.get(f) === undefined) visit(f);
    expect(cycles).toEqual([]);
  });

  it("imports only downwards", () => {
    const upward: string[] = [];
    for (const [f, deps] of graph) {
      const from = LAYERS.indexOf(layerOf(f));
      for (const d of deps) {
        if (!graph.has(d)) continue;
        const to = LAYERS.indexOf(layerOf(d));
        if (to < from) upward.push(`${rel(f)} -> ${rel(d)}`);
      }
    }
    expect(upward).toEqual([]);
  });
});

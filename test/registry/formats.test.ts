import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ServerEntry } from "../../src/registry/formats/model.js";
import { nameProblem, versionProblem } from "../../src/registry/formats/names.js";
import { detectFormat, makeFilter, parseRegistryData } from "../../src/registry/formats/parse.js";

const DATA = join(import.meta.dirname, "../../../shared/data");
const read = (p: string): string => readFileSync(join(DATA, p), "utf8");

describe("formats", () => {
  const toolhive = parseRegistryData(read("toolhive-format/small-registry.json"));
  const upstream = parseRegistryData(read("upstream-format/small-registry-wrapper.json"));

  it("detects both formats", () => {
    expect(toolhive.format).toBe("toolhive");
    expect(upstream.format).toBe("upstream");
    expect(detectFormat({ foo: 1 })).toBeUndefined();
  });

  it("converts the 12-server pair to equal entries", () => {
    expect(toolhive.entries).toHaveLength(12);
    expect(upstream.entries).toHaveLength(12);
    expect(toolhive.problems).toEqual([]);
    const byName = (l: ServerEntry[]) => new Map(l.map((e) => [e.name, e]));
    const up = byName(upstream.entries);
    for (const t of toolhive.entries) {
      const u = up.get(t.name);
      expect(u, t.name).toBeDefined();
      const th = t;
      expect(th, t.name).toEqual(u);
    }
  });

  it("converts the full toolhive registry including remote servers", () => {
    const full = parseRegistryData(read("toolhive-format/registry.json"));
    expect(full.entries.length).toBe(79 + 23);
    const remote = full.entries.find((e) => e.name === "io.github.stacklok/atlassian-remote");
    expect(remote?.server.remotes).toEqual([
      { type: "sse", url: "https://mcp.atlassian.com/v1/sse" },
    ]);
    expect(remote?.tags).toContain("jira");
  });

  it("rejects data in no format, and reports invalid entries", () => {
    expect(() => parseRegistryData("{}")).toThrow(/no known format/);
    expect(() => parseRegistryData("not json")).toThrow(/not JSON/);
    const r = parseRegistryData(
      JSON.stringify({
        servers: [
          { name: "bad", version: "1" },
          { name: "a.b/c", version: "1.0.0" },
        ],
      }),
    );
    expect(r.entries.map((e) => e.name)).toEqual(["a.b/c"]);
    expect(r.problems[0]).toMatch(/servers\[0\]: name "bad" must be namespace\/name/);
  });

  it("checks names and versions", () => {
    expect(nameProblem("io.github.x/y")).toBeUndefined();
    expect(nameProblem("noslash")).toMatch(/namespace\/name/);
    expect(nameProblem("a/b/c")).toMatch(/namespace\/name/);
    expect(versionProblem("1.0.0")).toBeUndefined();
    expect(versionProblem("latest")).toMatch(/reserved/);
    expect(versionProblem("^1.0.0")).toMatch(/range/);
    expect(versionProblem("")).toMatch(/non-empty/);
  });

  it("filters by name globs and tags in order", () => {
    const names = (f: Parameters<typeof makeFilter>[0]) =>
      upstream.entries.filter(makeFilter(f)).map((e) => e.name.split("/")[1]);
    expect(names({ names: { include: ["io.github.*/git*"] } })).toEqual(["github", "gitlab"]);
    expect(names({ names: { include: ["*/git*"], exclude: ["*lab"] } })).toEqual(["github"]);
    expect(names({ names: { include: ["*/???"] } })).toEqual([]);
    expect(names({ names: { include: ["*/aws-ap?"] } })).toEqual(["aws-api"]);
    const db = names({ tags: { include: ["database"] } });
    expect(db).toContain("adb-mysql-mcp-server");
    expect(names({ tags: { include: ["database"], exclude: ["mysql"] } })).not.toContain(
      "adb-mysql-mcp-server",
    );
    expect(names(undefined)).toHaveLength(12);
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ServerEntry } from "../../src/registry/formats/model.js";
import { nameProblem, versionProblem } from "../../src/registry/formats/names.js";
import { detectFormat, makeFilter, parseRegistryData } from "../../src/registry/formats/parse.js";
import { describeWithSharedData, sharedPath } from "../support/shared-data.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const fixture = (p: string): string => readFileSync(join(FIXTURES, p), "utf8");

/** Each toolhive entry has an equal upstream entry of the same name. */
function expectSameEntries(toolhive: ServerEntry[], upstream: ServerEntry[]): void {
  const up = new Map(upstream.map((e) => [e.name, e]));
  for (const t of toolhive) {
    const u = up.get(t.name);
    expect(u, t.name).toBeDefined();
    expect(t, t.name).toEqual(u);
  }
}

describe("formats", () => {
  // Our own pair: the same 12 servers (10 containers, 2 remotes) in both formats.
  const toolhive = parseRegistryData(fixture("catalog-toolhive.json"));
  const upstream = parseRegistryData(fixture("catalog-upstream.json"));

  it("detects both formats", () => {
    expect(toolhive.format).toBe("toolhive");
    expect(upstream.format).toBe("upstream");
    expect(detectFormat({ foo: 1 })).toBeUndefined();
  });

  it("converts the 12-server pair to equal entries, remote servers included", () => {
    expect(toolhive.entries).toHaveLength(12);
    expect(upstream.entries).toHaveLength(12);
    expect(toolhive.problems).toEqual([]);
    expect(upstream.problems).toEqual([]);
    expectSameEntries(toolhive.entries, upstream.entries);
    const remote = toolhive.entries.find((e) => e.name === "io.github.stacklok/pager");
    expect(remote?.server.remotes).toEqual([
      {
        type: "streamable-http",
        url: "https://pager.example.com/mcp",
        headers: [
          { name: "X-Pager-Key", description: "API key", isRequired: true, isSecret: true },
        ],
      },
    ]);
    expect(remote?.tags).toEqual(["alerting", "on-call"]);
    const container = toolhive.entries.find((e) => e.name === "io.github.stacklok/calendar");
    expect(container?.server.packages).toEqual([
      {
        registryType: "oci",
        identifier: "ghcr.io/example-fleet/calendar:1.2.0",
        transport: { type: "streamable-http", url: "http://localhost:8081" },
      },
    ]);
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
    expect(names({ names: { include: ["io.github.*/git*"] } })).toEqual([
      "git-forge",
      "git-mirror",
    ]);
    expect(names({ names: { include: ["*/git*"], exclude: ["*forge"] } })).toEqual(["git-mirror"]);
    expect(names({ names: { include: ["*/???"] } })).toEqual([]);
    expect(names({ names: { include: ["*/kv-cach?"] } })).toEqual(["kv-cache"]);
    expect(names({ tags: { include: ["database"] } })).toEqual(["analytics-sql", "kv-cache"]);
    expect(names({ tags: { include: ["database"], exclude: ["sql"] } })).toEqual(["kv-cache"]);
    expect(names(undefined)).toHaveLength(12);
  });
});

// Compatibility with the formats as published: the official 12-server pair and the full
// toolhive catalog.
const FORMATS = sharedPath();
describeWithSharedData("formats: the published toolhive and upstream data", FORMATS, () => {
  const read = (p: string): string => readFileSync(join(FORMATS, p), "utf8");

  it("converts the published 12-server pair to equal entries", () => {
    const toolhive = parseRegistryData(read("toolhive-format/small-registry.json"));
    const upstream = parseRegistryData(read("upstream-format/small-registry-wrapper.json"));
    expect(toolhive.entries).toHaveLength(12);
    expect(upstream.entries).toHaveLength(12);
    expect(toolhive.problems).toEqual([]);
    expectSameEntries(toolhive.entries, upstream.entries);
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
});

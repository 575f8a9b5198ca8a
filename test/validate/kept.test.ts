// What the validate server keeps between runs (src/validate/kept-by-text.ts): copies in and out,
// found only for the same text under the same settings, the oldest let go past the limit; and
// verdicts adopted from it give the report a run without it gives, before and after an edit.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { plainCopy } from "../../src/json.js";
import { defaultSchemaSet } from "../../src/schema/index.js";
import { KeptByText, type FileVerdict, validatePaths } from "../../src/validate/index.js";
import { res, tempDir, writeTree, yamlDocs } from "./helpers.js";

describe("KeptByText", () => {
  it("gives a copy of what was kept for the same text and settings, else nothing", () => {
    const kept = new KeptByText<{ errors: string[] }>();
    const value = { errors: ["a"] };
    kept.keep("f.yaml", "text", "s", value);
    value.errors.push("changed after keeping");
    const found = kept.find("f.yaml", "text", "s");
    expect(found).toEqual({ errors: ["a"] });
    found!.errors.push("changed by a run");
    expect(kept.find("f.yaml", "text", "s")).toEqual({ errors: ["a"] });
    expect(kept.find("f.yaml", "text!", "s")).toBeUndefined();
    expect(kept.find("f.yaml", "text", "other settings")).toBeUndefined();
    expect(kept.find("g.yaml", "text", "s")).toBeUndefined();
  });

  it("lets the least recently used go first when the texts pass its limit", () => {
    const kept = new KeptByText<number>(10);
    kept.keep("a", "aaaa", "", 1);
    kept.keep("b", "bbbb", "", 2);
    expect(kept.find("a", "aaaa", "")).toBe(1); // a is now the most recent
    kept.keep("c", "cccc", "", 3);
    expect(kept.find("b", "bbbb", "")).toBeUndefined();
    expect([kept.find("a", "aaaa", ""), kept.find("c", "cccc", "")]).toEqual([1, 3]);
    kept.keep("d", "x".repeat(11), "", 4); // larger than the limit: not kept
    expect(kept.find("d", "x".repeat(11), "")).toBeUndefined();
    expect(kept.size).toBe(2);
  });
});

describe("plainCopy", () => {
  it("copies plain data deeply and refuses what would not come through as itself", () => {
    const value = { a: [1, { b: "text", c: null }], d: undefined, e: true };
    const copy = plainCopy(value);
    expect(copy).toEqual(value);
    expect(copy.a[1]).not.toBe(value.a[1]);
    expect(() => plainCopy({ m: new Map() })).toThrow(TypeError);
    expect(() => plainCopy([new Date()])).toThrow(/not plain data/);
  });
});

describe("verdicts kept between runs", () => {
  const dir = writeTree(tempDir("mcpfleet-kept-"), {
    "a-group.yaml": yamlDocs(res("MCPGroup", "tools")),
    "b-servers.yaml": yamlDocs(
      res("MCPServer", "one", { image: "ghcr.io/x/one:1", groupRef: "tools" }),
      res("MCPServer", "two", { image: "ghcr.io/x/two:1", groupRef: "missing", proxyPort: 0 }),
      res("MCPServer", "tools-dup", { image: "i", toolConfigRef: { name: "nope" } }),
    ),
    "c-dup.yaml": yamlDocs(res("MCPGroup", "tools"), { apiVersion: "v1", kind: "ConfigMap" }),
    "d-broken.yaml": "apiVersion: v1\nkind: [unclosed\n",
  });

  it("give the report of a run without them, reference positions included, after edits too", async () => {
    const verdicts = new KeptByText<FileVerdict>();
    const set = defaultSchemaSet();
    const alone = await validatePaths([dir]);
    expect(alone.resources.some((r) => r.errors.some((e) => e.level === "reference"))).toBe(true);
    expect(await validatePaths([dir], {}, set, verdicts)).toEqual(alone);
    expect(verdicts.size).toBe(4);
    expect(await validatePaths([dir], {}, set, verdicts)).toEqual(alone);
    // One file edited: the others' verdicts come from the first run, the references are new.
    writeFileSync(join(dir, "a-group.yaml"), yamlDocs(res("MCPGroup", "missing")));
    const edited = await validatePaths([dir]);
    expect(edited).not.toEqual(alone);
    expect(await validatePaths([dir], {}, set, verdicts)).toEqual(edited);
    // Other settings, other verdicts.
    const warned = await validatePaths([dir], { unknownFields: "warn", namespace: "x" });
    expect(
      await validatePaths([dir], { unknownFields: "warn", namespace: "x" }, set, verdicts),
    ).toEqual(warned);
    expect(await validatePaths([dir], {}, set, verdicts)).toEqual(edited);
  });
});

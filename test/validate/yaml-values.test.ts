// src/yaml/values.ts builds documents from js-yaml's events itself: whatever it builds must equal
// what js-yaml's own construction with the core schema builds, and whatever it cannot build
// exactly so it must decline.
import fc from "fast-check";
import { CORE_SCHEMA, constructFromEvents, parseEvents } from "js-yaml";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { plainScalarValue, plainValues } from "../../src/yaml/values.js";

function jsYaml(text: string): unknown[] {
  return constructFromEvents(parseEvents(text, {}), { source: text, schema: CORE_SCHEMA });
}

function built(text: string): ReturnType<typeof plainValues> {
  return plainValues(text, parseEvents(text, {}));
}

describe("plainScalarValue", () => {
  it.each([
    ["", null],
    ["~", null],
    ["null", null],
    ["Null", null],
    ["NULL", null],
    ["nULL", "nULL"],
    ["true", true],
    ["True", true],
    ["FALSE", false],
    ["yes", "yes"],
    ["on", "on"],
    ["0", 0],
    ["-12", -12],
    ["+7", 7],
    ["0o17", 15],
    ["0x1F", 31],
    ["017", 17],
    ["1.5", 1.5],
    ["-.5e3", -500],
    [".inf", Infinity],
    ["-.INF", -Infinity],
    ["1_000", "1_000"],
    ["1.2.3", "1.2.3"],
    ["8080/TCP", "8080/TCP"],
    ["ghcr.io/x:v1", "ghcr.io/x:v1"],
    ["nginx", "nginx"],
  ])("%j reads as %j, as js-yaml's core schema has it", (source, expected) => {
    expect(plainScalarValue(source)).toEqual(expected);
    expect(jsYaml(`${source === "" ? "~" : source}\n`)[0]).toEqual(source === "" ? null : expected);
  });

  it(".nan is NaN", () => {
    expect(plainScalarValue(".nan")).toBeNaN();
  });
});

describe("plainValues", () => {
  it("builds every document of a file, with its root event", () => {
    const text = "a: 1\nb: [x, {c: null}]\n---\n- 1\n- two\n---\n---\nplain\n";
    const out = built(text);
    expect(out?.values).toEqual(jsYaml(text));
    // DOCUMENT, then the root; 13 events for the first document, 5 for the second, 2 for the third.
    expect(out?.roots).toEqual([1, 15, 21, 24]);
    expect(out?.nullFields).toBe(true);
  });

  it("says whether some mapping maps a key to null", () => {
    expect(built("a: 1\nb: [~, null]\n")?.nullFields).toBe(false);
    expect(built("a:\n  b:\n")?.nullFields).toBe(true);
  });

  it("builds quoted, folded and literal scalars as js-yaml does", () => {
    const text =
      "a: 'it''s'\nb: \"tab\\there\"\nc: |\n  line 1\n  line 2\nd: >-\n  folded\n  text\ne: '1'\n";
    expect(built(text)?.values).toEqual(jsYaml(text));
  });

  it.each([
    ["an anchor and an alias", "a: &x 1\nb: *x\n"],
    ["a tag", "a: !!str 1\n"],
    ["a tagged mapping", "a: !custom {b: 1}\n"],
    ["a directive", "%YAML 1.2\n---\na: 1\n"],
    ["a duplicated key", "a: 1\na: 2\n"],
    ["a number as a key", "1: a\n"],
    ["null as a key", "~: a\n"],
    ["a boolean as a key", "true: a\n"],
    ["a mapping as a key", "? {a: 1}\n: b\n"],
    ["__proto__ as a key", "__proto__: {polluted: true}\n"],
  ])("declines a document with %s", (_, text) => {
    expect(built(text)).toBeUndefined();
  });

  it("builds what js-yaml builds for generated values with string keys", () => {
    const key = fc.string({ maxLength: 8 }).filter((k) => k !== "__proto__");
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof(
        { depthSize: "small" },
        fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null)),
        fc.array(tie("tree"), { maxLength: 4 }),
        fc.dictionary(key, tie("tree"), { maxKeys: 4 }),
      ),
    }));
    fc.assert(
      fc.property(fc.array(tree, { minLength: 1, maxLength: 3 }), (docs) => {
        const text = docs.map((d) => stringify(d)).join("---\n");
        let expected: unknown[];
        try {
          expected = jsYaml(text);
        } catch {
          return; // js-yaml refuses it: the file goes to the yaml package
        }
        // The yaml package quotes keys that would read as other scalars: all keys are strings.
        expect(built(text)?.values).toEqual(expected);
      }),
      { numRuns: 1500 },
    );
  });
});

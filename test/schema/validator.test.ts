// The validator itself: how the schema set compiles schemas and fills in defaults.
import { describe, expect, it } from "vitest";
import { SchemaSet } from "../../src/schema/validator.js";

const ID = "https://mcpfleet.dev/schemas/test.yaml";

function setOf(schema: Record<string, unknown>): SchemaSet {
  return new SchemaSet([{ id: ID, path: "test.yaml", schema }]);
}

describe("schema set", () => {
  it("refuses a schema with a keyword it does not know (strict mode)", () => {
    const set = setOf({ type: "object", properties: { a: { type: "string", bogus: 1 } } });
    expect(() => set.validateSchema(ID, { a: "x" })).toThrow(/unknown keyword: "bogus"/);
  });

  it("compiles a property schema with a default on its own", () => {
    const set = setOf({
      type: "object",
      $defs: { Port: { type: "integer", default: 8080, maximum: 65535 } },
    });
    expect(set.validateSchema(`${ID}#/$defs/Port`, 8080)).toEqual([]);
    expect(set.validateSchema(`${ID}#/$defs/Port`, 70000)[0]?.path).toBe("");
  });

  it("fills in defaults at every depth before the CEL rules of the objects above run", () => {
    const set = setOf({
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            mode: { type: "string", default: "auto" },
            inner: {
              type: "object",
              properties: { level: { type: "integer", default: 3 } },
            },
          },
          "x-kubernetes-validations": [
            { rule: "self.mode == 'auto' && self.inner.level == 3", message: "defaults not seen" },
          ],
        },
      },
    });
    expect(set.validateSchema(ID, { spec: { inner: {} } })).toEqual([]);
    expect(set.validateSchema(ID, { spec: { mode: "manual", inner: {} } })).toEqual([
      { path: "/spec", message: "defaults not seen", level: "cel" },
    ]);
  });

  it("checks list-map keys after the items' defaults are filled in", () => {
    const set = setOf({
      type: "object",
      properties: {
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["port", "protocol"],
          items: {
            type: "object",
            required: ["port"],
            properties: {
              port: { type: "integer" },
              protocol: { type: "string", default: "TCP" },
            },
          },
        },
      },
    });
    const issues = set.validateSchema(ID, { ports: [{ port: 80 }, { port: 80, protocol: "TCP" }] });
    expect(issues.map((i) => i.path)).toEqual(["/ports/1"]);
  });

  describe("list types", () => {
    const set = setOf({
      type: "object",
      properties: {
        env: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: { type: "object", properties: { name: {}, value: {} } },
        },
        tags: { type: "array", "x-kubernetes-list-type": "set", items: {} },
        args: { type: "array", "x-kubernetes-list-type": "atomic", items: {} },
      },
    });
    const cases: { name: string; doc: Record<string, unknown[]>; issues: string[] }[] = [
      { name: "distinct map keys", doc: { env: [{ name: "A" }, { name: "B" }] }, issues: [] },
      {
        name: "a map key met again, whatever the other fields",
        doc: { env: [{ name: "A", value: 1 }, { name: "B" }, { name: "A", value: 2 }] },
        issues: ['/env/2: duplicate entry: name "A" appears more than once'],
      },
      {
        name: "a string and a number that read alike are different keys",
        doc: { env: [{ name: "1" }, { name: 1 }] },
        issues: [],
      },
      {
        name: "two items without the key share it (null)",
        doc: { env: [{ value: 1 }, { value: 2 }] },
        issues: ["/env/1: duplicate entry: name null appears more than once"],
      },
      {
        name: "object keys compare by content",
        doc: { env: [{ name: { a: 1 } }, { name: { a: 1 } }, { name: { a: 2 } }] },
        issues: ['/env/1: duplicate entry: name {"a":1} appears more than once'],
      },
      {
        name: "a set with a value twice, each repeat reported",
        doc: { tags: ["x", "y", "x", "x"] },
        issues: [
          '/tags/2: duplicate entry: value "x" appears more than once',
          '/tags/3: duplicate entry: value "x" appears more than once',
        ],
      },
      {
        name: "a set of objects",
        doc: { tags: [{ a: [1] }, { a: [1] }, true, "true"] },
        issues: ['/tags/1: duplicate entry: value {"a":[1]} appears more than once'],
      },
      { name: "an atomic list may repeat", doc: { args: ["-v", "-v"] }, issues: [] },
    ];
    it.each(cases)("$name", ({ doc, issues }) => {
      expect(set.validateSchema(ID, doc).map((i) => `${i.path}: ${i.message}`)).toEqual(issues);
    });
  });

  describe("string lengths, in code points", () => {
    const set = setOf({
      type: "object",
      properties: {
        short: { type: "string", maxLength: 3 },
        long: { type: "string", minLength: 2 },
      },
    });
    const cases: { name: string; doc: Record<string, string>; issues: string[] }[] = [
      { name: "at the maximum", doc: { short: "abc" }, issues: [] },
      {
        name: "over the maximum",
        doc: { short: "abcd" },
        issues: ["/short: must NOT have more than 3 characters"],
      },
      // 4 UTF-16 units, 3 code points.
      { name: "at the maximum with a surrogate pair", doc: { short: "a😀b" }, issues: [] },
      {
        name: "over the maximum with a surrogate pair",
        doc: { short: "a😀bc" },
        issues: ["/short: must NOT have more than 3 characters"],
      },
      { name: "at the minimum", doc: { long: "ab" }, issues: [] },
      {
        name: "under the minimum",
        doc: { long: "a" },
        issues: ["/long: must NOT have fewer than 2 characters"],
      },
      {
        name: "empty",
        doc: { long: "" },
        issues: ["/long: must NOT have fewer than 2 characters"],
      },
      // 2 UTF-16 units, 1 code point.
      {
        name: "under the minimum as one surrogate pair",
        doc: { long: "😀" },
        issues: ["/long: must NOT have fewer than 2 characters"],
      },
      { name: "at the minimum with surrogate pairs", doc: { long: "😀😀" }, issues: [] },
    ];
    it.each(cases)("$name", ({ doc, issues }) => {
      expect(set.validateSchema(ID, doc).map((i) => `${i.path}: ${i.message}`)).toEqual(issues);
    });
  });

  it("leaves the caller's document unchanged", () => {
    const set = setOf({ type: "object", properties: { a: { type: "string", default: "x" } } });
    const doc = {};
    expect(set.validateSchema(ID, doc)).toEqual([]);
    expect(doc).toEqual({});
  });
});

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

  it("leaves the caller's document unchanged", () => {
    const set = setOf({ type: "object", properties: { a: { type: "string", default: "x" } } });
    const doc = {};
    expect(set.validateSchema(ID, doc)).toEqual([]);
    expect(doc).toEqual({});
  });
});

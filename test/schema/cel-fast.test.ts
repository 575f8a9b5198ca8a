// The shortcut for CEL rules that hold (src/schema/cel-fast.ts) against the CEL engine: whenever
// the shortcut says a rule holds, the engine must say so too, for every rule of our schemas on
// thousands of generated values (wrong types, missing fields, fractions, non-ASCII text), and
// the shortcut must decide the everyday cases itself.
import type { ASTNode } from "@marcbachmann/cel-js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileRule, evaluateRule, evaluateWithEngine, fastRuleOf } from "../../src/schema/cel.js";
import { UNSURE } from "../../src/schema/cel-fast.js";
import { loadSchemaFiles } from "../../src/schema/load.js";

/** Every `x-kubernetes-validations` rule in schemas/. */
function schemaRules(): string[] {
  const rules = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (node === null || typeof node !== "object") return;
    const record = node as Record<string, unknown>;
    const validations = record["x-kubernetes-validations"];
    if (Array.isArray(validations)) {
      for (const v of validations) rules.add((v as { rule: string }).rule);
    }
    for (const value of Object.values(record)) visit(value);
  };
  for (const file of loadSchemaFiles()) visit(file.schema);
  return [...rules].sort();
}

/** Field names and literals a rule mentions: what generated values are made of. */
function vocabulary(ast: ASTNode): { fields: string[]; strings: string[] } {
  const fields = new Set<string>(["name"]);
  const strings = new Set<string>();
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) {
      for (const x of n) visit(x);
      return;
    }
    if (n === null || typeof n !== "object" || !("op" in n)) return;
    const node = n as { op: string; args: unknown };
    if (node.op === "." && Array.isArray(node.args) && typeof node.args[1] === "string") {
      fields.add(node.args[1]);
    }
    if (node.op === "value" && typeof node.args === "string") strings.add(node.args);
    visit(node.args);
  };
  visit(ast);
  return { fields: [...fields], strings: [...strings] };
}

const LEAVES = [
  "",
  "x",
  "é😀",
  "0s",
  "30s",
  "1h30m",
  "5m",
  "1.5h",
  "10d",
  "http://localhost:8080/x",
  "http://example.com",
  "https://example.com",
  "Authorization",
  "authorization",
  0,
  1,
  2,
  -1,
  1.5,
  2 ** 53,
  1e300,
  true,
  false,
  null,
];

function valueArbitrary(fields: string[], strings: string[]): fc.Arbitrary<unknown> {
  const leaf = fc.constantFrom<unknown>(...LEAVES, ...strings);
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.array(tie("value"), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom(...fields, ...strings), tie("value"), { maxKeys: 5 }),
    ),
  }));
  return fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: 6 });
}

describe("CEL shortcut", () => {
  const rules = schemaRules();

  it("compiles every rule of the schemas", () => {
    expect(rules.length).toBeGreaterThan(100);
    for (const rule of rules) expect(fastRuleOf(rule), rule).toBeDefined();
  });

  it("says a rule holds only when the engine says so, on generated values for every rule", () => {
    let decided = 0;
    let holding = 0;
    for (const rule of rules) {
      const fast = fastRuleOf(rule)!;
      const { fields, strings } = vocabulary(compileRule(rule).ast);
      fc.assert(
        fc.property(valueArbitrary(fields, strings), (self) => {
          const engine = evaluateWithEngine(rule, self);
          if (engine.ok) holding++;
          if (fast(self) === true) {
            decided++;
            expect(engine, `${rule} on ${JSON.stringify(self)}`).toEqual({ ok: true });
          }
          // Whoever decides, the outcome reported is the engine's.
          expect(evaluateRule(rule, self)).toEqual(engine);
        }),
        { numRuns: 250, seed: 20261122 },
      );
    }
    // Most holding cases are decided without the engine.
    expect(decided).toBeGreaterThan(holding * 0.6);
  });

  const cases: [rule: string, self: unknown, decided: boolean][] = [
    ["has(self.a)", { a: 1 }, true],
    ["has(self.a)", { b: 1 }, false],
    ["!has(self.a) || self.a > 1", { a: 2 }, true],
    ["!has(self.a) || self.a > 1", { a: 1.5 }, false],
    ["self.a == 'x'", {}, false],
    ["self.a == 1", { a: "1" }, false],
    ["size(self.s) == 2", { s: "é😀" }, true],
    ["self.s.size() == 2", { s: "é😀" }, true],
    ["size(self.l) == 2 && size(self.m) == 1", { l: [1, 2], m: { k: 1 } }, true],
    ["duration(self.d) > duration('0s')", { d: "1h30m" }, true],
    ["duration(self.d) > duration('0s')", { d: "1.5h" }, false],
    ...(
      [
        ["1h30m", "90m", true],
        ["5400s", "90m", true],
        ["1h1m1s1ms1us1ns", "3661001001001ns", true],
        ["2µs", "2000ns", true],
        ["2us", "2µs", true],
        ["1ms", "1000us", true],
        ["1m", "1ms", false],
        ["10m5s", "605s", true],
        ["", "0s", false],
        ["30", "30s", false],
        ["s", "1s", false],
        ["1x", "1s", false],
        ["1s ", "1s", false],
        ["-1s", "-1s", false],
        ["99999999999999999999h", "1s", false],
      ] as const
    ).map(([d, same, decided]): [string, unknown, boolean] => [
      `duration(self.d) >= duration('${same}') && duration(self.d) <= duration('${same}')`,
      { d },
      decided,
    ]),
    ["self.l.all(x, x > 0)", { l: [1, 2] }, true],
    ["self.l.exists(x, x == 2)", { l: [1, 2] }, true],
    ["self.l.exists_one(x, x > 0)", { l: [1, -1] }, true],
    ["self.l.filter(x, x > 0).size() == 1", { l: [1, -1] }, true],
    ["self.m.all(k, k != 'z')", { m: { a: 1, b: 2 } }, true],
    ["'a' in self.l && 'k' in self.m", { l: ["a"], m: { k: 1 } }, true],
    ["'a' in self.l", { l: [1, "a"] }, false],
    ["self.s.lowerAscii() == 'ab'", { s: "AB" }, true],
    [
      "self.s.startsWith('ht') && self.s.endsWith('s') && self.s.contains('tp')",
      { s: "https" },
      true,
    ],
    ["(has(self.a) ? 1 : 0) + (has(self.b) ? 1 : 0) <= 1", { a: 1 }, true],
    ["self.a || self.b", { a: true }, true],
    ["self.a && self.b", { a: false, b: true }, false],
    [
      "self.l.all(x, self.l.exists(y, y == x) && self.l.all(x, self.l.exists(z, z == x)))",
      { l: [1, 2] },
      true,
    ],
    ["self.l.exists(x, x > 5) || self.l.all(y, y < 5)", { l: [1, 2] }, true],
    ["self.s.matches('^a')", { s: "abc" }, false],
    ["!has(self.s) || self.s.matches('^a')", {}, true],
  ];

  it.each(cases)("%s on %j: decided by the shortcut: %s", (rule, self, decided) => {
    const fast = fastRuleOf(rule);
    expect(fast).toBeDefined();
    expect(fast!(self)).toBe(decided ? true : UNSURE);
    expect(evaluateRule(rule, self)).toEqual(evaluateWithEngine(rule, self));
    if (decided) expect(evaluateWithEngine(rule, self)).toEqual({ ok: true });
  });

  it("leaves rules with constructs it does not model to the engine", () => {
    for (const rule of [
      "self.a[0] == 1",
      "self.?a.orValue(1) == 1",
      "self.x == 1.5",
      "-self.n < 0",
    ]) {
      expect(fastRuleOf(rule), rule).toBeUndefined();
    }
  });
});

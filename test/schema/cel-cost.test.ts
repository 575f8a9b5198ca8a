// The cost of CEL rules over long lists: the uniqueness idiom our schemas use in place of
// uniqueItems is decided in one pass, every other comprehension is bounded by a step budget,
// and the engine does not run a rule whose estimated cost exceeds the budget. Work is counted
// in comprehension steps, never timed.
import { describe, expect, it } from "vitest";
import { CEL_COST_BUDGET, evaluateRule, fastRuleOf } from "../../src/schema/cel.js";
import { FAST_STEP_BUDGET, lastSteps, UNSURE } from "../../src/schema/cel-fast.js";
import { defaultSchemaSet, REGISTRY_CONFIG_SCHEMA_ID } from "../../src/schema/index.js";

const UNIQUE_NAMES =
  "!has(self.sources) || self.sources.all(s, self.sources.exists_one(t, t.name == s.name))";
const UNIQUE_ITEMS =
  "!has(self.sources) || self.sources.all(n, self.sources.exists_one(m, m == n))";

const named = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `s${i}` }));

describe("CEL cost", () => {
  it("decides the uniqueness idiom in one pass over the list", () => {
    for (const [rule, items] of [
      [UNIQUE_NAMES, named(16_000)],
      [UNIQUE_ITEMS, named(16_000).map((s) => s.name)],
    ] as const) {
      const fast = fastRuleOf(rule);
      expect(fast?.({ sources: items })).toBe(true);
      expect(lastSteps()).toBeLessThanOrEqual(items.length);
    }
  });

  it("leaves a repeated key, a missing key or mixed types to the engine", () => {
    const fast = fastRuleOf(UNIQUE_NAMES);
    expect(fast?.({ sources: [{ name: "a" }, { name: "a" }] })).toBe(UNSURE);
    expect(evaluateRule(UNIQUE_NAMES, { sources: [{ name: "a" }, { name: "a" }] }).ok).toBe(false);
    expect(fast?.({ sources: [{ name: "a" }, {}] })).toBe(UNSURE);
    expect(fast?.({ sources: [{ name: "1" }, { name: 1 }] })).toBe(UNSURE);
    // Different field names on the two sides are not the idiom: evaluated as written.
    const other = "self.sources.all(s, self.sources.exists_one(t, t.name == s.id))";
    expect(evaluateRule(other, { sources: [{ name: "a", id: "a" }] }).ok).toBe(true);
  });

  it("stops a nested comprehension at the step budget", () => {
    const rule = "self.sources.all(s, self.sources.exists(t, t.name == s.name))";
    const n = Math.ceil(Math.sqrt(FAST_STEP_BUDGET)) * 2;
    expect(fastRuleOf(rule)?.({ sources: named(n) })).toBe(UNSURE);
    expect(lastSteps()).toBeLessThanOrEqual(FAST_STEP_BUDGET + n);
  });

  it("does not run the engine on a rule over its cost budget", () => {
    // A repeated name at the end: as written, the engine would compare every pair.
    const sources = [...named(3_000), { name: "s2999" }];
    const outcome = evaluateRule(UNIQUE_NAMES, { sources });
    expect(outcome).toMatchObject({ ok: false, overBudget: true });
    expect(3_001 ** 2).toBeGreaterThan(CEL_COST_BUDGET);
    // Short lists are still evaluated and answered with the rule's own verdict.
    expect(evaluateRule(UNIQUE_NAMES, { sources: [...named(50), { name: "s1" }] })).toEqual({
      ok: false,
    });
  });

  it("reports a rule over budget by what happened, not by the rule's message", () => {
    const sources = [...named(3_000), { name: "s0" }].map((s) => ({ ...s, managed: {} }));
    const issues = defaultSchemaSet().validateSchema(REGISTRY_CONFIG_SCHEMA_ID, {
      sources,
      registries: [{ name: "r", sources: ["s0"] }],
      auth: { mode: "anonymous" },
    });
    expect(issues.map((i) => i.message).join("\n")).toMatch(
      /not evaluated: the rule's estimated cost/,
    );
  });
});

describe("rules of a node over its size limits", () => {
  it("are not run: the schema's own limit is the one reported", () => {
    // A registry naming 9,000 sources (the schema allows 100): maxItems fails, and the rule
    // that each source be named once is not evaluated pair by pair.
    const sources = Array.from({ length: 9_000 }, () => "same");
    const issues = defaultSchemaSet().validateSchema(
      `${REGISTRY_CONFIG_SCHEMA_ID}#/$defs/Registry`,
      {
        name: "r",
        sources,
      },
    );
    const messages = issues.map((i) => i.message);
    expect(messages.join("\n")).toMatch(/100/);
    expect(messages.join("\n")).not.toMatch(/names each source once|not evaluated/);
    // Within the limits, the rule runs and reports the repeat.
    const few = defaultSchemaSet().validateSchema(`${REGISTRY_CONFIG_SCHEMA_ID}#/$defs/Registry`, {
      name: "r",
      sources: ["same", "same"],
    });
    expect(few.map((i) => i.message)).toContain("a registry names each source once");
  });
});

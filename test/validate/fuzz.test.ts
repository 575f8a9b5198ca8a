// Thousands of mutated documents: every outcome is a reported result (no exception, no hang),
// and every result is internally consistent.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { type Report, exitCode, formatReport, validateTexts } from "../../src/validate/index.js";
import { ROOT } from "./helpers.js";
import { applyText, applyValue, textMutation } from "./mutations.js";

const EXAMPLES = join(ROOT, "examples/resources");
const seeds: string[] = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith(".yaml"))
  .sort()
  .map((f) => readFileSync(join(EXAMPLES, f), "utf8"));

const LEVELS = new Set(["schema", "cel", "reference", "runtime", "parse", "io"]);

function expectConsistent(report: Report): void {
  let errors = 0;
  let warnings = 0;
  for (const r of report.resources) {
    expect(typeof r.kind).toBe("string");
    expect(typeof r.name).toBe("string");
    expect(r.valid).toBe(r.errors.length === 0);
    if (r.skipped) expect(r.errors).toEqual([]);
    for (const i of [...r.errors, ...r.warnings]) {
      expect(LEVELS.has(i.level)).toBe(true);
      expect(i.message.length).toBeGreaterThan(0);
      expect(Number.isInteger(i.line) && i.line >= 1).toBe(true);
      expect(Number.isInteger(i.column) && i.column >= 1).toBe(true);
      expect(i.path === "" || i.path.startsWith("/")).toBe(true);
    }
    errors += r.errors.length;
    warnings += r.warnings.length;
  }
  const s = report.summary;
  expect(s.resources).toBe(report.resources.length);
  expect(s.valid + s.invalid + s.skipped).toBe(s.resources);
  expect([s.errors, s.warnings]).toEqual([errors, warnings]);
  expect([0, 1]).toContain(exitCode(report));
  // Every format renders every outcome.
  for (const f of ["text", "json", "junit", "tap"] as const) {
    expect(typeof formatReport(report, f, { summary: true, color: false })).toBe("string");
  }
}

describe("fuzz", () => {
  it("text mutations of the examples: every outcome is a reported result", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: seeds.length - 1 }),
        fc.array(textMutation, { minLength: 1, maxLength: 4 }),
        async (seedIndex, mutations) => {
          const text = mutations.reduce(applyText, seeds[seedIndex] ?? "");
          const report = await validateTexts([{ name: "m.yaml", text }]);
          expectConsistent(report);
        },
      ),
      { numRuns: 2000 },
    );
  }, 60_000);

  it("value mutations of the examples: every outcome is a reported result", async () => {
    const docs = seeds.map((s) => parse(s) as unknown);
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: docs.length - 1 }),
        fc.array(fc.nat({ max: 50 }), { maxLength: 6 }),
        fc.jsonValue({ maxDepth: 3 }),
        fc.boolean(),
        async (i, path, value, strict) => {
          const mutated = applyValue(docs[i], path, value);
          const text = stringify(mutated);
          const report = await validateTexts([{ name: "v.yaml", text }], { strict });
          expectConsistent(report);
          expect(report.resources.length).toBeGreaterThanOrEqual(mutated === null ? 0 : 1);
        },
      ),
      { numRuns: 1500 },
    );
  }, 60_000);

  it("sets of mutated resources: the reference level copes with anything", async () => {
    const docs = seeds.map((s) => parse(s) as unknown);
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            i: fc.nat({ max: docs.length - 1 }),
            path: fc.array(fc.nat({ max: 20 }), { maxLength: 4 }),
            value: fc.oneof(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (items) => {
          const text = items
            .map(({ i, path, value }) => stringify(applyValue(docs[i], path, value)))
            .join("---\n");
          expectConsistent(await validateTexts([{ name: "set.yaml", text }]));
        },
      ),
      { numRuns: 400 },
    );
  }, 60_000);
});

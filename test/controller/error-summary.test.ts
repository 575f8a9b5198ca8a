// A failure's lines as one bounded text: quoted lines first, then the rest counted by level.
import { describe, expect, it } from "vitest";
import {
  EVENT_SUMMARY,
  STATUS_SUMMARY,
  clipBytes,
  levelOf,
  summarizeLines,
} from "../../src/controller/error-summary.js";

const line = (i: number, level: string) =>
  `fleet/f${i}.yaml:3:5: MCPServer default/s${i}: spec.transport: must be one of stdio, sse (${level})`;

describe("summarizeLines", () => {
  it("quotes the first lines and counts the rest by level, most first", () => {
    const lines = [
      ...Array.from({ length: 9_000 }, (_, i) => line(i, "schema")),
      ...Array.from({ length: 1_000 }, (_, i) => line(i, "reference")),
    ];
    const text = summarizeLines(lines, STATUS_SUMMARY);
    expect(text.startsWith(`${lines[0]}; ${lines[1]}; `)).toBe(true);
    expect(text.split("; ")).toHaveLength(21);
    expect(text).toMatch(/; and 9,980 more: 8,980 schema, 1,000 reference$/);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(STATUS_SUMMARY.maxBytes);
  });

  it("quotes fewer lines to fit, keeping the counts, and clips each line", () => {
    const huge = Array.from({ length: 50 }, (_, i) => `${"x".repeat(5_000)} ${i} (cel)`);
    const text = summarizeLines(huge, EVENT_SUMMARY);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(EVENT_SUMMARY.maxBytes);
    expect(text).toMatch(/^x{199}…; x{199}…; x{199}…; and 47 more: 47 cel$/);
  });

  it("gives lines without a level as a plain count, and one line as it is", () => {
    const lines = Array.from({ length: 5 }, (_, i) => `apps/Deployment ns/d${i}: RolloutTimeout`);
    expect(summarizeLines(lines, { ...EVENT_SUMMARY, shown: 2 })).toBe(
      `${lines[0]}; ${lines[1]}; and 3 more`,
    );
    expect(summarizeLines([lines[0]!], EVENT_SUMMARY)).toBe(lines[0]);
  });

  it("reads the level a validation or synthesis line ends with", () => {
    expect(levelOf(line(1, "schema"))).toBe("schema");
    expect(levelOf("a: b (reference, warning)")).toBe("reference");
    expect(levelOf("no level here")).toBeUndefined();
  });

  it("cuts by UTF-8 bytes, never inside a character", () => {
    const text = clipBytes("é".repeat(1_000), 101);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(101);
    expect(text).toBe(`${"é".repeat(49)}…`);
  });
});

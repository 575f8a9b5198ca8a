// The unified diff `mcpfleet diff` prints (the command itself runs against the API server in
// test/cluster/cli-apply-diff.test.ts).
import { describe, expect, it } from "vitest";
import { unifiedDiff } from "../../src/controller/diff.js";

describe("unified diff", () => {
  it("writes unified hunks with context", () => {
    const a = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
    const b = "a\nb\nc\nd\nE\nf\ng\nh\ni\n";
    expect(unifiedDiff(a, b, "x")).toBe(
      "--- live/x\n+++ merged/x\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n",
    );
  });
});

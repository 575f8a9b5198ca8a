import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/apply.js";
import { runDiff } from "../../src/cli/diff.js";
import { unifiedDiff } from "../../src/controller/diff.js";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { EXAMPLES, copyExamples, tmp } from "./helpers.js";

let api: KubeApi;
beforeEach(async () => {
  api = await startKubeApi();
});
afterEach(async () => {
  await api.stop();
});

async function diff(args: string[]) {
  let out = "";
  const err: string[] = [];
  const code = await runDiff([...args, "--kubeconfig", api.kubeconfigPath], {
    out: (l) => (out += l),
    err: (l) => err.push(l),
  });
  return { code, out, err };
}

const quiet = { out: () => {}, err: () => {} };

describe("mcpfleet diff", () => {
  it("shows new objects, then nothing after apply, then the changed field only; --prune lists deletions", async () => {
    const dir = join(tmp("diff"), "fleet");
    copyExamples(dir);
    const fresh = await diff([dir]);
    expect(fresh.code).toBe(1);
    expect(fresh.out).toContain("+++ merged/Deployment/default/fetch");
    // Namespace default exists: applying adds our label to it, shown as a change.
    expect(fresh.err.at(-1)).toMatch(/^\d+ to create, 1 to change, 0 to delete$/);
    expect(fresh.out).toMatch(/^\+\s+app.kubernetes.io\/managed-by: mcpfleet$/m);

    expect(await runApply([dir, "--kubeconfig", api.kubeconfigPath, "--prune"], quiet)).toBe(0);
    const none = await diff([dir, "--prune"]);
    expect(none.out).toBe("");
    expect(none.err).toEqual(["no changes"]);
    expect(none.code).toBe(0);

    const file = join(dir, "mcpserver-streamable-http.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace("value: info", "value: debug"));
    const changed = await diff([dir]);
    expect(changed.code).toBe(1);
    expect(changed.out).toMatch(/^-\s+value: info$/m);
    expect(changed.out).toMatch(/^\+\s+value: debug$/m);
    // Server-populated and defaulted fields never show as changes.
    expect(changed.out).not.toMatch(
      /^[-+].*(resourceVersion|managedFields|uid:|creationTimestamp)/m,
    );

    const pruned = await diff([join(EXAMPLES, "mcpgroup-engineering.yaml"), "--prune"]);
    expect(pruned.code).toBe(1);
    expect(pruned.out).toContain("--- live/Deployment/default/fetch");
    expect(pruned.err.at(-1)).toMatch(/to delete$/);
    expect(pruned.err.at(-1)).not.toMatch(/ 0 to delete$/);
  }, 30_000);

  it("writes unified hunks with context", () => {
    const a = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
    const b = "a\nb\nc\nd\nE\nf\ng\nh\ni\n";
    expect(unifiedDiff(a, b, "x")).toBe(
      "--- live/x\n+++ merged/x\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n",
    );
  });
});

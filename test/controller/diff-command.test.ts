// The unified diff `mcpfleet diff` prints, and its exit codes without a cluster (the command
// against the API server is in test/cluster/cli-apply-diff.test.ts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { unifiedDiff } from "../../src/controller/diff.js";
import { examples, runCli } from "../cli/helpers.js";

describe("unified diff", () => {
  it("writes unified hunks with context", () => {
    const a = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
    const b = "a\nb\nc\nd\nE\nf\ng\nh\ni\n";
    expect(unifiedDiff(a, b, "x")).toBe(
      "--- live/x\n+++ merged/x\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n",
    );
  });
});

/** A port nothing listens on: one the system gave and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// kubectl diff and flux diff exit 1 for "there are changes" only; a failure is more than 1.
describe("mcpfleet diff exit codes", () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpfleet-diff-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const group = join(examples, "resources", "mcpgroup-engineering.yaml");

  it("exits 2, not 1, when the kubeconfig cannot be read", async () => {
    const r = await runCli(["diff", group, "--kubeconfig", join(dir, "missing")]);
    expect(r.stderr).toMatch(/^mcpfleet: cannot load the kubeconfig .*missing/m);
    expect(r.status).toBe(2);
  });

  it("exits 2, not 1, when the API server cannot be reached", async () => {
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: lab, cluster: {server: 'https://127.0.0.1:" +
          String(await closedPort()) +
          "'}}]",
        "users: [{name: me, user: {token: x}}]",
        "contexts: [{name: lab, context: {cluster: lab, user: me}}]",
        "current-context: lab",
        "",
      ].join("\n"),
    );
    const r = await runCli(["diff", group, "--kubeconfig", kubeconfig]);
    expect(r.stderr).toMatch(/^mcpfleet: cannot reach the API server https:\/\/127\.0\.0\.1:/m);
    expect(r.status).toBe(2);
  });

  it("validates the files before reading the kubeconfig", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(
      bad,
      "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata: {name: s}\nspec: {image: x, transprot: stdio}\n",
    );
    const r = await runCli(["diff", bad, "--kubeconfig", join(dir, "missing")]);
    expect(r.stderr).toMatch(/unknown field "transprot"/);
    expect(r.stderr).toMatch(/^mcpfleet: 1 errors?; nothing to diff$/m);
    expect(r.stderr).not.toMatch(/kubeconfig/);
    expect(r.status).toBe(2);
  });
});

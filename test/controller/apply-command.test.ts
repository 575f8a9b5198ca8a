import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/apply.js";
import { type KubeApi, startKubeApi } from "../support/kube-api/index.js";
import { EXAMPLES, tmp } from "./helpers.js";

let api: KubeApi;
beforeEach(async () => {
  api = await startKubeApi();
});
afterEach(async () => {
  await api.stop();
});

function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = runApply([...args, "--kubeconfig", api.kubeconfigPath], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  });
  return code.then((c) => ({ code: c, out, err }));
}

describe("mcpfleet apply", () => {
  it("applies local files once; again changes nothing; --dry-run writes nothing", async () => {
    const first = await run([
      join(EXAMPLES, "mcpserver-streamable-http.yaml"),
      join(EXAMPLES, "mcpgroup-engineering.yaml"),
    ]);
    expect(first.err).toEqual([]);
    expect(first.code).toBe(0);
    expect(first.out).toContain("Deployment default/fetch created");
    expect(first.out.at(-1)).toMatch(/^applied: \d+ changed, 0 unchanged, 0 pruned$/);
    expect(api.objects({ kind: "MCPServer", namespace: "default" })).toHaveLength(1);

    const again = await run([
      join(EXAMPLES, "mcpserver-streamable-http.yaml"),
      join(EXAMPLES, "mcpgroup-engineering.yaml"),
    ]);
    expect(again.out.at(-1)).toMatch(/^applied: 0 changed, \d+ unchanged, 0 pruned$/);

    api.resetRequests();
    const dry = await run(["--dry-run", join(EXAMPLES, "mcpserver-sse.yaml")]);
    expect(dry.code).toBe(0);
    expect(dry.out.some((l) => l.endsWith("created (server dry run)"))).toBe(true);
    expect(api.requests.filter((r) => r.method !== "GET" && r.query.dryRun !== "All")).toEqual([]);
    expect(api.objects({ kind: "MCPServer", namespace: "default" })).toHaveLength(1);
  });

  it("applies nothing when a file is invalid and exits 1", async () => {
    const dir = tmp("apply-bad");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "bad.yaml"),
      "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata:\n  name: bad\nspec:\n  proxyPort: 70000\n",
    );
    const r = await run([join(EXAMPLES, "mcpserver-streamable-http.yaml"), dir]);
    expect(r.code).toBe(1);
    expect(r.err.join("\n")).toMatch(/bad\.yaml:\d+:\d+/);
    expect(api.requests.filter((q) => q.method !== "GET")).toEqual([]);
  });

  it("applies the sample GitOps repository of examples/gitops", async () => {
    const prod = join(EXAMPLES, "..", "gitops", "clusters", "prod");
    const r = await run([prod, "--prune"]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    const names = (kind: string, namespace: string) =>
      api.objects({ kind, namespace }).map((o) => o.metadata?.name);
    expect(names("Namespace", "").sort()).toEqual(
      expect.arrayContaining(["engineering", "platform"]),
    );
    expect(names("Deployment", "engineering").sort()).toEqual([
      "engineering-gateway",
      "fetch",
      "yardstick",
    ]);
    expect(names("Deployment", "platform")).toEqual(["company-registry-api"]);
    expect(names("Secret", "engineering")).toContain("engineering-gateway-hmac-secret");
  });
});

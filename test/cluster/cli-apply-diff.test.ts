// `mcpfleet apply` and `mcpfleet diff` against the real API server, each test in namespaces of
// its own; requests are counted on the wire by the proxy.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/apply.js";
import { runDiff } from "../../src/cli/diff.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { type ApiProxy, startApiProxy } from "../support/cluster/proxy.js";
import { EXAMPLES, copyExamples, tmp } from "../controller/helpers.js";
import { apiVersionOf, testNamespace } from "./controller-harness.js";
import { client } from "./helpers.js";

let proxy: ApiProxy;
let ns: string;
beforeAll(async () => {
  if (!noCluster()) proxy = await startApiProxy(clusterKubeconfig()!);
});
afterAll(async () => {
  await proxy?.stop();
});
beforeEach(() => {
  if (!noCluster()) ns = testNamespace(clusterKubeconfig()!, "cli");
});

const target = () => ["--kubeconfig", proxy.kubeconfigPath, "-n", ns, "--controller-namespace", ns];

async function apply(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runApply([...args, ...target()], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  });
  return { code, out, err };
}

async function diff(args: string[]) {
  let out = "";
  const err: string[] = [];
  const code = await runDiff([...args, ...target()], {
    out: (l) => (out += l),
    err: (l) => err.push(l),
  });
  return { code, out, err };
}

const names = async (kind: string, namespace: string) =>
  (await client().list(apiVersionOf(kind), kind, { namespace })).map((o) => o.metadata.name);

describe.skipIf(noCluster())("mcpfleet apply on the API server", () => {
  it("applies local files once; again changes nothing; --dry-run writes nothing", async () => {
    const files = [
      join(EXAMPLES, "mcpserver-streamable-http.yaml"),
      join(EXAMPLES, "mcpgroup-engineering.yaml"),
    ];
    const first = await apply(files);
    expect(first.err).toEqual([]);
    expect(first.code).toBe(0);
    expect(first.out).toContain(`Deployment ${ns}/fetch created`);
    expect(first.out.at(-1)).toMatch(/^applied: \d+ changed, 0 unchanged, 0 pruned$/);
    expect(await names("MCPServer", ns)).toEqual(["fetch"]);

    const again = await apply(files);
    expect(again.out.at(-1)).toMatch(/^applied: 0 changed, \d+ unchanged, 0 pruned$/);

    proxy.resetRequests();
    const dry = await apply(["--dry-run", join(EXAMPLES, "mcpserver-sse.yaml")]);
    expect(dry.code).toBe(0);
    expect(dry.out.some((l) => l.endsWith("created (server dry run)"))).toBe(true);
    const writes = proxy.requests.filter((r) => r.method !== "GET");
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.filter((r) => r.query.get("dryRun") !== "All")).toEqual([]);
    expect(await names("MCPServer", ns)).toEqual(["fetch"]);
  }, 60_000);

  it("--wait-timeout: Pods that never start (no kubelet here) are named, exit 1", async () => {
    const file = join(EXAMPLES, "mcpserver-streamable-http.yaml");
    const waited = await apply([file, "--wait-timeout", "1s"]);
    expect(waited.out).toContain(`Deployment ${ns}/fetch created`);
    expect(waited.err).toContainEqual(
      expect.stringMatching(
        new RegExp(`^Deployment ${ns}/fetch not rolled out: .+ \\(RolloutTimeout\\)$`),
      ),
    );
    expect(waited.err.at(-1)).toBe("1 workload(s) did not roll out within --wait-timeout");
    expect(waited.code).toBe(1);
    const refused = await diff([file, "--wait-timeout", "1s"]).catch((e: Error) => e);
    expect((refused as Error).message).toMatch(/--wait-timeout are apply's options/);
  });

  it("applies nothing when a file is invalid and exits 1", async () => {
    const dir = tmp("apply-bad");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "bad.yaml"),
      "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata:\n  name: bad\nspec:\n  proxyPort: 70000\n",
    );
    proxy.resetRequests();
    const r = await apply([join(EXAMPLES, "mcpserver-streamable-http.yaml"), dir]);
    expect(r.code).toBe(1);
    expect(r.err.join("\n")).toMatch(/bad\.yaml:\d+:\d+/);
    expect(proxy.requests.filter((q) => q.method !== "GET")).toEqual([]);
  }, 60_000);

  it("applies the sample GitOps repository of examples/gitops", async () => {
    const prod = join(EXAMPLES, "..", "gitops", "clusters", "prod");
    const r = await apply([prod, "--prune"]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(await names("Deployment", "engineering")).toEqual(
      expect.arrayContaining(["engineering-gateway", "fetch", "yardstick"]),
    );
    expect(await names("Deployment", "platform")).toContain("company-registry-api");
    expect(await names("Secret", "engineering")).toContain("engineering-gateway-hmac-secret");
  }, 60_000);
});

describe.skipIf(noCluster())("mcpfleet diff on the API server", () => {
  it("shows new objects, then nothing after apply, then the changed field only; --prune lists deletions", async () => {
    const dir = join(tmp("diff"), "fleet");
    copyExamples(dir);
    const fresh = await diff([dir]);
    expect(fresh.code).toBe(1);
    expect(fresh.out).toContain(`+++ merged/Deployment/${ns}/fetch`);
    expect(fresh.err.at(-1)).toMatch(/^\d+ to create, 0 to change, 0 to delete$/);

    expect(await apply([dir, "--prune"])).toMatchObject({ code: 0 });
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
    expect(pruned.out).toContain(`--- live/Deployment/${ns}/fetch`);
    expect(pruned.err.at(-1)).toMatch(/to delete$/);
    expect(pruned.err.at(-1)).not.toMatch(/ 0 to delete$/);
  }, 60_000);
});

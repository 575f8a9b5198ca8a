// Tenancy on the real API server (RBAC on): a revision may not write to the controller's own
// namespace or to kube-* unless the operator allows it, every refused object is named and nothing
// of the revision is written; with a ServiceAccount the writes are the ServiceAccount's, so its
// RBAC decides, and what it may not do is refused by the API server with a clear message.
import { join } from "node:path";
import { rmSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { impersonating } from "../../src/controller/impersonation.js";
import type { KubeClient } from "../../src/infra/kube/client.js";
import type { LiveCondition } from "../../src/controller/conditions.js";
import { namespaceCheck } from "../../src/controller/tenancy.js";
import { parseControllerArgs, runController } from "../../src/cli/controller.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { commitFiles, exampleRepo, gitCmd, tmp } from "../controller/helpers.js";
import { makeRepo } from "../support/git-server.js";
import { clusterControllerArgs, harness, testNamespace } from "./controller-harness.js";
import { client, installCrds, namespace } from "./helpers.js";

const server = (name: string, ns: string) => `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  image: ghcr.io/stackloklabs/gofetch/server:1.0.1
  transport: streamable-http
  proxyPort: 8080
  mcpPort: 8080
`;

let admin: KubeClient;
beforeAll(async () => {
  if (noCluster()) return;
  admin = client();
  await installCrds(admin);
});

const mcpServer = (name: string, ns: string) =>
  admin.get({
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind: "MCPServer",
    metadata: { name, namespace: ns },
  });

/** `mcpfleet controller --once` on `repo`'s fleet folder; its exit code and stderr. */
async function once(repo: string, extra: string[]): Promise<{ code: number; err: string }> {
  const err: string[] = [];
  const config = parseControllerArgs([
    "--once",
    ...clusterControllerArgs(`file://${repo}`, clusterKubeconfig()!),
    "--cache-dir",
    tmp("tenancy-cache"),
    ...extra,
  ])!;
  const code = await runController(config, { stdout: () => {}, stderr: (l) => err.push(l) });
  return { code, err: err.join("\n") };
}

describe.skipIf(noCluster())("namespaces a revision may write to", () => {
  it("refuses kube-system and the controller's own namespace by default, names each object, and writes nothing of the revision", async () => {
    const own = testNamespace(clusterKubeconfig()!, "own");
    const tenant = testNamespace(clusterKubeconfig()!, "tenant");
    const repo = tmp("tenancy-repo");
    makeRepo(repo, {
      "fleet/system.yaml": server("sneaky", "kube-system"),
      "fleet/own.yaml": server("takeover", own),
      "fleet/tenant.yaml": server("fine", tenant),
    });
    const refused = await once(repo, ["--controller-namespace", own]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      /refused: namespace kube-system belongs to the cluster.* object=MCPServer kube-system\/sneaky/,
    );
    expect(refused.err).toMatch(
      new RegExp(
        `refused: namespace ${own} is the controller's own.* object=MCPServer ${own}/takeover`,
      ),
    );
    expect(refused.err).toMatch(
      /was refused \(2 objects outside what this controller may apply\); nothing was applied/,
    );
    expect(await mcpServer("sneaky", "kube-system")).toBeUndefined();
    // Not even the admitted part: the tenant's Namespace was never created.
    expect(
      await admin.get({ apiVersion: "v1", kind: "Namespace", metadata: { name: tenant } }),
    ).toBeUndefined();

    // The operator allows its own namespace by name (and the tenant's by a glob); kube-system
    // stays refused, so the revision still is; without it, the revision applies.
    const allow = ["--controller-namespace", own, "--namespace-allow", `${own},tenant-*`];
    const still = await once(repo, allow);
    expect(still.code).toBe(1);
    expect(still.err).toMatch(/MCPServer kube-system\/sneaky/);
    expect(still.err).not.toMatch(/object=MCPServer \S+\/takeover/);
    rmSync(join(repo, "fleet", "system.yaml"));
    gitCmd(repo, "commit", "-q", "-am", "no kube-system");
    const applied = await once(repo, allow);
    expect(applied.err).not.toMatch(/^error/m);
    expect(applied.code).toBe(0);
    expect(await mcpServer("takeover", own)).toBeDefined();
    expect(await mcpServer("fine", tenant)).toBeDefined();

    // A later refused revision leaves them in place, and says so on them.
    commitFiles(
      repo,
      { "fleet/system.yaml": server("sneaky", "kube-system") },
      "kube-system again",
    );
    expect((await once(repo, allow)).code).toBe(1);
    for (const live of [await mcpServer("takeover", own), await mcpServer("fine", tenant)]) {
      const conditions = (live?.status as { conditions?: LiveCondition[] }).conditions ?? [];
      const stalled = conditions.find((c) => c.type === "Stalled");
      expect(stalled).toMatchObject({ status: "True", reason: "ERR_REFUSED" });
      expect(stalled?.message).toMatch(/^revision [0-9a-f]{12} was refused and was not applied; /);
      expect(conditions.find((c) => c.type === "Ready")).toBeDefined();
    }
  }, 90_000);

  it("--target-namespace confines every resource to one namespace", async () => {
    const tenant = testNamespace(clusterKubeconfig()!, "tenant");
    const repo = tmp("tenancy-repo");
    makeRepo(repo, {
      "fleet/mine.yaml": server("mine", tenant).replace(`  namespace: ${tenant}\n`, ""),
      "fleet/other.yaml": server("elsewhere", "default"),
    });
    const refused = await once(repo, ["--target-namespace", tenant]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      new RegExp(
        `refused: namespace default is outside the target namespace ${tenant}.* object=MCPServer default/elsewhere`,
      ),
    );
    rmSync(join(repo, "fleet", "other.yaml"));
    gitCmd(repo, "commit", "-q", "-am", "only mine");
    const applied = await once(repo, ["--target-namespace", tenant]);
    expect(applied.code).toBe(0);
    expect(await mcpServer("mine", tenant)).toBeDefined();
  }, 60_000);
});

describe.skipIf(noCluster())("writing as a ServiceAccount", () => {
  it("applies with the ServiceAccount's rights: what its RBAC allows lands, kube-system is refused by the API server", async () => {
    const tenant = await namespace(admin, "sa-tenant");
    await admin.create({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "deployer", namespace: tenant },
    });
    // Everything in its own namespace, nothing elsewhere (the namespace admin of a tenant).
    await admin.create({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "deployer", namespace: tenant },
      rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
    });
    await admin.create({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "deployer", namespace: tenant },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "deployer" },
      subjects: [{ kind: "ServiceAccount", name: "deployer", namespace: tenant }],
    });

    const repo = exampleRepo();
    commitFiles(repo.dir, { "fleet/system.yaml": server("sneaky", "kube-system") }, "reach out");
    const h0 = harness(clusterKubeconfig()!, repo.dir, tenant);
    const writer = impersonating(h0.client, { namespace: tenant, name: "deployer" });
    h0.close();
    const h = harness(clusterKubeconfig()!, repo.dir, tenant, {
      writer,
      namespaces: false,
      // The operator allowed kube-system: the ServiceAccount's RBAC is what stops it.
      admission: [namespaceCheck({ allow: [tenant, "kube-system"] })],
    });
    const whoami = await writer.request<{ status: { userInfo: { username: string } } }>(
      "POST",
      "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
    );
    expect(whoami.status.userInfo.username).toBe(`system:serviceaccount:${tenant}:deployer`);

    const refused = await h.reconciler.sync();
    expect(refused.kind).toBe("failed");
    const message = refused.kind === "failed" ? refused.message : "";
    expect(message).toMatch(/^MCPServer kube-system\/sneaky: /);
    expect(message).toContain(
      `"system:serviceaccount:${tenant}:deployer" cannot patch resource "mcpservers"`,
    );
    expect(message).toMatch(/\(HTTP 403\)$/);
    expect(await mcpServer("sneaky", "kube-system")).toBeUndefined();

    rmSync(join(repo.dir, "fleet", "system.yaml"));
    gitCmd(repo.dir, "commit", "-q", "-am", "stay home");
    const applied = await h.reconciler.sync();
    expect(applied, JSON.stringify(applied)).toMatchObject({ kind: "applied" });
    expect(await h.get("Deployment", "fetch")).toBeDefined();
    expect(await h.get("RoleBinding", "github-proxy-runner")).toBeDefined();
    // Status is the controller's to write, with its own identity.
    const fetch = await h.get("MCPServer", "fetch");
    expect((fetch?.status as { observedGeneration?: number }).observedGeneration).toBe(
      fetch?.metadata.generation,
    );
    h.applier.close();

    // The same through the command line: --service-account is who writes.
    const cli = tmp("tenancy-sa-repo");
    makeRepo(cli, { "fleet/default.yaml": server("elsewhere", "default") });
    const run = await once(cli, [
      "--controller-namespace",
      tenant,
      "--namespace-allow",
      `${tenant},default`,
      "--service-account",
      `${tenant}/deployer`,
    ]);
    expect(run.code).toBe(1);
    expect(run.err).toContain(
      `MCPServer default/elsewhere: mcpservers.toolhive.stacklok.dev "elsewhere" is forbidden: User "system:serviceaccount:${tenant}:deployer"`,
    );
    expect(await mcpServer("elsewhere", "default")).toBeUndefined();
  }, 90_000);
});

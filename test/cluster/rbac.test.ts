// The controller as its own ServiceAccount, bound to exactly the ClusterRole of the install
// bundle (`controllerRules`): a full cycle (first apply, no-op, status, drift, prune, recreate of
// an immutable field, events, Lease) is never refused, and every permission of the role is either
// used by a request of that cycle or needed to create the Roles synth renders (Kubernetes lets
// nobody grant a permission they do not hold).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { LeaderElector } from "../../src/controller/leader.js";
import type { KubeClient } from "../../src/infra/kube/client.js";
import { crdObjects, controllerRules } from "../../src/synth/install.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { type ApiProxy, type ProxiedRequest, startApiProxy } from "../support/cluster/proxy.js";
import { commitDebugLogLevel, commitFiles, exampleRepo } from "../controller/helpers.js";
import { harness, testNamespace, until } from "./controller-harness.js";
import { client, installCrds } from "./helpers.js";

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

/** "group/resource verb" for each permission a list of rules grants. */
function permissions(rules: Rule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) {
    for (const g of r.apiGroups)
      for (const res of r.resources) for (const v of r.verbs) out.add(`${g}/${res} ${v}`);
  }
  return out;
}

/** The permission a request needed: its group, resource (with subresource) and RBAC verb. */
function permissionOf(r: ProxiedRequest): string[] {
  const parts = r.path.split("/").filter((p) => p !== "");
  const group = parts[0] === "api" ? "" : (parts[1] ?? "");
  let rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
  if (rest[0] === "namespaces" && rest.length >= 3) rest = rest.slice(2);
  const resource = rest.length >= 3 ? `${rest[0]}/${rest[2]}` : (rest[0] ?? "");
  const verb = r.verb === "apply" ? "patch" : r.verb === "update" ? "update" : r.verb;
  // A server-side apply that creates its object is also authorized as a create.
  const extra = r.verb === "apply" && r.status === 201 ? [`${group}/${resource} create`] : [];
  return [`${group}/${resource} ${verb}`, ...extra];
}

let admin: KubeClient;
let proxy: ApiProxy;
let ns: string;
const suffix = randomBytes(3).toString("hex");
const roleName = `mcpfleet-rbac-test-${suffix}`;

beforeAll(async () => {
  if (noCluster()) return;
  admin = client();
  await installCrds(admin);
  ns = testNamespace(clusterKubeconfig()!, "rbac");
  await admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const sa = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "controller", namespace: ns },
  };
  await admin.create(sa);
  // The install bundle's ClusterRole under a name of this test's, bound to its ServiceAccount.
  await admin.create({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: roleName },
    rules: controllerRules(crdObjects()),
  });
  await admin.create({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: roleName },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
    subjects: [{ kind: "ServiceAccount", name: "controller", namespace: ns }],
  });
  const token = await admin.request<{ status: { token: string } }>(
    "POST",
    `/api/v1/namespaces/${ns}/serviceaccounts/controller/token`,
    {
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 3600 },
      },
    },
  );
  proxy = await startApiProxy(clusterKubeconfig()!, { token: token.status.token });
});

afterAll(async () => {
  if (noCluster()) return;
  await proxy.stop();
  for (const kind of ["ClusterRoleBinding", "ClusterRole"]) {
    await admin.delete({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind,
      metadata: { name: roleName },
    });
  }
});

describe.skipIf(noCluster())("the controller's ClusterRole", () => {
  it("is enough for a full cycle as the controller's ServiceAccount, and nothing in it is unused", async () => {
    const repo = exampleRepo();
    let now = 1_000_000;
    const h = harness(proxy.kubeconfigPath, repo.dir, ns, {
      driftIntervalMs: 60_000,
      now: () => now,
      forceRecreate: true,
    });
    const whoami = await h.client.request<{ status: { userInfo: { username: string } } }>(
      "POST",
      "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
    );
    expect(whoami.status.userInfo.username).toBe(`system:serviceaccount:${ns}:controller`);
    proxy.resetRequests();

    // Leader election, first apply, no-op poll, status refresh, drift correction.
    const elector = new LeaderElector(h.client, {
      namespace: ns,
      name: "mcpfleet-controller-leader",
      identity: "rbac-test",
      leaseDurationSeconds: 5,
      renewMs: 200,
    });
    elector.start();
    await until("leading", () => elector.isLeader || undefined);
    const first = await h.reconciler.sync();
    expect(first, JSON.stringify(first)).toMatchObject({ kind: "applied" });
    expect((await h.reconciler.sync()).kind).toBe("unchanged");
    now += 61_000;
    expect((await h.reconciler.sync()).kind).toBe("applied");
    // An immutable selector change, recreated; a removed server, pruned.
    const ref = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "fetch", namespace: ns },
    };
    const live = await admin.get(ref);
    await admin.delete(ref, { propagationPolicy: "Foreground" });
    await until("fetch deleted", async () => (await admin.get(ref)) === undefined);
    const spec = live?.spec as { template: { metadata: { labels: Record<string, string> } } };
    await admin.create({
      ...ref,
      metadata: { ...ref.metadata, annotations: live?.metadata.annotations ?? {} },
      spec: {
        ...spec,
        selector: { matchLabels: { legacy: "fetch" } },
        template: {
          ...spec.template,
          metadata: { labels: { ...spec.template.metadata.labels, legacy: "fetch" } },
        },
      },
    });
    commitDebugLogLevel(repo.dir);
    rmSync(join(repo.dir, "fleet", "mcpserver-sse.yaml"));
    commitFiles(repo.dir, {}, "remove the sse server");
    const last = await h.reconciler.sync();
    expect(last.kind).toBe("applied");
    if (last.kind === "applied") {
      expect(last.result.pruned).toBeGreaterThan(0);
      expect(last.result.changes.some((c) => c.action === "recreated")).toBe(true);
    }
    // An invalid revision: reported as a Warning Event.
    commitFiles(repo.dir, { "fleet/broken.yaml": "kind: MCPServer\nspec: [\n" }, "break");
    expect((await h.reconciler.sync()).kind).toBe("invalid");
    await elector.stop({ release: true });

    // Nothing was refused.
    const refused = proxy.requests.filter((r) => r.status === 403);
    expect(refused.map((r) => `${r.method} ${r.path}`)).toEqual([]);

    // Every permission is used, or needed to grant what the rendered Roles grant, or is what
    // apply and prune of a kind written in this cycle need in another one (an apply that creates,
    // a prune that reads the marker and deletes).
    const used = new Set(
      proxy.requests
        .filter((r) => (r.status > 0 && r.status < 400) || r.status === 404)
        .flatMap(permissionOf),
    );
    const roles = await admin.list("rbac.authorization.k8s.io/v1", "Role", { namespace: ns });
    expect(roles.length).toBeGreaterThan(0);
    const granted = permissions(roles.flatMap((r) => (r.rules as Rule[] | undefined) ?? []));
    const applied = new Set(
      [...used].filter((p) => p.endsWith(" patch")).map((p) => p.split(" ")[0]),
    );
    const situational = (p: string): boolean => {
      const [resource, verb] = p.split(" ") as [string, string];
      if (!applied.has(resource)) return false;
      const kept = resource.endsWith("customresourcedefinitions") || resource === "/namespaces";
      return verb === "create" || verb === "get" || (verb === "delete" && !kept);
    };
    const unused = [...permissions(controllerRules(crdObjects()))].filter(
      (p) => !used.has(p) && !granted.has(p) && !situational(p),
    );
    expect(unused).toEqual([]);
    h.close();
  }, 180_000);
});

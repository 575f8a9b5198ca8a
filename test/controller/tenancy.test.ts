// The namespace policy and the tenancy flags of `mcpfleet controller`, without a cluster: which
// namespaces are protected, how patterns allow them, and bad flags as usage errors.
import { describe, expect, it } from "vitest";
import { parseControllerArgs } from "../../src/cli/controller.js";
import { parseServiceAccount, serviceAccountUser } from "../../src/controller/impersonation.js";
import { namespaceCheck, parseNamespaceAllow } from "../../src/controller/tenancy.js";
import type { KubeObject } from "../../src/synth/model.js";

const inNs = (namespace: string, kind = "MCPServer"): KubeObject => ({
  apiVersion: "toolhive.stacklok.dev/v1alpha1",
  kind,
  metadata: { name: "x", namespace },
});
const namespaceObject = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name },
});

describe("namespaceCheck", () => {
  it("by default refuses kube-* and the controller's own namespace, nothing else", () => {
    const check = namespaceCheck({ own: "mcpfleet-system" });
    expect(check(inNs("team-a"))).toBeUndefined();
    expect(check(inNs("default"))).toBeUndefined();
    expect(check(inNs("kube-system"))).toMatch(/kube-system belongs to the cluster/);
    expect(check(inNs("kube-public"))).toMatch(/belongs to the cluster/);
    expect(check(namespaceObject("kube-node-lease"))).toMatch(/belongs to the cluster/);
    expect(check(inNs("mcpfleet-system"))).toMatch(/the controller's own/);
    // Not confined: a cluster-scoped object is not refused, nor are our CRDs.
    expect(check({ apiVersion: "v1", kind: "PersistentVolume", metadata: { name: "p" } })).toBe(
      undefined,
    );
  });

  it("patterns confine; a protected namespace needs one that names it, not a catch-all", () => {
    const check = namespaceCheck({ allow: ["team-*", "kube-system", "*"], own: "ops" });
    expect(check(inNs("team-a"))).toBeUndefined();
    expect(check(inNs("kube-system"))).toBeUndefined();
    expect(check(inNs("kube-public"))).toMatch(/belongs to the cluster/);
    expect(check(inNs("ops"))).toMatch(/controller's own/);
    const teams = namespaceCheck({ allow: ["team-?"] });
    expect(teams(inNs("team-b"))).toBeUndefined();
    expect(teams(inNs("team-bb"))).toMatch(
      /namespace team-bb is not allowed \(--namespace-allow team-\?\)/,
    );
    expect(teams({ apiVersion: "v1", kind: "PersistentVolume", metadata: { name: "p" } })).toMatch(
      /cluster-scoped/,
    );
    expect(
      teams({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "c" },
      }),
    ).toBeUndefined();
  });

  it("-n unlocks its namespace only when no patterns are given; a target namespace is the only one", () => {
    expect(namespaceCheck({ own: "ops", named: ["ops"] })(inNs("ops"))).toBeUndefined();
    expect(namespaceCheck({ own: "ops", named: ["ops"], allow: ["t-*"] })(inNs("ops"))).toMatch(
      /controller's own/,
    );
    const target = namespaceCheck({ target: "kube-tenant", own: "ops" });
    expect(target(inNs("kube-tenant"))).toBeUndefined();
    expect(target(inNs("default"))).toMatch(/outside the target namespace kube-tenant/);
  });
});

describe("tenancy flags", () => {
  const base = ["--repo", "file:///r", "--once"];
  const parse = (...extra: string[]) => parseControllerArgs([...base, ...extra])!;

  it("reach the cluster target options", () => {
    const c = parse(
      "--namespace-allow",
      "team-*,shared",
      "--namespace-allow",
      "ops",
      "--service-account",
      "team-a/deployer",
      "-n",
      "team-a",
      "--wait-timeout",
      "2m",
    );
    expect(c.cluster.tenancy).toEqual({
      allow: ["team-*", "shared", "ops"],
      defaultNamespace: "team-a",
      serviceAccount: { namespace: "team-a", name: "deployer" },
    });
    expect(c.cluster.waitTimeoutMs).toBe(120_000);
    const t = parse("--target-namespace", "team-b", "--service-account", "deployer");
    expect(t.namespace).toBe("team-b");
    expect(t.cluster.tenancy?.serviceAccount).toEqual({ namespace: "team-b", name: "deployer" });
    expect(parse().cluster.tenancy).toEqual({ allow: [] });
    expect(parse().cluster.waitTimeoutMs).toBeUndefined();
  });

  it("bad values are usage errors naming the flag", () => {
    const bad = (args: string[], message: RegExp) => {
      let thrown: unknown;
      try {
        parse(...args);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toMatchObject({ code: "ERR_USAGE" });
      expect((thrown as Error).message).toMatch(message);
    };
    bad(["--namespace-allow", "Team_A"], /--namespace-allow: "Team_A" is not a namespace name/);
    bad(["--namespace-allow", "a,,b"], /--namespace-allow: "" is not/);
    bad(["--target-namespace=-x"], /--target-namespace: "-x" is not a valid namespace name/);
    bad(["--service-account", "deployer"], /NAMESPACE\/NAME \(or NAME with --target-namespace\)/);
    bad(["--service-account", "a/b/c"], /--service-account must be NAMESPACE\/NAME/);
    bad(
      ["--target-namespace", "a", "--namespace-allow", "b"],
      /one of --target-namespace and --namespace-allow/,
    );
    bad(["--target-namespace", "a", "-n", "b"], /-n b contradicts --target-namespace a/);
    bad(["--wait-timeout", "soon"], /--wait-timeout/);
  });

  it("the impersonated user is the ServiceAccount's", () => {
    expect(serviceAccountUser(parseServiceAccount("t/d"))).toBe("system:serviceaccount:t:d");
    expect(parseNamespaceAllow(["a, b*"])).toEqual(["a", "b*"]);
  });
});

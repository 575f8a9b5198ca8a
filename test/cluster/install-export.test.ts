// `mcpfleet install --export` as a bootstrap uses it: its output applies with `kubectl apply
// --server-side` on the real API server, two controllers (two teams, two paths of the
// examples/gitops layout) share one cluster, and the flags reach the controller's command line.
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../../src/synth/model.js";
import { noCluster } from "../support/cluster/context.js";
import { runCli } from "../cli/helpers.js";
import { client, kubectl, namespace } from "./helpers.js";

function objectsOf(text: string): KubeObject[] {
  return parseAllDocuments(text).map((d) => d.toJS() as KubeObject);
}

type Container = { args?: string[]; image?: string };
function controllerContainer(objects: KubeObject[]): Container {
  const deployment = objects.find((o) => o.kind === "Deployment") as
    { spec: { template: { spec: { containers: Container[] } } } } | undefined;
  return deployment!.spec.template.spec.containers[0]!;
}

describe("mcpfleet install --export", () => {
  it("passes every option to the controller's command line and image", async () => {
    const r = await runCli([
      "install",
      "--export",
      "--repo",
      "https://git.example.com/platform/mcp-fleet.git",
      "--branch",
      "main",
      "--path",
      "clusters/prod",
      "--interval",
      "5m",
      "--token-secret",
      "fleet-git",
      "--image",
      "registry.example.com/mcpfleet:1.2.3",
      "--controller-arg=--lease-duration=30s",
      "--no-crds",
    ]);
    expect(r.status).toBe(0);
    const objects = objectsOf(r.stdout);
    expect(objects.some((o) => o.kind === "CustomResourceDefinition")).toBe(false);
    const container = controllerContainer(objects);
    expect(container.image).toBe("registry.example.com/mcpfleet:1.2.3");
    expect(container.args).toEqual(
      expect.arrayContaining([
        "--repo=https://git.example.com/platform/mcp-fleet.git",
        "--branch=main",
        "--path=clusters/prod",
        "--interval=5m",
        "--lease-duration=30s",
      ]),
    );
  });

  it("--ssh-secret mounts the deploy key and known_hosts and passes both to the controller", async () => {
    const r = await runCli([
      "install",
      "--export",
      "--no-crds",
      // An existing namespace, so that the server-side dry run below can place every object.
      "-n",
      "default",
      "--repo",
      "git@git.example.com:platform/mcp-fleet.git",
      "--ssh-secret",
      "fleet-ssh",
    ]);
    expect(r.status, r.stderr).toBe(0);
    const objects = objectsOf(r.stdout);
    const container = controllerContainer(objects) as Container & {
      volumeMounts: { name: string; mountPath: string }[];
    };
    expect(container.args).toEqual(
      expect.arrayContaining([
        "--ssh-key-file=/etc/mcpfleet/git-ssh/identity",
        "--known-hosts-file=/etc/mcpfleet/git-ssh/known_hosts",
      ]),
    );
    expect(container.args!.some((a) => a.startsWith("--token-file"))).toBe(false);
    expect(container.volumeMounts).toContainEqual(
      expect.objectContaining({ name: "git-ssh", mountPath: "/etc/mcpfleet/git-ssh" }),
    );
    const deployment = objects.find((o) => o.kind === "Deployment") as unknown as {
      spec: { template: { spec: { volumes: { name: string; secret?: unknown }[] } } };
    };
    expect(deployment.spec.template.spec.volumes).toContainEqual({
      name: "git-ssh",
      secret: {
        secretName: "fleet-ssh",
        items: [
          { key: "identity", path: "identity" },
          { key: "known_hosts", path: "known_hosts" },
        ],
      },
    });
    if (!noCluster()) {
      const dry = kubectl(
        ["apply", "--server-side", "--dry-run=server", "--field-manager=test", "-f", "-"],
        r.stdout,
      );
      expect(dry.status, dry.stderr).toBe(0);
    }
  });

  it.skipIf(noCluster())(
    "--service-account lets the controller impersonate that account, and no other",
    async () => {
      const c = client();
      const tenant = await namespace(c, "tenant");
      const home = `mcpfleet-imp-${tenant.slice(-6)}`;
      const r = await runCli([
        "install",
        "--export",
        "--no-crds",
        "-n",
        home,
        "--repo",
        "https://git.example.com/platform/mcp-fleet.git",
        "--service-account",
        `${tenant}/deployer`,
      ]);
      expect(r.status, r.stderr).toBe(0);
      expect(controllerContainer(objectsOf(r.stdout)).args).toContain(
        `--service-account=${tenant}/deployer`,
      );
      const applied = kubectl(
        ["apply", "--server-side", "--field-manager=install-test", "-f", "-"],
        r.stdout,
      );
      expect(applied.status, applied.stderr).toBe(0);
      const controller = `system:serviceaccount:${home}:mcpfleet-controller`;
      const canI = (account: string) =>
        kubectl([
          "auth",
          "can-i",
          "impersonate",
          `serviceaccounts/${account}`,
          "-n",
          tenant,
          "--as",
          controller,
        ]).stdout.trim();
      expect(canI("deployer")).toBe("yes");
      expect(canI("someone-else")).toBe("no");
      kubectl(["delete", "namespace", home, "--wait=false"]);
    },
  );

  it("refuses a --service-account that is not NAMESPACE/NAME", async () => {
    const r = await runCli(["install", "--export", "--service-account", "a/b/c"]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/--service-account must be NAMESPACE\/NAME/);
  });

  it("refuses credentials that do not suit the repository's transport", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["--repo", "https://git.example.com/a.git", "--ssh-secret", "k"],
        /--ssh-secret is for ssh:\/\/ and user@host:path repositories/,
      ],
      [["--repo", "ssh://git@git.example.com/a.git", "--token-secret", "t"], /give --ssh-secret/],
      [["--ssh-secret", "k", "--token-secret", "t"], /not both/],
      [["--ssh-secret", ""], /--ssh-secret must not be empty/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(["install", "--export", ...args]);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  });

  it("refuses what the controller would refuse, before printing anything", async () => {
    const bad = await runCli(["install", "--export", "--interval", "5"]);
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr.trim()).toMatch(/^mcpfleet: install: --interval: "5" is not a duration/);
    const bare = await runCli(["install"]);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain("give --export");
  });

  it.skipIf(noCluster())(
    "applies with kubectl apply --server-side; two controllers share a cluster",
    async () => {
      const exports = await Promise.all(
        ["team-a", "team-b"].map((ns) =>
          runCli([
            "install",
            "--export",
            "-n",
            `mcpfleet-${ns}`,
            "--repo",
            "https://git.example.com/platform/mcp-fleet.git",
            "--path",
            `clusters/${ns}`,
          ]),
        ),
      );
      for (const e of exports) {
        expect(e.status, e.stderr).toBe(0);
        const applied = kubectl(
          ["apply", "--server-side", "--field-manager=bootstrap", "-f", "-"],
          e.stdout,
        );
        expect(applied.stderr).toBe("");
        expect(applied.status).toBe(0);
      }
      const c = client();
      for (const ns of ["team-a", "team-b"]) {
        const binding = await c.get({
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: `mcpfleet-controller-mcpfleet-${ns}` },
        });
        expect(binding?.subjects).toEqual([
          { kind: "ServiceAccount", name: "mcpfleet-controller", namespace: `mcpfleet-${ns}` },
        ]);
        const deployment = await c.get({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "mcpfleet-controller", namespace: `mcpfleet-${ns}` },
        });
        expect(JSON.stringify(deployment?.spec)).toContain(`--path=clusters/${ns}`);
      }
      for (const ns of ["team-a", "team-b"]) {
        await c.delete({
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: `mcpfleet-${ns}` },
        });
        for (const kind of ["ClusterRoleBinding", "ClusterRole"]) {
          await c.delete({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind,
            metadata: { name: `mcpfleet-controller-mcpfleet-${ns}` },
          });
        }
      }
    },
  );
});

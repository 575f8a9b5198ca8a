// `mcpfleet apply` against the real API server as a user meets it: credentials it refuses (401),
// a user without permissions (403), --context choosing among contexts, and a server-side dry run
// that stores nothing. Each failure is one line naming the server and what to do, exit 1.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { examples, runCli } from "../cli/helpers.js";
import { client, installCrds, namespace, tmpDir } from "./helpers.js";

const GROUP = join(examples, "resources", "mcpgroup-engineering.yaml");

/** A kubeconfig for the cluster under test with `token` as the user, and a dead second context. */
function kubeconfigWithToken(dir: string, token: string, current: "real" | "dead"): string {
  const admin = new KubeConfig();
  admin.loadFromFile(clusterKubeconfig()!);
  const cluster = admin.getCurrentCluster()!;
  const ca = cluster.caData ?? "";
  const file = join(dir, `${current}-${token.slice(0, 6)}.kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: "real", cluster: { server: cluster.server, "certificate-authority-data": ca } },
        {
          name: "dead",
          cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true },
        },
      ],
      users: [{ name: "u", user: { token } }],
      contexts: [
        { name: "real", context: { cluster: "real", user: "u" } },
        { name: "dead", context: { cluster: "dead", user: "u" } },
      ],
      "current-context": current,
    }),
  );
  return file;
}

function oneLine(text: string): string {
  const lines = text.trim().split("\n");
  expect(lines, text).toHaveLength(1);
  return lines[0]!;
}

describe.skipIf(noCluster())("mcpfleet apply against a real API server", () => {
  const dir = tmpDir("cli-errors");
  let ns = "";
  let saToken = "";

  beforeAll(async () => {
    const admin = client();
    await installCrds(admin);
    ns = await namespace(admin, "cli-errors");
    await admin.create({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "nobody", namespace: ns },
    });
    const issued = await admin.request<{ status: { token: string } }>(
      "POST",
      `/api/v1/namespaces/${ns}/serviceaccounts/nobody/token`,
      {
        body: {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: { expirationSeconds: 600 },
        },
      },
    );
    saToken = issued.status.token;
  });

  it("401: credentials the server refuses", async () => {
    const kc = kubeconfigWithToken(dir, "not-a-valid-token", "real");
    const r = await runCli(["apply", "-f", GROUP, "-n", ns, "--kubeconfig", kc]);
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toMatch(
      /^mcpfleet: the API server https:\/\/127\.0\.0\.1:\d+ \(context real\) refused the kubeconfig's credentials \(401 Unauthorized\); log in again/,
    );
  });

  it("403: a user without permissions", async () => {
    const kc = kubeconfigWithToken(dir, saToken, "real");
    const r = await runCli(["apply", "-f", GROUP, "-n", ns, "--kubeconfig", kc]);
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toMatch(
      /\(context real\) forbids it \(403\): .*system:serviceaccount:/,
    );
  });

  it("--context picks the context; --dry-run=server runs admission and stores nothing", async () => {
    const admin = client();
    const adminKc = new KubeConfig();
    adminKc.loadFromFile(clusterKubeconfig()!);
    // A copy of the admin kubeconfig whose current context is dead: --context, not the file's
    // current context, must be what is used.
    const kc = join(dir, "two-contexts.kubeconfig");
    const raw = JSON.parse(adminKc.exportConfig()) as {
      clusters: { name: string; cluster: Record<string, unknown> }[];
      contexts: { name: string; context: Record<string, unknown> }[];
      "current-context": string;
    };
    const live = raw["current-context"];
    raw.clusters.push({
      name: "dead",
      cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true },
    });
    raw.contexts.push({ name: "dead", context: { ...raw.contexts[0]!.context, cluster: "dead" } });
    raw["current-context"] = "dead";
    writeFileSync(kc, JSON.stringify(raw));

    const dead = await runCli(["apply", "-f", GROUP, "-n", ns, "--kubeconfig", kc]);
    expect(dead.status).toBe(1);
    expect(oneLine(dead.stderr)).toContain("(context dead)");

    const dry = await runCli([
      "apply",
      "-f",
      GROUP,
      "-n",
      ns,
      "--kubeconfig",
      kc,
      "--context",
      live,
      "--dry-run=server",
    ]);
    expect(dry.stderr).toBe("");
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(
      new RegExp(`MCPGroup ${ns}/engineering created \\(server dry run\\)`),
    );
    const stored = await admin.get({
      apiVersion: "toolhive.stacklok.dev/v1alpha1",
      kind: "MCPGroup",
      metadata: { name: "engineering", namespace: ns },
    });
    expect(stored).toBeUndefined();
  });
});

// Warning Events for failures that are not apply failures, on the real API server: a Git fetch
// that fails and an invalid revision, each recorded once on the inventory ConfigMap however often
// the poll sees it again; and an applied revision's warnings, said once.
import { readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LiveObject } from "../../src/infra/kube/client.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import { clusterKubeconfig, noCluster } from "../support/cluster/context.js";
import { commitFiles, EXAMPLES, exampleRepo } from "../controller/helpers.js";
import { type Harness, harness, testNamespace } from "./controller-harness.js";

async function warnings(h: Harness, reason: string): Promise<LiveObject[]> {
  return (await h.list("Event")).filter((e) => e.reason === reason);
}

describe.skipIf(noCluster())(
  "Warning Events for fetch and validation failures, on the API server",
  () => {
    it("records an invalid revision once, naming file and line, on the inventory ConfigMap", async () => {
      const repo = exampleRepo();
      const h = harness(clusterKubeconfig()!, repo.dir, testNamespace(clusterKubeconfig()!));
      expect((await h.reconciler.sync()).kind).toBe("applied");
      expect(await warnings(h, "ValidationFailed")).toEqual([]);

      const bad = commitFiles(
        repo.dir,
        {
          "fleet/broken.yaml": [
            "apiVersion: toolhive.stacklok.dev/v1alpha1",
            "kind: MCPServer",
            "metadata:",
            "  name: broken",
            "spec:",
            "  image: ghcr.io/example/broken:1.0.0",
            "  transport: carrier-pigeon",
            "",
          ].join("\n"),
        },
        "break",
      );
      expect((await h.reconciler.sync()).kind).toBe("invalid");
      // Polls that see the same invalid revision again, forced ones included, record nothing more.
      expect((await h.reconciler.sync()).kind).toBe("unchanged");
      expect((await h.reconciler.sync({ force: true })).kind).toBe("invalid");
      const events = await warnings(h, "ValidationFailed");
      expect(events).toHaveLength(1);
      const e = events[0]!;
      expect(e.type).toBe("Warning");
      expect(e.involvedObject).toMatchObject({
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "mcpfleet-inventory",
        namespace: h.ns,
      });
      expect(String(e.message)).toContain(bad.slice(0, 12));
      expect(String(e.message)).toMatch(/fleet\/broken\.yaml:7:\d+: .*transport/);
      expect(String(e.message)).toMatch(/stays in place/);

      // A second invalid revision is a new failure: one more Event.
      commitFiles(repo.dir, { "fleet/broken2.yaml": "kind: [\n" }, "break again");
      expect((await h.reconciler.sync()).kind).toBe("invalid");
      expect(await warnings(h, "ValidationFailed")).toHaveLength(2);
      expect(await warnings(h, "FetchFailed")).toEqual([]);
      h.client.close();
    }, 30_000);

    it("records a fetch failure once per outage, creating the namespace when it is missing", async () => {
      const repo = exampleRepo();
      const away = `${repo.dir}-away`;
      const h = harness(clusterKubeconfig()!, repo.dir, testNamespace(clusterKubeconfig()!));
      expect(
        await h.client.get({ apiVersion: "v1", kind: "Namespace", metadata: { name: h.ns } }),
      ).toBeUndefined();

      // The repository is unreachable from the start: nothing applied, no namespace yet.
      renameSync(repo.dir, away);
      for (let i = 0; i < 3; i++) {
        expect(await h.reconciler.sync()).toMatchObject({ kind: "failed", stage: "fetch" });
      }
      let events = await warnings(h, "FetchFailed");
      expect(events).toHaveLength(1);
      expect(String(events[0]?.message)).toMatch(/^cannot fetch the watched ref: .+\(ERR_\w+\)$/);
      expect(events[0]?.involvedObject).toMatchObject({
        kind: "ConfigMap",
        name: "mcpfleet-inventory",
      });

      // Back: the sync succeeds; a later outage is a new failure and is recorded again, once.
      renameSync(away, repo.dir);
      expect((await h.reconciler.sync()).kind).toBe("applied");
      renameSync(repo.dir, away);
      expect((await h.reconciler.sync()).kind).toBe("failed");
      expect((await h.reconciler.sync()).kind).toBe("failed");
      events = await warnings(h, "FetchFailed");
      expect(events).toHaveLength(2);
      renameSync(away, repo.dir);
      expect(await warnings(h, "ValidationFailed")).toEqual([]);
      h.client.close();
    }, 30_000);

    it("a dry run records no Events", async () => {
      const repo = exampleRepo();
      commitFiles(repo.dir, { "fleet/broken.yaml": "kind: [\n" }, "break");
      const h = harness(clusterKubeconfig()!, repo.dir, testNamespace(clusterKubeconfig()!));
      const dry = new Reconciler({
        source: h.source,
        applier: h.applier,
        status: h.status,
        dryRun: true,
      });
      expect((await dry.sync()).kind).toBe("invalid");
      expect(await h.list("Event").catch(() => [])).toEqual([]);
      h.client.close();
    }, 30_000);

    it("says an applied revision's warnings once, and refuses one with a resource that renders nothing", async () => {
      const repo = exampleRepo();
      const h = harness(clusterKubeconfig()!, repo.dir, testNamespace(clusterKubeconfig()!));
      expect((await h.reconciler.sync()).kind).toBe("applied");
      const gatewayFile = join(EXAMPLES, "virtualmcpserver-engineering-gateway.yaml");
      const gateway = readFileSync(gatewayFile, "utf8");
      const awsBackend = [
        "      github:",
        "        type: external_auth_config_ref",
        "        externalAuthConfigRef:",
        "          name: aws-mcp",
      ].join("\n");
      const warned = commitFiles(
        repo.dir,
        {
          "fleet/virtualmcpserver-engineering-gateway.yaml": gateway.replace(
            / {6}github:\n(?: {8}.*\n){3}/,
            `${awsBackend}\n`,
          ),
        },
        "aws backend",
      );
      expect((await h.reconciler.sync()).kind).toBe("applied");
      // A drift-correction pass renders the same tree again: nothing new is said.
      expect((await h.reconciler.sync({ force: true })).kind).toBe("applied");
      const events = await warnings(h, "RevisionWarnings");
      expect(events).toHaveLength(1);
      expect(String(events[0]!.message)).toContain(warned.slice(0, 12));
      expect(String(events[0]!.message)).toMatch(
        /virtualmcpserver-engineering-gateway\.yaml:\d+:\d+: .*sent without credentials/,
      );

      // OIDC settings in a ConfigMap cannot be rendered: that server would render nothing, and
      // applying the rest would prune what it rendered before. The revision is refused.
      const stdio = readFileSync(join(EXAMPLES, "mcpserver-stdio.yaml"), "utf8");
      const oidc = "  oidcConfig:\n    type: configMap\n    configMap:\n      name: oidc\n";
      commitFiles(
        repo.dir,
        { "fleet/mcpserver-stdio.yaml": `${stdio.trimEnd()}\n${oidc}` },
        "oidc",
      );
      const refused = await h.reconciler.sync();
      expect(refused.kind).toBe("invalid");
      const failed = await warnings(h, "ValidationFailed");
      expect(failed).toHaveLength(1);
      expect(String(failed[0]!.message)).toMatch(/renders nothing/);
      expect(String(failed[0]!.message)).toMatch(/stays in place/);
      h.client.close();
    }, 60_000);
  },
);

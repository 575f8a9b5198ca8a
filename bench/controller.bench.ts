// The cluster target on a repository of 1,000 custom resources (about 5,000 rendered objects)
// against the Kubernetes API double: the first full apply, then a no-op poll (a new commit that
// changes nothing rendered) with the write requests it made (target 0) and its time as a share of
// the first apply's (target <= 0.05). A no-op commit leaves the watched directory's Git tree as it
// was, so nothing is rendered; a commit that edits the files without changing any rendered object
// is rendered and compared with the inventory's hashes (reported too).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { stringify } from "yaml";
import { ClusterApplier } from "../src/controller/cluster-applier.js";
import { GitSource } from "../src/controller/git-source.js";
import { KubeClient } from "../src/controller/kube-client.js";
import { Reconciler } from "../src/controller/reconciler.js";
import { ControllerStatus } from "../src/controller/status.js";
import { commitFiles, makeRepo } from "../test/support/git-server.js";
import { startKubeApi } from "../test/support/kube-api/index.js";

const NAMESPACES = 4;
const RESOURCES = 1000;
/** Tool configs and groups per namespace: 400 configuration resources, 600 MCPServers. */
const CONFIGS = 50;

function doc(kind: string, name: string, namespace: string, spec: unknown): string {
  return stringify({
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind,
    metadata: { name, namespace },
    spec,
  });
}

function repository(): Record<string, string> {
  const files: Record<string, string> = { "README.md": "fleet\n" };
  let count = 0;
  for (let n = 0; n < NAMESPACES; n++) {
    const ns = `team-${n}`;
    const docs: string[] = [];
    for (let i = 0; i < CONFIGS; i++) {
      docs.push(doc("MCPToolConfig", `tools-${i}`, ns, { toolsFilter: [`get_${i}`, `list_${i}`] }));
      docs.push(doc("MCPGroup", `group-${i}`, ns, { description: `group ${i}` }));
      count += 2;
    }
    files[`fleet/${ns}/config.yaml`] = docs.join("---\n");
  }
  const servers = RESOURCES - count;
  const perNs: string[][] = Array.from({ length: NAMESPACES }, () => []);
  for (let i = 0; i < servers; i++) {
    const ns = i % NAMESPACES;
    perNs[ns]!.push(
      doc("MCPServer", `server-${i}`, `team-${ns}`, {
        image: `ghcr.io/example/server-${i}:1.0.${i}`,
        transport: i % 2 === 0 ? "streamable-http" : "sse",
        proxyPort: 8080,
        mcpPort: 8081,
        env: [{ name: "LOG_LEVEL", value: "info" }],
        toolConfigRef: { name: `tools-${i % CONFIGS}` },
        groupRef: `group-${i % CONFIGS}`,
      }),
    );
  }
  perNs.forEach((docs, n) => (files[`fleet/team-${n}/servers.yaml`] = docs.join("---\n")));
  return files;
}

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-bench-controller-"));
const api = await startKubeApi();
try {
  const work = join(dir, "repo");
  makeRepo(work, repository());
  const client = KubeClient.fromFile(api.kubeconfigPath);
  const source = new GitSource({
    url: pathToFileURL(work).href,
    ref: { branch: "main" },
    path: "fleet",
    cacheDir: join(dir, "cache"),
  });
  const applier = new ClusterApplier({
    client,
    fieldManager: "mcpfleet",
    prune: true,
    forceRecreate: false,
    namespace: "mcpfleet-system",
  });
  const status = new ControllerStatus(source.refName, applier.target);
  const reconciler = new Reconciler({ source, applier, status });

  let t = performance.now();
  const first = await reconciler.sync();
  const firstMs = performance.now() - t;
  if (first.kind !== "applied") throw new Error(`first apply: ${JSON.stringify(first)}`);
  const objects = first.result.applied;
  const firstWrites = api.requests.filter((r) => r.method !== "GET").length;

  commitFiles(work, { "README.md": "fleet, documented\n" }, "docs only");
  api.resetRequests();
  t = performance.now();
  const noop = await reconciler.sync();
  const noopMs = performance.now() - t;
  if (noop.kind !== "applied") throw new Error(`no-op poll: ${JSON.stringify(noop)}`);
  const noopWrites = api.requests.filter((r) => r.method !== "GET").length;
  const noopReads = api.requests.length - noopWrites;

  // A commit inside the watched directory that renders the same objects (a comment): validated,
  // synthesized and compared with the inventory's hashes, still without writes.
  commitFiles(
    work,
    { "fleet/team-0/config.yaml": `# reviewed\n${repository()["fleet/team-0/config.yaml"]}` },
    "comment",
  );
  api.resetRequests();
  t = performance.now();
  const rendered = await reconciler.sync();
  const renderMs = performance.now() - t;
  if (rendered.kind !== "applied") throw new Error(`comment poll: ${JSON.stringify(rendered)}`);
  const renderWrites = api.requests.filter((r) => r.method !== "GET").length;

  const ratio = noopMs / firstMs;
  console.log(
    `bench: controller-first-apply ${(firstMs / 1000).toFixed(2)} s ratio=1.00 (${RESOURCES} custom resources, ${objects} objects applied with ${firstWrites} write requests)`,
  );
  console.log(
    `bench: controller-noop-poll ${(noopMs / 1000).toFixed(3)} s ratio=${ratio.toFixed(3)} (no-op poll / first apply, target <= 0.05; ${noopReads} read requests)`,
  );
  console.log(
    `bench: controller-noop-writes ${noopWrites} requests ratio=${(noopWrites / Math.max(1, firstWrites)).toFixed(3)} (write requests of the no-op poll / of the first apply, target 0)`,
  );
  console.log(
    `bench: controller-noop-render ${(renderMs / 1000).toFixed(3)} s ratio=${(renderMs / firstMs).toFixed(3)} (poll of a commit that changes the watched files but no rendered object / first apply; ${renderWrites} write requests)`,
  );
  client.close();
} finally {
  await api.stop();
  rmSync(dir, { recursive: true, force: true });
}

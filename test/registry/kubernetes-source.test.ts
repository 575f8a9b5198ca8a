// The kubernetes source's list and watch through the shared Kubernetes client, against a small
// stand-in for the API server on loopback (the real one is exercised by test/cluster/): pages
// followed, kinds whose CRD is absent skipped, watches resumed from the last version seen.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/infra/kube/client.js";
import { kubeconfigYaml } from "../support/cluster/control-plane.js";
import {
  kubeNamespaces,
  listKubeEntries,
  watchKube,
} from "../../src/registry/sources/kubernetes.js";

const BASE = "/apis/toolhive.stacklok.dev/v1alpha1/namespaces/team/mcpservers";

function exported(name: string, rv: string) {
  return {
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind: "MCPServer",
    metadata: {
      name,
      namespace: "team",
      resourceVersion: rv,
      annotations: {
        "toolhive.stacklok.dev/registry-export": "true",
        "toolhive.stacklok.dev/registry-url": `https://${name}.example/mcp`,
      },
    },
  };
}

let server: Server;
let dir: string;
let kube: KubeClient;
const watches: URLSearchParams[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== BASE) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", code: 404, reason: "NotFound", message: "no" }));
      return;
    }
    if (url.searchParams.get("watch") === "true") {
      watches.push(url.searchParams);
      res.writeHead(200, { "content-type": "application/json" });
      if (watches.length === 1) {
        // The first watch: one object, then the server ends it.
        res.end(JSON.stringify({ type: "ADDED", object: exported("a", "7") }) + "\n");
      } else {
        // Later ones: a bookmark only, and held open.
        const bookmark = { kind: "MCPServer", metadata: { resourceVersion: "9" } };
        res.write(JSON.stringify({ type: "BOOKMARK", object: bookmark }) + "\n");
      }
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    const page1 = url.searchParams.get("continue") === null;
    res.end(
      JSON.stringify({
        items: page1
          ? [exported("b", "3"), { metadata: { name: "hidden" } }]
          : [exported("a", "2")],
        metadata: page1 ? { continue: "next" } : {},
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), "kube-source-"));
  const config = join(dir, "kubeconfig");
  writeFileSync(
    config,
    kubeconfigYaml(`http://127.0.0.1:${port}`, undefined, { token: "t" }, "team"),
  );
  kube = KubeClient.fromFile(config);
});

afterAll(() => {
  kube.close();
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("kubernetes source", () => {
  it("reads the context's namespace when none is configured", () => {
    const saved = process.env.POD_NAMESPACE;
    delete process.env.POD_NAMESPACE;
    try {
      expect(kubeNamespaces(kube, undefined)).toEqual(["team"]);
      expect(kubeNamespaces(kube, ["x", "y"])).toEqual(["x", "y"]);
    } finally {
      if (saved !== undefined) process.env.POD_NAMESPACE = saved;
    }
  });

  it("lists every page, skips unexported objects and kinds the server does not serve", async () => {
    const { entries, problems } = await listKubeEntries(kube, ["team"]);
    expect(entries.map((e) => e.name)).toEqual([
      "com.toolhive.k8s.team/a",
      "com.toolhive.k8s.team/b",
    ]);
    expect(problems).toEqual([]);
  });

  it("resumes a watch the server ended from the last version it saw", async () => {
    let changes = 0;
    const stop = watchKube(kube, ["team"], () => changes++, 10);
    try {
      for (let i = 0; i < 100 && watches.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(watches.length).toBeGreaterThanOrEqual(2);
      expect(watches[0]?.get("resourceVersion")).toBeNull();
      expect(watches[1]?.get("resourceVersion")).toBe("7");
      expect(changes).toBe(1); // the ADDED event; the bookmark is no change
    } finally {
      stop();
    }
  });
});

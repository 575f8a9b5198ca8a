// The shared Kubernetes client against a stand-in API server on loopback (the real one is
// exercised by test/cluster/): a silent server fails the request at its time limit as a
// retryable 503, a Status body becomes the error, a watch's ERROR event ends the watch with its
// code, and an aborted watch resolves with the last version seen.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeApiError, KubeClient } from "../../src/infra/kube/client.js";
import { kubeconfigYaml } from "../support/cluster/control-plane.js";

let server: Server;
let dir: string;
let kube: KubeClient;
/** Discovery requests for example.dev/v1 answered so far. */
let discoveries = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === "/silent") return; // accepted, never answered
    if (url.pathname === "/apis/example.dev/v1") {
      discoveries++;
      const resources = [{ name: "widgets", kind: "Widget", namespaced: true }];
      setTimeout(() => json(200, { kind: "APIResourceList", resources }), 50);
      return;
    }
    if (url.pathname === "/forbidden") {
      return json(403, { kind: "Status", code: 403, reason: "Forbidden", message: "no way" });
    }
    if (url.pathname === "/gone" && url.searchParams.get("watch") === "true") {
      res.writeHead(200, { "content-type": "application/json" });
      const status = { kind: "Status", code: 410, reason: "Expired", message: "too old" };
      res.end(JSON.stringify({ type: "ERROR", object: status }) + "\n");
      return;
    }
    if (url.pathname === "/open" && url.searchParams.get("watch") === "true") {
      res.writeHead(200, { "content-type": "application/json" });
      const object = { kind: "ConfigMap", metadata: { name: "a", resourceVersion: "42" } };
      res.write(JSON.stringify({ type: "ADDED", object }) + "\n");
      return; // held open
    }
    json(200, { ok: true, token: req.headers.authorization });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), "kube-client-"));
  const config = join(dir, "kubeconfig");
  writeFileSync(
    config,
    kubeconfigYaml(`http://127.0.0.1:${port}`, undefined, { token: "secret" }, "team"),
  );
  kube = KubeClient.fromFile(config, { requestTimeoutMs: 200 });
});

afterAll(() => {
  kube.close();
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function apiError(p: Promise<unknown>): Promise<KubeApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KubeApiError);
  return err as KubeApiError;
}

describe("Kubernetes client", () => {
  it("sends the kubeconfig's credentials and reads its namespace", async () => {
    expect(await kube.request("GET", "/ok")).toEqual({ ok: true, token: "Bearer secret" });
    expect(kube.defaultNamespace()).toBe("team");
  });

  it("fails a request the server never answers at its time limit, as a retryable 503", async () => {
    const err = await apiError(kube.request("GET", "/silent"));
    expect(err.status).toBe(503);
    expect(err.code).toBe("ERR_KUBE_API");
    expect(err.message).toMatch(/no response in 200 ms/);
  });

  it("asks discovery once for requests sent together, and again for a kind it did not list", async () => {
    const infos = await Promise.all(
      Array.from({ length: 10 }, () => kube.resource("example.dev/v1", "Widget")),
    );
    expect(infos.every((i) => i?.name === "widgets" && i.namespaced)).toBe(true);
    expect(discoveries).toBe(1);
    expect(await kube.resource("example.dev/v1", "Widget")).toBeDefined();
    expect(discoveries).toBe(1);
    // A kind the group version did not serve then may be served now (a new CRD).
    expect(await kube.resource("example.dev/v1", "Gadget")).toBeUndefined();
    expect(discoveries).toBe(2);
  });

  it("turns a Status answer into the error", async () => {
    const err = await apiError(kube.request("GET", "/forbidden"));
    expect(err).toMatchObject({ status: 403, reason: "Forbidden", message: "no way" });
  });

  it("ends a watch on an ERROR event with its code", async () => {
    const err = await apiError(kube.watch("/gone", {}, () => undefined));
    expect(err).toMatchObject({ status: 410, reason: "Expired" });
  });

  it("resolves an aborted watch with the last version it saw", async () => {
    const stop = new AbortController();
    const events: string[] = [];
    const version = kube.watch("/open", { signal: stop.signal }, (e) => {
      events.push(e.type);
      stop.abort();
    });
    expect(await version).toBe("42");
    expect(events).toEqual(["ADDED"]);
  });
});

// A Kubernetes API server double for tests: real wire protocol over plain HTTP on 127.0.0.1,
// used by @kubernetes/client-node unchanged through a kubeconfig. See README.md for what it
// emulates and what it does not.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { Cluster } from "./cluster.js";
import { ApiError, injected, methodNotAllowed, unauthorized } from "./errors.js";
import {
  type Call,
  type Reply,
  handleCreate,
  handleDelete,
  handleDeleteCollection,
  handleGet,
  handleList,
  handlePatch,
  handleUpdate,
} from "./handlers.js";
import { groupVersion, storageKey } from "./resource-type.js";
import { type Route, route, verbOf } from "./router.js";
import { type KObject, type RecordedRequest, type Verb, clone } from "./types.js";
import { serveWatch } from "./watch.js";

export type { KObject, RecordedRequest, Verb } from "./types.js";

/** Which requests a fault applies to: a predicate, or fields that must all match. */
export type RequestMatcher =
  | ((request: RecordedRequest) => boolean)
  | { method?: string; verb?: Verb | Verb[]; path?: string | RegExp };

export interface FaultOptions {
  /** Status message (a default per code otherwise). */
  message?: string;
  /** Retry-After seconds (429 and 503 get 1 by default). */
  retryAfterSeconds?: number;
}

export interface KubeApiOptions {
  /** CRDs installed and Established before the server starts answering. */
  crds?: object[];
  /** Delay before a newly written CRD becomes Established (default 0: the next event-loop turn). */
  establishDelayMs?: number;
  /** How long a deleted namespace stays Terminating before its contents and it go (default 0). */
  namespaceDeletionDelayMs?: number;
  /** Bearer token clients must send (the kubeconfig carries it). */
  token?: string;
  /** Watch events kept for watches that resume from a resourceVersion (default 100000). */
  eventLogLimit?: number;
  /** Delay added to every request, in milliseconds. */
  latencyMs?: number;
}

export interface KubeApi {
  url: string;
  kubeconfigPath: string;
  /** A KubeConfig loaded from kubeconfigPath. */
  kubeConfig(): KubeConfig;
  /** Every request received, in order (method, path, contentType, query, verb, status). */
  requests: RecordedRequest[];
  resetRequests(): void;
  /**
   * The next `times` requests matching `matcher` fail with `status` and a Status body
   * (500 InternalError, 409 Conflict, 429 TooManyRequests with Retry-After, ...); status 0 cuts
   * the connection without a response.
   */
  failNext(matcher: RequestMatcher, status: number, times?: number, options?: FaultOptions): void;
  /** Drops pending faults. */
  clearFaults(): void;
  setLatency(ms: number): void;
  /** Stored objects (copies), optionally of one apiVersion/kind and namespace. */
  objects(filter?: { apiVersion?: string; kind?: string; namespace?: string }): KObject[];
  /** Forgets the watch event log: watches resuming from an older resourceVersion get 410. */
  compactEvents(): void;
  /** Closes every open watch (clients see the stream end and re-watch). */
  closeWatches(): void;
  stop(): Promise<void>;
}

interface Fault {
  matches: (r: RecordedRequest) => boolean;
  status: number;
  remaining: number;
  options: FaultOptions;
}

function matcherFn(matcher: RequestMatcher): (r: RecordedRequest) => boolean {
  if (typeof matcher === "function") return matcher;
  return (r) => {
    if (matcher.method !== undefined && r.method !== matcher.method.toUpperCase()) return false;
    if (matcher.verb !== undefined) {
      const verbs = Array.isArray(matcher.verb) ? matcher.verb : [matcher.verb];
      if (!verbs.includes(r.verb)) return false;
    }
    if (matcher.path !== undefined) {
      if (typeof matcher.path === "string" ? r.path !== matcher.path : !matcher.path.test(r.path))
        return false;
    }
    return true;
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, reply: Reply): void {
  const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "Content-Type":
      typeof reply.body === "string" ? "text/plain; charset=utf-8" : "application/json",
    "Content-Length": Buffer.byteLength(text),
    ...reply.headers,
  });
  res.end(text);
}

function writeKubeconfig(dir: string, url: string, token: string): string {
  const path = join(dir, "kubeconfig");
  const text = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "  - name: kube-api-double",
    "    cluster:",
    `      server: ${url}`,
    // client-node refuses http:// servers unless TLS verification is marked as skipped.
    "      insecure-skip-tls-verify: true",
    "users:",
    "  - name: tester",
    "    user:",
    `      token: ${token}`,
    "contexts:",
    "  - name: kube-api-double",
    "    context:",
    "      cluster: kube-api-double",
    "      user: tester",
    "      namespace: default",
    "current-context: kube-api-double",
    "",
  ].join("\n");
  writeFileSync(path, text);
  return path;
}

export async function startKubeApi(opts: KubeApiOptions = {}): Promise<KubeApi> {
  const token = opts.token ?? "kube-api-double-token";
  let latency = opts.latencyMs ?? 0;
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  const watches = new Set<() => void>();
  let address = "127.0.0.1";
  const cluster = new Cluster({
    establishDelayMs: opts.establishDelayMs ?? 0,
    namespaceDeletionDelayMs: opts.namespaceDeletionDelayMs ?? 0,
    eventLogLimit: opts.eventLogLimit ?? 100_000,
    serverAddress: () => address,
  });
  for (const crd of opts.crds ?? []) cluster.preinstall(crd as KObject);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const query = Object.fromEntries(url.searchParams);
    const contentType = req.headers["content-type"];
    const method = (req.method ?? "GET").toUpperCase();
    let routed: Route | undefined;
    let routeError: unknown;
    try {
      routed = route(cluster.registry, url.pathname);
    } catch (err) {
      routeError = err;
    }
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      contentType,
      query,
      verb: verbOf(method, routed, query, contentType),
    };
    requests.push(record);
    const body = await readBody(req);
    res.on("close", () => (record.status ??= res.headersSent ? res.statusCode : 0));
    const reply = (r: Reply): void => {
      record.status = r.status;
      sendJson(res, r);
    };
    const fail = (err: unknown): void => {
      if (err instanceof ApiError) {
        reply({ status: err.code, body: err.toStatus(), headers: err.headers });
        return;
      }
      const error = new ApiError(
        500,
        "InternalError",
        `Internal error occurred: ${(err as Error).message}`,
      );
      reply({ status: 500, body: error.toStatus() });
    };

    if (latency > 0) await new Promise((r) => setTimeout(r, latency));
    const fault = faults.find((f) => f.remaining > 0 && f.matches(record));
    if (fault) {
      fault.remaining--;
      if (fault.remaining === 0) faults.splice(faults.indexOf(fault), 1);
      record.injected = true;
      if (fault.status === 0) {
        record.status = 0;
        req.socket.destroy();
        return;
      }
      fail(injected(fault.status, fault.options.message, fault.options.retryAfterSeconds));
      return;
    }
    try {
      if (req.headers.authorization !== `Bearer ${token}`) throw unauthorized();
      if (routeError !== undefined || routed === undefined) throw routeError;
      if (routed.kind === "meta") return reply({ status: 200, body: routed.body });
      if (routed.kind === "discovery") {
        if (method !== "GET") throw methodNotAllowed();
        return reply({ status: 200, body: cluster.registry.discovery(routed.path) });
      }
      const call: Call = {
        method,
        request: routed.request,
        query,
        contentType: contentType ?? "application/json",
        body,
        userAgent: req.headers["user-agent"],
      };
      switch (record.verb) {
        case "get":
          return reply(handleGet(cluster, call));
        case "list":
          return reply(handleList(cluster, call));
        case "watch":
          record.status = 200;
          serveWatch(cluster, routed.request, query, res, (close) => {
            watches.add(close);
            return () => watches.delete(close);
          });
          return;
        case "create":
          return reply(handleCreate(cluster, call));
        case "update":
          return reply(handleUpdate(cluster, call));
        case "patch":
        case "apply":
          return reply(handlePatch(cluster, call));
        case "delete":
          return reply(handleDelete(cluster, call));
        case "deletecollection":
          return reply(handleDeleteCollection(cluster, call));
        default:
          throw methodNotAllowed();
      }
    } catch (err) {
      if (res.headersSent) {
        res.end();
        return;
      }
      fail(err);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  address = `127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), "kube-api-"));
  const kubeconfigPath = writeKubeconfig(dir, url, token);

  const closeWatches = (): void => {
    for (const close of [...watches]) close();
  };

  return {
    url,
    kubeconfigPath,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      return kc;
    },
    requests,
    resetRequests() {
      requests.length = 0;
    },
    failNext(matcher, status, times = 1, options = {}) {
      faults.push({ matches: matcherFn(matcher), status, remaining: times, options });
    },
    clearFaults() {
      faults.length = 0;
    },
    setLatency(ms) {
      latency = ms;
    },
    objects(filter = {}) {
      const out: KObject[] = [];
      for (const type of cluster.registry.all()) {
        if (filter.kind !== undefined && type.kind !== filter.kind) continue;
        const version = filter.apiVersion?.split("/").pop() ?? type.versions[0]!;
        if (
          filter.apiVersion !== undefined &&
          groupVersion(type.group, version) !== filter.apiVersion
        )
          continue;
        if (!type.versions.includes(version)) continue;
        for (const obj of cluster.store.list(storageKey(type), filter.namespace))
          out.push(cluster.present(type, version, obj));
      }
      return out.map(clone);
    },
    compactEvents() {
      cluster.store.compact();
    },
    closeWatches,
    async stop() {
      cluster.stop();
      closeWatches();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

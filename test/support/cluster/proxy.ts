// A small HTTPS proxy in front of a real API server, for what the server will not do on demand:
// it records every request (method, path, verb, status), answers chosen requests with an error
// instead (500, 409, 429 with Retry-After...), accepts some and never answers, cuts connections,
// and drops watches. It forwards everything else with the upstream kubeconfig's credentials, so
// its clients need none; the kubeconfig it writes trusts its own self-signed certificate.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { selfSignedCertificate } from "../tls.js";

export type Verb =
  | "get"
  | "list"
  | "watch"
  | "create"
  | "update"
  | "patch"
  | "apply"
  | "delete"
  | "deletecollection";

export interface ProxiedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  verb: Verb;
  contentType: string | undefined;
  /** The upstream's status, the injected one, or 0 (cut or never answered). */
  status: number;
  injected: boolean;
}

export type Matcher =
  ((r: ProxiedRequest) => boolean) | { method?: string; verb?: Verb; path?: string | RegExp };

interface Fault {
  match: (r: ProxiedRequest) => boolean;
  /** HTTP status to answer with; 0 cuts the connection; "hang" never answers. */
  status: number | "hang";
  times: number;
  message?: string;
  retryAfterSeconds?: number;
}

export interface ApiProxy {
  url: string;
  kubeconfigPath: string;
  requests: ProxiedRequest[];
  resetRequests(): void;
  failNext(
    match: Matcher,
    status: number,
    times?: number,
    opts?: { message?: string; retryAfterSeconds?: number },
  ): void;
  /** The next `times` matching requests are accepted and never answered. */
  hangNext(match: Matcher, times?: number): void;
  clearFaults(): void;
  /** Delays every request (or those matching) by `ms` before it is forwarded (0: none). */
  setLatency(ms: number, match?: Matcher): void;
  /** Ends every watch stream in flight, as a server restart or a load balancer does. */
  dropWatches(): number;
  /** Write requests that reached the server (everything but GET). */
  writes(): number;
  stop(): Promise<void>;
}

const REASONS: Record<number, string> = {
  400: "BadRequest",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** The Kubernetes verb of a request, from its method, path and content type. */
export function verbOf(
  method: string,
  path: string,
  query: URLSearchParams,
  contentType?: string,
): Verb {
  const parts = path.split("/").filter((p) => p !== "");
  // /api/v1/... or /apis/GROUP/VERSION/...
  const rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
  const namespaced = rest[0] === "namespaces" && rest.length >= 3;
  const named = (namespaced ? rest.length - 2 : rest.length) >= 2;
  switch (method) {
    case "GET":
      return query.get("watch") === "true" || query.get("watch") === "1"
        ? "watch"
        : named
          ? "get"
          : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return contentType?.startsWith("application/apply-patch") === true ? "apply" : "patch";
    case "DELETE":
      return named ? "delete" : "deletecollection";
    default:
      return "get";
  }
}

function matcherOf(m: Matcher): (r: ProxiedRequest) => boolean {
  if (typeof m === "function") return m;
  return (r) =>
    (m.method === undefined || m.method === r.method) &&
    (m.verb === undefined || m.verb === r.verb) &&
    (m.path === undefined ||
      (typeof m.path === "string" ? r.path === m.path : m.path.test(r.path)));
}

/**
 * Starts the proxy in front of the cluster of `upstreamKubeconfig`; with `token`, requests go
 * upstream as that bearer token's identity instead of the kubeconfig's user.
 */
export async function startApiProxy(
  upstreamKubeconfig: string,
  opts: { token?: string } = {},
): Promise<ApiProxy> {
  const kc = new KubeConfig();
  kc.loadFromFile(upstreamKubeconfig);
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error(`${upstreamKubeconfig} has no current cluster`);
  const upstream = new URL(cluster.server);
  const creds: https.RequestOptions = { headers: {} };
  await kc.applyToHTTPSOptions(creds);
  const asToken = opts.token !== undefined;
  const agent = new https.Agent({
    keepAlive: true,
    ...(creds.ca !== undefined ? { ca: creds.ca } : {}),
    ...(creds.cert !== undefined && !asToken ? { cert: creds.cert } : {}),
    ...(creds.key !== undefined && !asToken ? { key: creds.key } : {}),
    ...(creds.rejectUnauthorized !== undefined
      ? { rejectUnauthorized: creds.rejectUnauthorized }
      : {}),
  });
  const upstreamHeaders: Record<string, string> = asToken
    ? { authorization: `Bearer ${opts.token}` }
    : (creds.headers as Record<string, string>);

  const dir = mkdtempSync(join(tmpdir(), "mcpfleet-api-proxy-"));
  const tls = selfSignedCertificate(dir);
  const requests: ProxiedRequest[] = [];
  let faults: Fault[] = [];
  let latencyMs = 0;
  let latencyFor: (r: ProxiedRequest) => boolean = () => true;
  const watches = new Set<ServerResponse>();
  const hung = new Set<Socket>();
  const sockets = new Set<Socket>();

  const takeFault = (r: ProxiedRequest): Fault | undefined => {
    const f = faults.find((x) => x.times > 0 && x.match(r));
    if (f !== undefined) f.times--;
    return f;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "https://proxy");
    const method = req.method ?? "GET";
    const contentType = req.headers["content-type"];
    const verb = verbOf(method, url.pathname, url.searchParams, contentType);
    const probe = { method, path: url.pathname, query: url.searchParams, verb, contentType };
    if (latencyMs > 0 && latencyFor({ ...probe, status: 0, injected: false })) {
      req.pause();
      setTimeout(() => forward(req, res), latencyMs);
    } else forward(req, res);
  };

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "https://proxy");
    const contentType = req.headers["content-type"];
    const record: ProxiedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      verb: verbOf(req.method ?? "GET", url.pathname, url.searchParams, contentType),
      contentType,
      status: 0,
      injected: false,
    };
    requests.push(record);
    const fault = takeFault(record);
    if (fault !== undefined) {
      record.injected = true;
      req.resume();
      if (fault.status === "hang") {
        hung.add(req.socket);
        return;
      }
      if (fault.status === 0) {
        req.socket.destroy();
        return;
      }
      record.status = fault.status;
      const reason = REASONS[fault.status] ?? "InternalError";
      const headers: Record<string, string> = { "Content-Type": "application/json" };
      if (fault.retryAfterSeconds !== undefined)
        headers["Retry-After"] = String(fault.retryAfterSeconds);
      res.writeHead(fault.status, headers);
      res.end(
        JSON.stringify({
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: fault.message ?? `injected ${fault.status} ${reason}`,
          reason,
          code: fault.status,
          ...(fault.retryAfterSeconds !== undefined
            ? { details: { retryAfterSeconds: fault.retryAfterSeconds } }
            : {}),
        }),
      );
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined && k !== "authorization" && k !== "host" && k !== "connection")
        headers[k] = v;
    }
    const up = https.request(
      {
        protocol: "https:",
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: `${upstream.pathname.replace(/\/$/, "")}${req.url ?? "/"}`,
        headers: { ...headers, ...upstreamHeaders },
        agent,
      },
      (ur) => {
        record.status = ur.statusCode ?? 0;
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        if (record.verb === "watch") {
          watches.add(res);
          res.on("close", () => watches.delete(res));
        }
        ur.pipe(res);
        res.on("close", () => ur.destroy());
      },
    );
    up.on("error", () => req.socket.destroy());
    req.pipe(up);
  };

  const server = https.createServer(
    { key: readFileSync(tls.key), cert: readFileSync(tls.cert) },
    handle,
  );
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  const port = typeof addr === "object" && addr !== null ? addr.port : 0;
  const url = `https://127.0.0.1:${port}`;
  const kubeconfigPath = join(dir, "kubeconfig");
  const ctx = kc.getContextObject(kc.getCurrentContext());
  writeFileSync(
    kubeconfigPath,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: proxy",
      "  cluster:",
      `    server: ${url}`,
      `    certificate-authority-data: ${readFileSync(tls.cert).toString("base64")}`,
      "users:",
      "- name: proxy",
      "  user:",
      // The proxy authenticates upstream; this token only keeps clients from sending none.
      `    token: proxy-${randomBytes(8).toString("hex")}`,
      "contexts:",
      "- name: proxy",
      "  context:",
      "    cluster: proxy",
      "    user: proxy",
      `    namespace: ${ctx?.namespace ?? "default"}`,
      "current-context: proxy",
      "",
    ].join("\n"),
    { mode: 0o600 },
  );

  return {
    url,
    kubeconfigPath,
    requests,
    resetRequests: () => void requests.splice(0),
    failNext(match, status, times = 1, opts = {}) {
      faults.push({ match: matcherOf(match), status, times, ...opts });
    },
    hangNext(match, times = 1) {
      faults.push({ match: matcherOf(match), status: "hang", times });
    },
    clearFaults: () => void (faults = []),
    setLatency(ms, match) {
      latencyMs = ms;
      latencyFor = match === undefined ? () => true : matcherOf(match);
    },
    dropWatches() {
      const n = watches.size;
      for (const w of watches) w.socket?.destroy();
      return n;
    },
    writes: () => requests.filter((r) => r.method !== "GET" && r.status > 0).length,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

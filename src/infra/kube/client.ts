// The one Kubernetes client, shared by the controller and the registry's kubernetes source.
// A small JSON client for the Kubernetes API: credentials, CA and server come from a kubeconfig
// loaded by @kubernetes/client-node (token, client certificate, exec and in-cluster auth all
// work), requests go over one keep-alive connection pool. Generic objects are addressed through
// discovery (apiVersion + kind -> resource path), as KubernetesObjectApi does, but bodies are sent
// and read as plain JSON: no typed (de)serialization that would drop fields it does not know,
// and the apply-patch, merge-patch and /status requests the applier needs.
import { existsSync } from "node:fs";
import type * as HttpTypes from "node:http";
import type * as HttpsTypes from "node:https";
import { homedir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { type ErrorCode, McpfleetError } from "../../errors.js";
import { nodeHttp, nodeHttps } from "../node-http.js";

export interface KubeObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** A live object as the API server returns it. */
export interface LiveObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Record<string, unknown>[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/**
 * A failed API request, with the `Status` body the server sent. `status` is the API server's
 * HTTP status (retries and 404s are decided on it), so this is not an McpfleetError, whose
 * status is the one this program answers with; its code is the catalogue's all the same.
 */
export class KubeApiError extends Error {
  readonly code = "ERR_KUBE_API" satisfies ErrorCode;
  readonly status: number;
  readonly reason: string | undefined;
  readonly causes: StatusCause[];
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    message: string,
    reason: string | undefined,
    causes: StatusCause[],
    headers: Record<string, string>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "KubeApiError";
    this.status = status;
    this.reason = reason;
    this.causes = causes;
    this.headers = headers;
  }
}

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  /** Accept header (default application/json); e.g. metadata only, as PartialObjectMetadata. */
  accept?: string;
}

/**
 * How long a request may go without any byte from the server before it fails (and, as a server
 * error, is retried): a connection that is accepted and never answered must not hang a
 * reconciliation forever.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

interface ResourceInfo {
  name: string;
  namespaced: boolean;
}

/** True when $KUBECONFIG, ~/.kube/config or the in-cluster service account is there to load. */
function hasDefaultKubeConfig(): boolean {
  const env = process.env.KUBECONFIG;
  if (env !== undefined && env !== "") return true;
  if (process.env.KUBERNETES_SERVICE_HOST !== undefined) return true;
  const home = homedir();
  return home !== "" && existsSync(join(home, ".kube", "config"));
}

/**
 * Loads a kubeconfig: the file given, else in-cluster or $KUBECONFIG or ~/.kube/config; with
 * `context`, that context instead of the file's current one (kubectl's --context).
 */
export function loadKubeConfig(file?: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file !== undefined) kc.loadFromFile(file);
  else if (!hasDefaultKubeConfig()) {
    // loadFromDefault would invent a cluster at http://localhost:8080; say what is missing.
    throw Object.assign(new Error("no kubeconfig found"), { code: "ENOENT" });
  } else kc.loadFromDefault();
  if (context !== undefined) {
    const names = kc.getContexts().map((c) => c.name);
    if (!names.includes(context)) {
      // A context the file lacks is a mistake on the command line.
      throw new McpfleetError(
        "ERR_USAGE",
        `it has no context "${context}"${names.length > 0 ? ` (contexts: ${names.join(", ")})` : ""}`,
      );
    }
    kc.setCurrentContext(context);
  }
  return kc;
}

/** One event of a watch stream. */
interface WatchEvent {
  type: string;
  object: LiveObject;
}

/** One line of a watch stream as its event, or the error a line not JSON or an ERROR event is. */
function parseWatchEvent(line: string, path: string): WatchEvent | KubeApiError {
  let event: WatchEvent;
  try {
    event = JSON.parse(line) as WatchEvent;
  } catch {
    return new KubeApiError(502, `watch ${path}: not a JSON event`, undefined, [], {});
  }
  if (event.type === "ERROR") {
    const st = event.object as unknown as { code?: number; message?: string; reason?: string };
    return new KubeApiError(st.code ?? 500, st.message ?? "watch error", st.reason, [], {});
  }
  return event;
}

/** The error of a watch the server refused, from its Status body or else its HTTP status. */
function refusedWatchError(status: number, body: string): KubeApiError {
  let parsed: { message?: string; reason?: string } = {};
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    /* plain text */
  }
  return new KubeApiError(status, parsed.message ?? `HTTP ${status}`, parsed.reason, [], {});
}

export class KubeClient {
  readonly kc: KubeConfig;
  readonly server: URL;
  readonly requestTimeoutMs: number;
  private agent: HttpTypes.Agent | undefined;
  private readonly discovery = new Map<string, Map<string, ResourceInfo>>();
  /** Discovery requests in flight, by group version. */
  private readonly discovering = new Map<string, Promise<Map<string, ResourceInfo> | undefined>>();
  /** Write requests sent (create, apply, patch, delete), for logs and tests. */
  writes = 0;
  /** Read requests sent (get, list, discovery; watches not counted), for logs and benchmarks. */
  reads = 0;

  constructor(kc: KubeConfig, opts: { requestTimeoutMs?: number } = {}) {
    this.kc = kc;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const cluster = kc.getCurrentCluster();
    if (cluster === null) {
      throw new McpfleetError("ERR_IO", "the kubeconfig has no current cluster");
    }
    this.server = new URL(cluster.server);
  }

  static fromFile(
    file?: string,
    opts: { requestTimeoutMs?: number; context?: string } = {},
  ): KubeClient {
    return new KubeClient(loadKubeConfig(file, opts.context), opts);
  }

  /** The namespace of the kubeconfig's current context ("default" without one). */
  defaultNamespace(): string {
    const ctx = this.kc.getContextObject(this.kc.getCurrentContext());
    return ctx?.namespace ?? "default";
  }

  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }

  /** The URL, headers and body of a request, over the client's one connection pool. */
  private async prepare(
    path: string,
    opts: RequestOptions,
  ): Promise<{ url: URL; headers: Record<string, string>; payload: Buffer | undefined }> {
    const base: HttpsTypes.RequestOptions = { headers: {} };
    await this.kc.applyToHTTPSOptions(base);
    const secure = this.server.protocol === "https:";
    // One pool for every request (the kubeconfig's own agent is not kept alive), as wide as the
    // requests the cluster target keeps in flight.
    this.agent ??= secure
      ? new (nodeHttps().Agent)({
          keepAlive: true,
          maxSockets: 32,
          ...(base.ca !== undefined ? { ca: base.ca } : {}),
          ...(base.cert !== undefined ? { cert: base.cert } : {}),
          ...(base.key !== undefined ? { key: base.key } : {}),
          ...(base.rejectUnauthorized !== undefined
            ? { rejectUnauthorized: base.rejectUnauthorized }
            : {}),
          ...(base.servername !== undefined ? { servername: base.servername } : {}),
        })
      : new (nodeHttp().Agent)({ keepAlive: true, maxSockets: 32 });
    const url = new URL(this.server.href.replace(/\/$/, "") + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, v);
    }
    const payload =
      opts.body === undefined
        ? undefined
        : Buffer.from(typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body));
    const headers: Record<string, string> = {
      ...(base.headers as Record<string, string>),
      Accept: opts.accept ?? "application/json",
      "User-Agent": "mcpfleet",
    };
    if (base.auth !== undefined && base.auth !== null) {
      headers.Authorization = `Basic ${Buffer.from(base.auth).toString("base64")}`;
    }
    if (payload !== undefined) {
      headers["Content-Type"] = opts.contentType ?? "application/json";
      headers["Content-Length"] = String(payload.length);
    }
    return { url, headers, payload };
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const { url, headers, payload } = await this.prepare(path, opts);
    if (method !== "GET") this.writes++;
    else this.reads++;
    const lib = this.server.protocol === "https:" ? nodeHttps() : nodeHttp();
    return new Promise<T>((resolve, reject) => {
      const req = lib.request(url, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          let data: unknown = text;
          try {
            data = text === "" ? undefined : JSON.parse(text);
          } catch {
            /* plain text */
          }
          if (status >= 200 && status < 300) return resolve(data as T);
          const body = (typeof data === "object" && data !== null ? data : {}) as {
            message?: string;
            reason?: string;
            details?: { causes?: StatusCause[] };
          };
          const responseHeaders: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) {
            if (typeof v === "string") responseHeaders[k] = v;
          }
          reject(
            new KubeApiError(
              status,
              body.message ?? (typeof data === "string" && data !== "" ? data : `HTTP ${status}`),
              body.reason,
              body.details?.causes ?? [],
              responseHeaders,
            ),
          );
        });
      });
      req.setTimeout(this.requestTimeoutMs, () =>
        req.destroy(new Error(`no response in ${this.requestTimeoutMs} ms`)),
      );
      req.on("error", (err) =>
        // A cut connection counts as a server error, so it is retried like one.
        reject(
          new KubeApiError(
            503,
            `${method} ${path}: ${err.message}`,
            "ServiceUnavailable",
            [],
            {},
            { cause: err },
          ),
        ),
      );
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /**
   * Watches a collection (`path`, with `query` such as a fieldSelector and the resourceVersion to
   * start after), calling `onEvent` for each event as it arrives. Resolves with the last
   * resourceVersion seen when the server ends the watch (its timeoutSeconds) or `signal` aborts;
   * rejects with KubeApiError on a refused request, an ERROR event (410 when the version is too
   * old: list again) or `requestTimeoutMs` without a byte.
   */
  async watch(
    path: string,
    opts: RequestOptions & { signal?: AbortSignal },
    onEvent: (event: { type: string; object: LiveObject }) => void,
  ): Promise<string | undefined> {
    const { url, headers } = await this.prepare(path, opts);
    url.searchParams.set("watch", "true");
    let version = opts.query?.resourceVersion;
    const lib = this.server.protocol === "https:" ? nodeHttps() : nodeHttp();
    return new Promise<string | undefined>((resolve, reject) => {
      const req = lib.request(url, { method: "GET", headers, agent: this.agent }, (res) => {
        const status = res.statusCode ?? 0;
        let pending = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (status !== 200) {
            pending += chunk;
            return;
          }
          pending += chunk;
          let newline: number;
          while ((newline = pending.indexOf("\n")) !== -1) {
            const line = pending.slice(0, newline).trim();
            pending = pending.slice(newline + 1);
            if (line === "") continue;
            const event = parseWatchEvent(line, path);
            if (event instanceof KubeApiError) {
              req.destroy();
              reject(event);
              return;
            }
            version = event.object.metadata.resourceVersion ?? version;
            onEvent(event);
          }
        });
        // A stream cut before its end (a restarted server, a load balancer) fails the watch, so
        // that the caller watches again; a clean end after `end` changes nothing.
        const cut = () => {
          if (opts.signal?.aborted === true) return;
          reject(
            new KubeApiError(
              503,
              `watch ${path}: the stream was cut`,
              "ServiceUnavailable",
              [],
              {},
            ),
          );
        };
        res.on("error", cut);
        res.on("close", () => {
          if (!res.complete) cut();
        });
        res.on("end", () => {
          if (status === 200) return resolve(version);
          reject(refusedWatchError(status, pending));
        });
      });
      const abort = () => {
        req.destroy();
        resolve(version);
      };
      if (opts.signal?.aborted === true) return abort();
      opts.signal?.addEventListener("abort", abort, { once: true });
      req.setTimeout(this.requestTimeoutMs, () =>
        req.destroy(new Error(`no event or bookmark in ${this.requestTimeoutMs} ms`)),
      );
      req.on("error", (err) => {
        if (opts.signal?.aborted === true) return;
        reject(
          new KubeApiError(503, `watch ${path}: ${err.message}`, "ServiceUnavailable", [], {}),
        );
      });
      req.on("close", () => opts.signal?.removeEventListener("abort", abort));
      req.end();
    });
  }

  /** Forgets what discovery said about an API group version (after CRDs change). */
  forget(apiVersion: string): void {
    this.discovery.delete(apiVersion);
  }

  /** The resource of a kind, from discovery; undefined when the server does not serve it. */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    const known = this.discovery.get(apiVersion);
    if (known?.has(kind) === true) return known.get(kind);
    // Requests sent at once for a group version not yet known share one discovery request.
    let pending = this.discovering.get(apiVersion);
    if (pending === undefined) {
      pending = this.discover(apiVersion).finally(() => this.discovering.delete(apiVersion));
      this.discovering.set(apiVersion, pending);
    }
    return (await pending)?.get(kind);
  }

  /** What the server serves of a group version, remembered; undefined when it serves none. */
  private async discover(apiVersion: string): Promise<Map<string, ResourceInfo> | undefined> {
    const path = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let list: { resources?: { name: string; kind: string; namespaced: boolean }[] };
    try {
      list = await this.request("GET", path);
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return undefined;
      throw err;
    }
    const kinds = new Map<string, ResourceInfo>();
    for (const r of list.resources ?? []) {
      if (!r.name.includes("/")) kinds.set(r.kind, { name: r.name, namespaced: r.namespaced });
    }
    this.discovery.set(apiVersion, kinds);
    return kinds;
  }

  /** URL path of an object (or of its kind's collection when `name` is absent). */
  async path(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name?: string,
    subresource?: string,
  ): Promise<string> {
    const info = await this.resource(apiVersion, kind);
    if (info === undefined) {
      throw new KubeApiError(
        404,
        `the server does not serve ${kind} in ${apiVersion}`,
        "NotFound",
        [],
        {},
      );
    }
    const root = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let p = root;
    if (info.namespaced && namespace !== undefined && namespace !== "") {
      p += `/namespaces/${encodeURIComponent(namespace)}`;
    }
    p += `/${info.name}`;
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    if (subresource !== undefined) p += `/${subresource}`;
    return p;
  }

  /** URL path of the object `ref` names, or of one of its subresources. */
  private objectPath(ref: KubeObjectRef, subresource?: string): Promise<string> {
    const { namespace, name } = ref.metadata;
    return this.path(ref.apiVersion, ref.kind, namespace, name, subresource);
  }

  async get(ref: KubeObjectRef): Promise<LiveObject | undefined> {
    try {
      const p = await this.objectPath(ref);
      return await this.request<LiveObject>("GET", p);
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  async list(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string; labelSelector?: string } = {},
  ): Promise<LiveObject[]> {
    const p = await this.path(apiVersion, kind, opts.namespace);
    const out: LiveObject[] = [];
    let cont: string | undefined;
    do {
      const page = await this.request<{ items?: LiveObject[]; metadata?: { continue?: string } }>(
        "GET",
        p,
        { query: { labelSelector: opts.labelSelector, limit: "500", continue: cont } },
      );
      for (const item of page.items ?? []) out.push({ ...item, apiVersion, kind });
      cont = page.metadata?.continue;
    } while (cont !== undefined && cont !== "");
    return out;
  }

  /** Server-side apply of `obj` with `fieldManager`, forcing conflicts. */
  async apply(
    obj: KubeObjectRef,
    opts: { fieldManager: string; force?: boolean; dryRun?: boolean; subresource?: string },
  ): Promise<LiveObject> {
    const p = await this.objectPath(obj, opts.subresource);
    return this.request<LiveObject>("PATCH", p, {
      query: {
        fieldManager: opts.fieldManager,
        force: opts.force === false ? undefined : "true",
        dryRun: opts.dryRun === true ? "All" : undefined,
      },
      body: obj,
      contentType: "application/apply-patch+yaml",
    });
  }

  async create(obj: KubeObjectRef, opts: { fieldManager?: string } = {}): Promise<LiveObject> {
    const p = await this.path(obj.apiVersion, obj.kind, obj.metadata.namespace);
    return this.request<LiveObject>("POST", p, {
      query: { fieldManager: opts.fieldManager },
      body: obj,
    });
  }

  /** PUT: replaces an object; a stale metadata.resourceVersion is a 409 Conflict. */
  async replace(obj: KubeObjectRef): Promise<LiveObject> {
    const p = await this.objectPath(obj);
    return this.request<LiveObject>("PUT", p, { body: obj });
  }

  async mergePatch(
    ref: KubeObjectRef,
    patch: unknown,
    opts: { subresource?: string; fieldManager?: string } = {},
  ): Promise<LiveObject> {
    const p = await this.objectPath(ref, opts.subresource);
    return this.request<LiveObject>("PATCH", p, {
      query: { fieldManager: opts.fieldManager },
      body: patch,
      contentType: "application/merge-patch+json",
    });
  }

  /** Deletes an object; false when it was already gone. */
  async delete(
    ref: KubeObjectRef,
    opts: { propagationPolicy?: "Background" | "Foreground" | "Orphan"; dryRun?: boolean } = {},
  ): Promise<boolean> {
    try {
      const p = await this.objectPath(ref);
      await this.request("DELETE", p, {
        query: { dryRun: opts.dryRun === true ? "All" : undefined },
        body: {
          apiVersion: "v1",
          kind: "DeleteOptions",
          propagationPolicy: opts.propagationPolicy ?? "Background",
        },
      });
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return false;
      throw err;
    }
  }
}

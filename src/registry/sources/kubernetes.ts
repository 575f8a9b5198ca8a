// The kubernetes source: entries discovered from MCPServer, MCPRemoteProxy and VirtualMCPServer
// resources annotated `toolhive.stacklok.dev/registry-export: "true"` in the configured
// namespaces. A sync lists them; a watch per namespace and kind triggers a new sync when any of
// them changes. Entry claims come from the `authz-claims` annotation, never from the source.
import { readFileSync } from "node:fs";
import { McpfleetError } from "../../errors.js";
import { KubeApiError, KubeClient } from "../../infra/kube/client.js";
import { API_GROUP } from "../../schema/kinds.js";
import { EXPORTED_KINDS } from "./exported-kinds.js";
import type { Claims } from "../config/types.js";
import { PUBLISHER_META, type ServerEntry, type ServerJson } from "../formats/model.js";
import { nameProblem } from "../formats/names.js";
import { isObject } from "../../json.js";

export const API_VERSION = "v1alpha1";
const PREFIX = `${API_GROUP}/`;

type Obj = Record<string, unknown>;

/** The namespaces to read: the configured ones, else the server's own. */
export function kubeNamespaces(kube: KubeClient, configured: string[] | undefined): string[] {
  if (configured !== undefined && configured.length > 0) return configured;
  const fromEnv = process.env.POD_NAMESPACE;
  if (fromEnv !== undefined && fromEnv !== "") return [fromEnv];
  try {
    const ns = readFileSync("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "utf8");
    if (ns.trim() !== "") return [ns.trim()];
  } catch {
    // not in a pod
  }
  return [kube.defaultNamespace()];
}

/** One exported resource to an entry, or why it cannot be one. */
export function kubeEntry(kind: string, obj: Obj): ServerEntry | string {
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const ns = typeof meta.namespace === "string" ? meta.namespace : "default";
  const rname = typeof meta.name === "string" ? meta.name : "";
  const ann = (isObject(meta.annotations) ? meta.annotations : {}) as Record<string, string>;
  const name = `com.toolhive.k8s.${ns}/${rname}`;
  const np = nameProblem(name);
  if (np !== undefined) return `${kind} ${ns}/${rname}: ${np}`;
  const status = isObject(obj.status) ? obj.status : {};
  const url = ann[`${PREFIX}registry-url`] ?? (typeof status.url === "string" ? status.url : "");
  if (url === "") {
    return `${kind} ${ns}/${rname}: no ${PREFIX}registry-url annotation and no status.url yet`;
  }
  const spec = isObject(obj.spec) ? obj.spec : {};
  const transport = spec.transport === "sse" || /\/sse(#|$)/.test(url) ? "sse" : "streamable-http";
  const server: ServerJson = {
    name,
    version: "1.0.0",
    description: ann[`${PREFIX}registry-description`] ?? `${kind} ${rname} in namespace ${ns}`,
    remotes: [{ type: transport, url }],
    _meta: {
      [PUBLISHER_META]: {
        [API_GROUP]: { kubernetes: { kind, namespace: ns, name: rname, uid: meta.uid ?? null } },
      },
    },
  };
  const title = ann[`${PREFIX}registry-title`];
  if (title !== undefined) server.title = title;
  const entry: ServerEntry = { name, version: "1.0.0", server, tags: [], status: "active" };
  const rawClaims = ann[`${PREFIX}authz-claims`];
  if (rawClaims !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawClaims);
    } catch {
      return `${kind} ${ns}/${rname}: ${PREFIX}authz-claims is not JSON`;
    }
    const ok =
      isObject(parsed) &&
      Object.values(parsed).every(
        (v) => typeof v === "string" || (Array.isArray(v) && v.every((x) => typeof x === "string")),
      );
    if (!ok) return `${kind} ${ns}/${rname}: ${PREFIX}authz-claims must map names to strings`;
    entry.claims = parsed as Claims;
  }
  return entry;
}

/** The collection path of an exported kind in a namespace. */
function collectionPath(namespace: string, plural: string): string {
  return `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(namespace)}/${plural}`;
}

/** Lists every exported resource of the namespaces, a page at a time. */
export async function listKubeEntries(
  kube: KubeClient,
  namespaces: string[],
): Promise<{ entries: ServerEntry[]; problems: string[] }> {
  const entries: ServerEntry[] = [];
  const problems: string[] = [];
  for (const namespace of namespaces) {
    for (const { kind, plural } of EXPORTED_KINDS) {
      let cont: string | undefined;
      do {
        let page: { items?: unknown[]; metadata?: { continue?: string } };
        try {
          page = await kube.request("GET", collectionPath(namespace, plural), {
            query: { limit: "500", continue: cont },
          });
        } catch (err) {
          // The CRD is not installed: nothing of that kind.
          if (err instanceof KubeApiError && err.status === 404) break;
          throw new McpfleetError(
            "ERR_SYNC_FAILED",
            `listing ${plural} in ${namespace}: ${(err as Error).message}`,
            { cause: err },
          );
        }
        for (const item of page.items ?? []) {
          if (!isObject(item)) continue;
          const ann =
            isObject(item.metadata) && isObject(item.metadata.annotations)
              ? item.metadata.annotations
              : {};
          if (ann[`${PREFIX}registry-export`] !== "true") continue;
          const e = kubeEntry(kind, item);
          if (typeof e === "string") problems.push(e);
          else entries.push(e);
        }
        cont = page.metadata?.continue;
      } while (cont !== undefined && cont !== "");
    }
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { entries, problems };
}

/**
 * Watches the exported kinds in the namespaces and calls `changed` (debounced) on any event.
 * Watches that end or fail are started again after a short pause. Returns a stop function.
 */
export function watchKube(
  kube: KubeClient,
  namespaces: string[],
  changed: () => void,
  debounceMs = 200,
): () => void {
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const poke = (): void => {
    if (stop.signal.aborted || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      changed();
    }, debounceMs);
  };
  // Each watch starts again from the last version it saw, so that a watch cut or timed out in
  // a quiet namespace replays only what it missed rather than every object (and a sync).
  const start = (namespace: string, plural: string, version?: string): void => {
    if (stop.signal.aborted) return;
    let seen = version;
    const again = (): void => {
      if (!stop.signal.aborted) setTimeout(() => start(namespace, plural, seen), 1000).unref();
    };
    kube
      .watch(
        collectionPath(namespace, plural),
        {
          query: { allowWatchBookmarks: "true", resourceVersion: version },
          signal: stop.signal,
        },
        (event) => {
          seen = event.object.metadata.resourceVersion ?? seen;
          // Also the first ADDED burst: that sync finds the hash unchanged and writes nothing.
          if (event.type !== "BOOKMARK") poke();
        },
      )
      .then(again, (err: unknown) => {
        if (err instanceof KubeApiError && err.status === 410) {
          // Too old to resume: watch afresh, and sync in case something was missed.
          seen = undefined;
          poke();
        }
        again();
      });
  };
  for (const ns of namespaces) for (const { plural } of EXPORTED_KINDS) start(ns, plural);
  return () => {
    stop.abort();
    if (timer !== undefined) clearTimeout(timer);
  };
}

let cachedKubeClient: KubeClient | undefined;

/** A client from the in-cluster service account, else $KUBECONFIG or ~/.kube/config; made once. */
export function defaultKubeClient(): KubeClient {
  cachedKubeClient ??= KubeClient.fromFile();
  return cachedKubeClient;
}

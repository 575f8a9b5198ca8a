// The kubernetes source: entries discovered from MCPServer, MCPRemoteProxy and VirtualMCPServer
// resources annotated `toolhive.stacklok.dev/registry-export: "true"` in the configured
// namespaces. A sync lists them; a watch per namespace and kind triggers a new sync when any of
// them changes. Entry claims come from the `authz-claims` annotation, never from the source.
import { readFileSync } from "node:fs";
import * as k8s from "@kubernetes/client-node";
import { McpfleetError } from "../../errors.js";
import { API_GROUP } from "../../schema/kinds.js";
import { EXPORTED_KINDS } from "./exported-kinds.js";
import type { Claims } from "../config/types.js";
import { PUBLISHER_META, type ServerEntry, type ServerJson } from "../formats/model.js";
import { nameProblem } from "../formats/names.js";

export const API_VERSION = "v1alpha1";
const PREFIX = `${API_GROUP}/`;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** The namespaces to read: the configured ones, else the server's own. */
export function kubeNamespaces(kc: k8s.KubeConfig, configured: string[] | undefined): string[] {
  if (configured !== undefined && configured.length > 0) return configured;
  const fromEnv = process.env.POD_NAMESPACE;
  if (fromEnv !== undefined && fromEnv !== "") return [fromEnv];
  try {
    const ns = readFileSync("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "utf8");
    if (ns.trim() !== "") return [ns.trim()];
  } catch {
    // not in a pod
  }
  return [kc.getContextObject(kc.getCurrentContext())?.namespace ?? "default"];
}

/** One exported resource to an entry, or why it cannot be one. */
export function kubeEntry(kind: string, obj: Obj): ServerEntry | string {
  const meta = isObj(obj.metadata) ? obj.metadata : {};
  const ns = typeof meta.namespace === "string" ? meta.namespace : "default";
  const rname = typeof meta.name === "string" ? meta.name : "";
  const ann = (isObj(meta.annotations) ? meta.annotations : {}) as Record<string, string>;
  const name = `com.toolhive.k8s.${ns}/${rname}`;
  const np = nameProblem(name);
  if (np !== undefined) return `${kind} ${ns}/${rname}: ${np}`;
  const status = isObj(obj.status) ? obj.status : {};
  const url = ann[`${PREFIX}registry-url`] ?? (typeof status.url === "string" ? status.url : "");
  if (url === "") {
    return `${kind} ${ns}/${rname}: no ${PREFIX}registry-url annotation and no status.url yet`;
  }
  const spec = isObj(obj.spec) ? obj.spec : {};
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
      isObj(parsed) &&
      Object.values(parsed).every(
        (v) => typeof v === "string" || (Array.isArray(v) && v.every((x) => typeof x === "string")),
      );
    if (!ok) return `${kind} ${ns}/${rname}: ${PREFIX}authz-claims must map names to strings`;
    entry.claims = parsed as Claims;
  }
  return entry;
}

/** Lists every exported resource of the namespaces. */
export async function listKubeEntries(
  kc: k8s.KubeConfig,
  namespaces: string[],
): Promise<{ entries: ServerEntry[]; problems: string[] }> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const entries: ServerEntry[] = [];
  const problems: string[] = [];
  for (const namespace of namespaces) {
    for (const { kind, plural } of EXPORTED_KINDS) {
      let list: { items?: unknown[] };
      try {
        list = (await api.listNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          namespace,
          plural,
        })) as { items?: unknown[] };
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === 404) continue; // the CRD is not installed: nothing of that kind
        throw new McpfleetError(
          "ERR_SYNC_FAILED",
          `listing ${plural} in ${namespace}: ${(err as Error).message}`,
          { cause: err },
        );
      }
      for (const item of list.items ?? []) {
        if (!isObj(item)) continue;
        const ann =
          isObj(item.metadata) && isObj(item.metadata.annotations) ? item.metadata.annotations : {};
        if (ann[`${PREFIX}registry-export`] !== "true") continue;
        const e = kubeEntry(kind, item);
        if (typeof e === "string") problems.push(e);
        else entries.push(e);
      }
    }
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { entries, problems };
}

/**
 * Watches the exported kinds in the namespaces and calls `changed` (debounced) on any event.
 * Watches that end are restarted after a short pause. Returns a stop function.
 */
export function watchKube(
  kc: k8s.KubeConfig,
  namespaces: string[],
  changed: () => void,
  debounceMs = 200,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const controllers: AbortController[] = [];
  const poke = (): void => {
    if (stopped || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      changed();
    }, debounceMs);
  };
  const watch = new k8s.Watch(kc);
  const start = (namespace: string, plural: string): void => {
    if (stopped) return;
    watch
      .watch(
        `/apis/${API_GROUP}/${API_VERSION}/namespaces/${namespace}/${plural}`,
        { allowWatchBookmarks: false },
        () => {
          // Also the initial ADDED burst: that sync finds the hash unchanged and writes nothing.
          poke();
        },
        () => {
          if (!stopped) setTimeout(() => start(namespace, plural), 1000).unref();
        },
      )
      .then((c) => {
        if (stopped) c.abort();
        else controllers.push(c);
      })
      .catch(() => {
        if (!stopped) setTimeout(() => start(namespace, plural), 1000).unref();
      });
  };
  for (const ns of namespaces) for (const { plural } of EXPORTED_KINDS) start(ns, plural);
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    for (const c of controllers) c.abort();
  };
}

let cachedKubeConfig: k8s.KubeConfig | undefined;

/** In-cluster configuration, or $KUBECONFIG / ~/.kube/config, loaded once. */
export function defaultKubeConfig(): k8s.KubeConfig {
  if (cachedKubeConfig === undefined) {
    const kc = new k8s.KubeConfig();
    kc.loadFromDefault();
    cachedKubeConfig = kc;
  }
  return cachedKubeConfig;
}

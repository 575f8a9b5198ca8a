import type * as T from "../../generated/types.js";
import type { Kind } from "../schema/kinds.js";

/** The typed document of each kind, as generated from schemas/. */
export interface KindTypes {
  MCPToolConfig: T.MCPToolConfig;
  MCPTelemetryConfig: T.MCPTelemetryConfig;
  MCPOIDCConfig: T.MCPOIDCConfig;
  MCPExternalAuthConfig: T.MCPExternalAuthConfig;
  MCPGroup: T.MCPGroup;
  EmbeddingServer: T.EmbeddingServer;
  MCPServer: T.MCPServer;
  MCPRemoteProxy: T.MCPRemoteProxy;
  MCPServerEntry: T.MCPServerEntry;
  VirtualMCPCompositeToolDefinition: T.VirtualMCPCompositeToolDefinition;
  VirtualMCPServer: T.VirtualMCPServer;
  MCPRegistry: T.MCPRegistry;
}

/** A validated resource of kind K whose namespace has been settled. */
export type Resource<K extends Kind = Kind> = KindTypes[K] & {
  metadata: KindTypes[K]["metadata"] & { name: string; namespace: string };
};

/** A rendered Kubernetes object (plain JSON, as written to YAML and applied). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

function key(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** `groupRef` is a name or `{name}` (see docs/compat.md); this returns the name either way. */
export function groupName(ref: string | { name: string } | undefined): string | undefined {
  if (ref === undefined) return undefined;
  return typeof ref === "string" ? ref : ref.name;
}

/** Every resource of a synthesis run, indexed for reference resolution. */
export class ResourceSet {
  private readonly byKey = new Map<string, Resource>();
  /** Sorted lists by kind and namespace, built on first use: status and synthesis ask for the
   * same lists once per resource, and scanning the whole set each time is quadratic. */
  private readonly lists = new Map<string, readonly Resource[]>();

  constructor(resources: Iterable<Resource>) {
    for (const r of resources)
      this.byKey.set(key(r.kind, r.metadata.namespace, r.metadata.name), r);
  }

  get<K extends Kind>(
    kind: K,
    namespace: string,
    name: string | undefined,
  ): Resource<K> | undefined {
    if (name === undefined) return undefined;
    return this.byKey.get(key(kind, namespace, name)) as Resource<K> | undefined;
  }

  /** Resources of a kind, sorted by namespace then name (the order output is written in). */
  list<K extends Kind>(kind: K, namespace?: string): Resource<K>[] {
    const k = namespace === undefined ? kind : `${kind}/${namespace}`;
    let hit: readonly Resource[] | undefined = this.lists.get(k);
    if (hit === undefined) {
      hit =
        namespace === undefined
          ? this.scan(kind)
          : this.scan(kind).filter((r) => r.metadata.namespace === namespace);
      this.lists.set(k, hit);
    }
    return hit.slice() as Resource<K>[];
  }

  /** Every resource of a kind, sorted; kept for the lists by namespace. */
  private scan(kind: Kind): readonly Resource[] {
    const cached = this.lists.get(kind);
    if (cached !== undefined) return cached;
    const out: Resource[] = [];
    for (const r of this.byKey.values()) if (r.kind === kind) out.push(r);
    out.sort(
      (a, b) =>
        a.metadata.namespace.localeCompare(b.metadata.namespace) ||
        a.metadata.name.localeCompare(b.metadata.name),
    );
    this.lists.set(kind, out);
    return out;
  }

  namespaces(): string[] {
    return [...new Set([...this.byKey.values()].map((r) => r.metadata.namespace))].sort();
  }

  all(): Resource[] {
    return [...this.byKey.values()];
  }
}

// The resources being served: the built-in kinds plus the custom resources of Established CRDs,
// and the discovery documents (/api, /api/v1, /apis, /apis/{group}, /apis/{group}/{version})
// that describe them.
import { builtinTypes } from "./builtins.js";
import { type ResourceType, VERBS, groupVersion, storageKey } from "./resource-type.js";
import { customResourceShape } from "./shapes.js";
import { type KObject, isRecord } from "./types.js";
import { CustomResourceSchema } from "./validation.js";

export class Registry {
  private readonly types: ResourceType[] = builtinTypes();

  constructor(private readonly serverAddress: () => string) {}

  /** The type served at group/version/plural, if that version is served. */
  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.find(
      (t) => t.group === group && t.plural === plural && t.versions.includes(version),
    );
  }

  byStorageKey(key: string): ResourceType | undefined {
    return this.types.find((t) => storageKey(t) === key);
  }

  /** The type of an apiVersion/kind, for owner references and the like. */
  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    return this.types.find(
      (t) => t.group === group && t.kind === kind && t.versions.includes(version ?? ""),
    );
  }

  all(): readonly ResourceType[] {
    return this.types;
  }

  /** Serves the custom resources of an Established CRD (replacing an earlier definition). */
  installCrd(crd: KObject): ResourceType {
    const spec = (crd.spec ?? {}) as Record<string, unknown>;
    const names = (spec.names ?? {}) as Record<string, unknown>;
    const versions = (Array.isArray(spec.versions) ? spec.versions : [])
      .filter(isRecord)
      .filter((v) => v.served !== false);
    const storage = versions.find((v) => v.storage === true) ?? versions[0];
    const ordered = storage ? [storage, ...versions.filter((v) => v !== storage)] : versions;
    const schemas = new Map<string, CustomResourceSchema | undefined>();
    const rawSchemas = new Map<string, Record<string, unknown> | undefined>();
    let hasStatus = false;
    for (const v of ordered) {
      const schema =
        isRecord(v.schema) && isRecord(v.schema.openAPIV3Schema)
          ? v.schema.openAPIV3Schema
          : undefined;
      schemas.set(String(v.name), schema ? new CustomResourceSchema(schema) : undefined);
      rawSchemas.set(String(v.name), schema);
      if (isRecord(v.subresources) && v.subresources.status !== undefined) hasStatus = true;
    }
    const kind = String(names.kind);
    const type: ResourceType = {
      group: String(spec.group),
      versions: ordered.map((v) => String(v.name)),
      plural: String(names.plural),
      singular: typeof names.singular === "string" ? names.singular : kind.toLowerCase(),
      kind,
      listKind: typeof names.listKind === "string" ? names.listKind : `${kind}List`,
      namespaced: spec.scope !== "Cluster",
      shortNames: Array.isArray(names.shortNames) ? names.shortNames.map(String) : [],
      categories: Array.isArray(names.categories) ? names.categories.map(String) : [],
      status: hasStatus,
      generation: true,
      nameRule: "subdomain",
      fieldSelectors: [],
      builtin: false,
      crd: { name: String(crd.metadata?.name), schemas },
      shape: (version) => customResourceShape(rawSchemas.get(version)),
    };
    this.removeCrd(type.crd!.name);
    this.types.push(type);
    return type;
  }

  removeCrd(name: string): ResourceType | undefined {
    const index = this.types.findIndex((t) => t.crd?.name === name);
    if (index < 0) return undefined;
    return this.types.splice(index, 1)[0];
  }

  private groups(): { name: string; versions: string[] }[] {
    const groups: { name: string; versions: string[] }[] = [];
    for (const t of this.types) {
      if (t.group === "") continue;
      let g = groups.find((x) => x.name === t.group);
      if (!g) groups.push((g = { name: t.group, versions: [] }));
      for (const v of t.versions) if (!g.versions.includes(v)) g.versions.push(v);
    }
    return groups;
  }

  private group(name: string) {
    const g = this.groups().find((x) => x.name === name);
    if (!g) return undefined;
    const versions = g.versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions, preferredVersion: versions[0] };
  }

  /** The discovery document at `path`, or undefined when there is none. */
  discovery(path: string): Record<string, unknown> | undefined {
    if (path === "/api") {
      return {
        kind: "APIVersions",
        versions: ["v1"],
        serverAddressByClientCIDRs: [
          { clientCIDR: "0.0.0.0/0", serverAddress: this.serverAddress() },
        ],
      };
    }
    if (path === "/apis") {
      return {
        kind: "APIGroupList",
        apiVersion: "v1",
        groups: this.groups().map((g) => this.group(g.name)),
      };
    }
    const core = /^\/api\/(v1)$/.exec(path);
    const grouped = /^\/apis\/([^/]+)(?:\/([^/]+))?$/.exec(path);
    const group = core ? "" : grouped?.[1];
    const version = core ? core[1] : grouped?.[2];
    if (group === undefined) return undefined;
    if (version === undefined) {
      const g = this.group(group);
      return g ? { kind: "APIGroup", apiVersion: "v1", ...g } : undefined;
    }
    const types = this.types.filter((t) => t.group === group && t.versions.includes(version));
    if (types.length === 0) return undefined;
    const resources: Record<string, unknown>[] = [];
    for (const t of types) {
      const resource: Record<string, unknown> = {
        name: t.plural,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: t.plural === "namespaces" ? VERBS.filter((v) => v !== "deletecollection") : VERBS,
      };
      if (t.shortNames.length > 0) resource.shortNames = t.shortNames;
      if (t.categories.length > 0) resource.categories = t.categories;
      resources.push(resource);
      if (t.status) {
        resources.push({
          name: `${t.plural}/status`,
          singularName: "",
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: ["get", "patch", "update"],
        });
      }
    }
    return {
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: groupVersion(group, version),
      resources,
    };
  }
}

// Where each kind names other resources. The name references are found by walking the kind's
// schema (through $ref, anyOf, items and maps) for the property names below, so a reference
// added to a schema is checked without touching this module; the few references that are not
// `...Ref` properties (backend workload names of a virtual server) are listed by path.
import { type Kind, KINDS, kindSchemaId } from "../schema/kinds.js";
import type { SchemaFile } from "../schema/load.js";
import { SchemaIndex } from "../schema/resolve.js";
import { toPointer } from "../json-pointer.js";
import { isObject } from "../json.js";

/** Property names that name another resource of ours, in the same namespace. */
export const REFERENCE_PROPERTIES: Readonly<Record<string, { targets: Kind[]; list?: boolean }>> = {
  groupRef: { targets: ["MCPGroup"] },
  toolConfigRef: { targets: ["MCPToolConfig"] },
  oidcConfigRef: { targets: ["MCPOIDCConfig"] },
  telemetryConfigRef: { targets: ["MCPTelemetryConfig"] },
  externalAuthConfigRef: { targets: ["MCPExternalAuthConfig"] },
  authServerRef: { targets: ["MCPExternalAuthConfig"] },
  embeddingServerRef: { targets: ["EmbeddingServer"] },
  compositeToolRefs: { targets: ["VirtualMCPCompositeToolDefinition"], list: true },
};

/**
 * Properties ending in Ref/Refs that name something other than one of our resources (Secrets,
 * ConfigMaps, Services, status fields): not checked, listed so that a test notices a new one.
 */
export const NON_RESOURCE_REFERENCES: ReadonlySet<string> = new Set([
  "secretKeyRef",
  "configMapRef",
  "caBundleRef",
  "caCertRef",
  "caCertSecretRef",
  "passwordRef",
  "passwordSecretRef",
  "usernameSecretRef",
  "valueSecretRef",
  "tokenSecretRef",
  "clientSecretRef",
  "hfTokenSecretRef",
  "pgpassSecretRef",
  "authTokenRef",
  "signingKeySecretRefs",
  "hmacSecretRefs",
  "dbAppUserPasswordSecretRef",
  "dbMigrationUserPasswordSecretRef",
  "authConfigRef",
  // An MCPAuthzConfig, a kind of the reference operator that mcpfleet does not serve: refused
  // at the run-time level instead (unrendered-fields.ts).
  "authzConfigRef",
]);

/** A place in a kind where a reference sits: path segments from the root, `*` for any item/key. */
export interface ReferencePattern {
  segments: string[];
  targets: Kind[];
  /** The value is a list of references. */
  list: boolean;
  /** Its JSON pointer when it has no `*`: one string for every resource it is found in. */
  pointer: string | undefined;
}

export const WORKLOAD_KINDS: Kind[] = ["MCPServer", "MCPRemoteProxy", "MCPServerEntry"];

/**
 * Backend workload names in a virtual server. `value` holds a name, `items` a list of names,
 * `keys` a map keyed by names. A name also matches a static backend of the same configuration.
 */
export interface WorkloadPattern {
  segments: string[];
  form: "value" | "items" | "keys";
  /** Path (from the root) of the configuration whose static `backends` also count. */
  config: string[];
}

export const WORKLOAD_PATTERNS: Partial<Record<Kind, WorkloadPattern[]>> = {
  VirtualMCPServer: [
    {
      segments: ["spec", "config", "aggregation", "tools", "*", "workload"],
      form: "value",
      config: ["spec", "config"],
    },
    {
      segments: ["spec", "config", "aggregation", "conflictResolutionConfig", "priorityOrder"],
      form: "items",
      config: ["spec", "config"],
    },
    {
      segments: ["spec", "config", "operational", "timeouts", "perWorkload"],
      form: "keys",
      config: ["spec", "config"],
    },
    { segments: ["spec", "outgoingAuth", "backends"], form: "keys", config: ["spec", "config"] },
    {
      segments: ["spec", "config", "outgoingAuth", "backends"],
      form: "keys",
      config: ["spec", "config"],
    },
  ],
};

const MAX_PATH = 24;

/** Every reference pattern of one kind, found by walking its schema. */
export function findReferencePatterns(
  files: readonly SchemaFile[],
  kind: Kind,
): ReferencePattern[] {
  const index = new SchemaIndex(files);
  const rootId = kindSchemaId(kind);
  const found = new Map<string, ReferencePattern>();
  const active = new Set<string>();

  const visit = (node: unknown, fileId: string, path: string[]): void => {
    if (!isObject(node) || path.length > MAX_PATH) return;
    const ref = node.$ref;
    if (typeof ref === "string") {
      const resolved = index.resolve(fileId, ref);
      const key = `${resolved.fileId}#${resolved.pointer}@${path.join("/")}`;
      if (!active.has(key)) {
        active.add(key);
        visit(resolved.node, resolved.fileId, path);
        active.delete(key);
      }
    }
    for (const keyword of ["anyOf", "oneOf", "allOf"]) {
      const branches = node[keyword];
      if (Array.isArray(branches)) for (const b of branches) visit(b, fileId, path);
    }
    if (isObject(node.properties)) {
      for (const [name, sub] of Object.entries(node.properties)) {
        if (path.length === 0 && (name === "status" || name === "metadata")) continue;
        const reference = REFERENCE_PROPERTIES[name];
        if (reference !== undefined) {
          const segments = [...path, name];
          found.set(segments.join("/"), {
            segments,
            targets: reference.targets,
            list: reference.list === true,
            pointer: segments.includes("*") ? undefined : toPointer(segments),
          });
          continue;
        }
        visit(sub, fileId, [...path, name]);
      }
    }
    if (isObject(node.items)) visit(node.items, fileId, [...path, "*"]);
    if (isObject(node.additionalProperties))
      visit(node.additionalProperties, fileId, [...path, "*"]);
  };

  visit(index.file(rootId).schema, rootId, []);
  // Code-unit order: localeCompare would load ICU's collation at its first use, 7 ms of a cold start.
  const byPath = (p: ReferencePattern) => p.segments.join("/");
  return [...found.values()].sort((a, b) =>
    byPath(a) < byPath(b) ? -1 : byPath(a) > byPath(b) ? 1 : 0,
  );
}

/** Reference patterns of every kind (for tests and documentation). */
export function referenceTable(files: readonly SchemaFile[]): Map<Kind, ReferencePattern[]> {
  const of = referencePatternsOf(files);
  return new Map(KINDS.map((kind) => [kind, of(kind)]));
}

/**
 * The patterns of a kind, found on first use and kept per schema set: a run that meets only
 * MCPServers walks only the MCPServer schema (this matters to the cold start).
 */
export function referencePatternsOf(
  files: readonly SchemaFile[],
): (kind: Kind) => ReferencePattern[] {
  let table = tables.get(files);
  if (table === undefined) {
    table = new Map();
    tables.set(files, table);
  }
  const cache = table;
  return (kind) => {
    let patterns = cache.get(kind);
    if (patterns === undefined) {
      patterns = findReferencePatterns(files, kind);
      cache.set(kind, patterns);
    }
    return patterns;
  };
}

const tables = new WeakMap<readonly SchemaFile[], Map<Kind, ReferencePattern[]>>();

/** Every property named `...Ref` or `...Refs` anywhere in the schemas (for the coverage test). */
export function allRefPropertyNames(files: readonly SchemaFile[]): Set<string> {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (!isObject(node)) return;
    if (isObject(node.properties)) {
      for (const name of Object.keys(node.properties)) {
        if (/Refs?$/.test(name)) names.add(name);
      }
    }
    for (const value of Object.values(node)) visit(value);
  };
  for (const file of files) visit(file.schema);
  return names;
}

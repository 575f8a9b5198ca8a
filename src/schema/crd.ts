import {
  API_GROUP,
  CATEGORY,
  type Kind,
  SERVED_VERSIONS,
  STORAGE_VERSION,
  kindSchemaId,
} from "./kinds.js";
import type { SchemaNode } from "./load.js";
import { SchemaIndex } from "./resolve.js";
import { readsProperty } from "./server-unchecked.js";
import { v1beta1SchemaId, withVersionForms } from "./versions.js";
import { isObject } from "../json.js";
import { McpfleetError } from "../errors.js";

/** CRD facts a kind file carries under `x-mcpfleet-crd`. */
export interface CrdFacts {
  plural: string;
  singular: string;
  shortNames?: string[];
  printerColumns?: PrinterColumn[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

/** Keywords a structural openAPIV3Schema may carry; anything else is dropped or rewritten. */
const KEPT_KEYWORDS = new Set([
  "type",
  "properties",
  "additionalProperties",
  "items",
  "required",
  "enum",
  "default",
  "description",
  "format",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "nullable",
  "x-kubernetes-validations",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-int-or-string",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-embedded-resource",
]);

const CEL_TYPE: Record<string, string> = {
  string: "string",
  integer: "int",
  number: "double",
  boolean: "bool",
  array: "list",
  object: "map",
};

/**
 * A value union (`anyOf` of types) is not structural. The API server gets an untyped node that
 * keeps its value. It cannot declare a CEL type for such a node, so no rule can be attached to
 * it (a CRD with one is refused): the union's types are checked by `mcpfleet validate` only.
 */
function unionToStructural(node: SchemaNode, branches: SchemaNode[]): SchemaNode {
  const types = branches.map((b) => b.type);
  if (!types.every((t): t is string => typeof t === "string" && t in CEL_TYPE)) {
    throw new McpfleetError(
      "ERR_SCHEMA_LOAD",
      `anyOf branches must each declare one type: ${JSON.stringify(branches)}`,
    );
  }
  const out: SchemaNode = { "x-kubernetes-preserve-unknown-fields": true };
  if (typeof node.description === "string") out.description = node.description;
  return out;
}

/** True for a node the API server keeps untyped (a value union). */
function untyped(node: unknown): boolean {
  return (
    isObject(node) &&
    node.type === undefined &&
    node["x-kubernetes-preserve-unknown-fields"] === true
  );
}

/**
 * Rules of an object that read one of its untyped properties do not compile on the API server
 * (the property has no CEL type); they stay in the schema for `mcpfleet validate` and are left
 * out of the CRD.
 */
function serverRules(out: SchemaNode): void {
  const rules = out["x-kubernetes-validations"];
  if (!Array.isArray(rules) || !isObject(out.properties)) return;
  const props = out.properties;
  const hidden = Object.keys(props).filter((k) => untyped(props[k]));
  if (hidden.length === 0) return;
  const kept = rules.filter(
    (r) => !(isObject(r) && typeof r.rule === "string" && readsProperty(r.rule, hidden)),
  );
  if (kept.length > 0) out["x-kubernetes-validations"] = kept;
  else delete out["x-kubernetes-validations"];
}

/**
 * Inlines every `$ref` and rewrites a schema node into the structural form the API server
 * accepts: no references, only allowed keywords, deprecation noted in the description.
 */
export function toStructural(
  index: SchemaIndex,
  fileId: string,
  node: SchemaNode,
  trail: string[] = [],
): SchemaNode {
  if (typeof node.$ref === "string") {
    const target = index.resolve(fileId, node.$ref);
    const key = `${target.fileId}#${target.pointer}`;
    if (trail.includes(key))
      throw new McpfleetError(
        "ERR_SCHEMA_LOAD",
        `recursive schema reference ${[...trail, key].join(" -> ")}`,
      );
    const inlined = toStructural(index, target.fileId, target.node, [...trail, key]);
    // Keywords next to a $ref (description, default, rules) refine the referenced schema.
    const { $ref: _ref, ...siblings } = node;
    const refined = toStructural(index, fileId, siblings, trail);
    const merged: SchemaNode = { ...inlined, ...refined };
    const rules = [
      ...((inlined["x-kubernetes-validations"] as unknown[] | undefined) ?? []),
      ...((refined["x-kubernetes-validations"] as unknown[] | undefined) ?? []),
    ];
    if (rules.length > 0) merged["x-kubernetes-validations"] = rules;
    serverRules(merged);
    return merged;
  }
  if (Array.isArray(node.anyOf)) return unionToStructural(node, node.anyOf as SchemaNode[]);

  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (!KEPT_KEYWORDS.has(key)) continue;
    // A structural schema may not pair `additionalProperties` with `properties`; the API server
    // prunes fields its schema does not name, which is what `false` asks of a validator.
    if (key === "additionalProperties" && value === false) continue;
    if (key === "properties" && isObject(value)) {
      const props: SchemaNode = {};
      for (const [name, sub] of Object.entries(value)) {
        props[name] = toStructural(index, fileId, sub as SchemaNode, trail);
      }
      // An empty map is dropped by the API server, like an empty required list below.
      if (Object.keys(props).length > 0) out.properties = props;
    } else if ((key === "items" || key === "additionalProperties") && isObject(value)) {
      out[key] = toStructural(index, fileId, value, trail);
    } else {
      out[key] = value;
    }
  }
  serverRules(out);
  if (node.deprecated === true) {
    const text = typeof out.description === "string" ? out.description : "";
    out.description = text.startsWith("Deprecated") ? text : `Deprecated: ${text}`.trim();
  }
  return out;
}

function crdFacts(kind: Kind, root: SchemaNode): CrdFacts {
  const facts = root["x-mcpfleet-crd"];
  if (!isObject(facts) || typeof facts.plural !== "string" || typeof facts.singular !== "string") {
    throw new McpfleetError(
      "ERR_SCHEMA_LOAD",
      `schema of ${kind} lacks x-mcpfleet-crd.plural/singular`,
    );
  }
  return facts as unknown as CrdFacts;
}

/** The openAPIV3Schema of the kind whose root schema file is `id`. */
function openApiSchema(index: SchemaIndex, id: string): SchemaNode {
  const root = index.file(id).schema;
  const props = root.properties as SchemaNode;
  const openAPIV3Schema: SchemaNode = {
    type: "object",
    description: root.description,
    properties: {
      apiVersion: { type: "string", description: "Versioned schema of this object." },
      kind: { type: "string", description: "The kind of this object." },
      metadata: { type: "object" },
      spec: toStructural(index, id, props.spec as SchemaNode),
      status: toStructural(index, id, props.status as SchemaNode),
    },
  };
  const rootRules = root["x-kubernetes-validations"];
  if (Array.isArray(rootRules) && rootRules.length > 0) {
    openAPIV3Schema["x-kubernetes-validations"] = rootRules;
  }
  // An empty list is dropped by the API server (it would read back different from crds/).
  const required = Array.isArray(root.required)
    ? (root.required as string[]).filter((r) => r === "spec")
    : [];
  if (required.length > 0) openAPIV3Schema.required = required;
  return openAPIV3Schema;
}

/** Indexes that also hold the kinds' v1beta1 forms (see versions.ts), per index. */
const versionedIndexes = new WeakMap<SchemaIndex, SchemaIndex>();

/** The CustomResourceDefinition of one kind, as a plain object ready to be written as YAML. */
export function buildCrd(index: SchemaIndex, kind: Kind): SchemaNode {
  const id = kindSchemaId(kind);
  const facts = crdFacts(kind, index.file(id).schema);
  let versioned = versionedIndexes.get(index);
  if (versioned === undefined) {
    versioned = new SchemaIndex(withVersionForms(index.files));
    versionedIndexes.set(index, versioned);
  }
  const v1beta1 = versioned.files.some((f) => f.id === v1beta1SchemaId(kind))
    ? openApiSchema(versioned, v1beta1SchemaId(kind))
    : undefined;
  const schemas: Record<string, SchemaNode> = { v1alpha1: openApiSchema(index, id) };
  schemas.v1beta1 = v1beta1 ?? schemas.v1alpha1!;
  const printerColumns = [
    ...(facts.printerColumns ?? []),
    ...((facts.printerColumns ?? []).some((c) => c.name === "Age")
      ? []
      : [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }]),
  ];
  const versions = SERVED_VERSIONS.map((name) => ({
    name,
    served: true,
    storage: name === STORAGE_VERSION,
    schema: { openAPIV3Schema: schemas[name] },
    subresources: { status: {} },
    additionalPrinterColumns: printerColumns,
  }));
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${facts.plural}.${API_GROUP}` },
    spec: {
      group: API_GROUP,
      names: {
        kind,
        listKind: `${kind}List`,
        plural: facts.plural,
        singular: facts.singular,
        ...(facts.shortNames ? { shortNames: facts.shortNames } : {}),
        categories: [CATEGORY],
      },
      scope: "Namespaced",
      versions,
    },
  };
}

// JSON Schema of each kind for editors (yaml-language-server, VS Code's YAML extension): the
// structural schema the CRD carries, in plain JSON Schema (draft-07, which every editor reads),
// with apiVersion and kind pinned so that an editor can also pick the schema by content.
import { API_GROUP, type Kind } from "./kinds.js";
import type { SchemaNode } from "./load.js";
import { isObject } from "../json.js";

const VERSIONS = ["v1alpha1", "v1beta1"];

/** One structural node as JSON Schema: OpenAPI's nullable and int-or-string spelled out. */
function toJsonSchema(node: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    // The API server's own keywords (CEL rules, list types) mean nothing to an editor.
    if (key.startsWith("x-kubernetes-") || key === "nullable") continue;
    if (key === "properties" && isObject(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, toJsonSchema(v as SchemaNode)]),
      );
    } else if ((key === "items" || key === "additionalProperties") && isObject(value)) {
      out[key] = toJsonSchema(value);
    } else if ((key === "anyOf" || key === "oneOf" || key === "allOf") && Array.isArray(value)) {
      out[key] = (value as unknown[]).map((v) => (isObject(v) ? toJsonSchema(v) : v));
    } else {
      out[key] = value;
    }
  }
  if (node["x-kubernetes-int-or-string"] === true) {
    delete out.type;
    out.anyOf = [{ type: "integer" }, { type: "string" }];
  }
  if (node.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  // A field the API server would drop or refuse: flag it in the editor as `validate` does.
  if (
    isObject(out.properties) &&
    out.additionalProperties === undefined &&
    node["x-kubernetes-preserve-unknown-fields"] !== true
  ) {
    out.additionalProperties = false;
  }
  return out;
}

/** The editor schema of `kind`, from its CRD's openAPIV3Schema. */
export function editorSchema(kind: Kind, crd: SchemaNode): SchemaNode {
  const versions = (crd.spec as { versions: { schema: { openAPIV3Schema: SchemaNode } }[] })
    .versions;
  const structural = versions[0]!.schema.openAPIV3Schema;
  const schema = toJsonSchema(structural);
  const props = schema.properties as SchemaNode;
  props.apiVersion = {
    type: "string",
    enum: VERSIONS.map((v) => `${API_GROUP}/${v}`),
    description: `${API_GROUP}/v1alpha1 or /v1beta1 (the same schema).`,
  };
  props.kind = { type: "string", const: kind };
  // Editors show what a file may hold; `metadata` is the object's name and namespace.
  props.metadata = {
    type: "object",
    properties: {
      name: { type: "string" },
      namespace: { type: "string" },
      labels: { type: "object", additionalProperties: { type: "string" } },
      annotations: { type: "object", additionalProperties: { type: "string" } },
    },
    required: ["name"],
  };
  // status is written by the controller, never by hand.
  delete props.status;
  const required = new Set([
    "apiVersion",
    "kind",
    "metadata",
    ...((schema.required as string[]) ?? []),
  ]);
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: `${kind} (${API_GROUP})`,
    ...schema,
    required: [...required],
  };
}

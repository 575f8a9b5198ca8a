import type { SchemaNode } from "./load.js";
import { isObject } from "../json.js";

/** The Duration pattern of schemas/common/types.yaml; errors against it get a friendlier message. */
export const DURATION_PATTERN = "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$";

/**
 * A copy of a schema in which every object that declares `properties` (and neither
 * `additionalProperties` nor `x-kubernetes-preserve-unknown-fields`) rejects undeclared fields
 * through `unevaluatedProperties: false`. The validator reports those as unknown fields, which
 * the API server would prune. Inside the subschemas of an applicator (`anyOf`, `oneOf`, `allOf`,
 * `not`, `if`/`then`/`else`) nothing is added: such a subschema sees the whole object, so it would
 * refuse the fields its siblings declare (a server.json stdio transport with its `command`, an
 * `if` about one field), and a branch that fails for an extra field would hide the real reason.
 * The object around them still refuses what none of them evaluated.
 */
const APPLICATORS = new Set(["anyOf", "oneOf", "allOf", "not", "if", "then", "else"]);

export function markUnknownFields(schema: SchemaNode): SchemaNode {
  const visit = (node: unknown, inUnion: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => visit(n, inUnion));
    if (!isObject(node)) return node;
    const out: SchemaNode = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "x-kubernetes-validations" || key === "x-mcpfleet-crd" || key === "default") {
        out[key] = value;
      } else if (key === "properties" && isObject(value)) {
        const props: SchemaNode = {};
        for (const [name, sub] of Object.entries(value)) props[name] = visit(sub, inUnion);
        out[key] = props;
      } else if (key === "$defs" && isObject(value)) {
        const defs: SchemaNode = {};
        for (const [name, sub] of Object.entries(value)) defs[name] = visit(sub, false);
        out[key] = defs;
      } else {
        out[key] = visit(value, inUnion || APPLICATORS.has(key));
      }
    }
    const open =
      "additionalProperties" in node ||
      node["x-kubernetes-preserve-unknown-fields"] === true ||
      "unevaluatedProperties" in node;
    if (!inUnion && !open && isObject(node.properties)) out.unevaluatedProperties = false;
    return out;
  };
  return visit(schema, false) as SchemaNode;
}

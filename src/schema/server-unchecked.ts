// What the API server cannot check with our CRDs. A value union (`anyOf` of types: a groupRef
// written as a string or an object, claims as a string or a list) is an untyped node to it: it
// accepts any value there, and no CEL rule can read the node (a rule that does is left out of
// the CRD). The validator still checks both, and marks what it finds so that `mcpfleet
// validate` reports it apart from the schema and CEL levels, whose verdict is the API server's.
import type { SchemaFile, SchemaNode } from "./load.js";
import { SchemaIndex } from "./resolve.js";
import { isObject } from "../json.js";

/** Set on a CEL rule (in the validator's copy of the schemas) that reads a value union. */
export const SERVER_UNCHECKED = "x-mcpfleet-server-unchecked";

/** True when `rule` reads `self.<name>` for one of `names`. */
export function readsProperty(rule: string, names: readonly string[]): boolean {
  if (names.length === 0) return false;
  return new RegExp(`\\bself\\.(${names.join("|")})\\b`).test(rule);
}

/** The node a `$ref` chain from `node` (in file `fileId`) ends at, with its file. */
function target(index: SchemaIndex, fileId: string, node: SchemaNode): [string, SchemaNode] {
  let at: [string, SchemaNode] = [fileId, node];
  for (let hops = 0; typeof at[1].$ref === "string" && hops < 16; hops++) {
    const r = index.resolve(at[0], at[1].$ref);
    at = [r.fileId, r.node];
  }
  return at;
}

/** The names of the properties of `node` that are value unions. */
function unionProperties(index: SchemaIndex, fileId: string, node: SchemaNode): string[] {
  const [propsFile, holder] = isObject(node.properties)
    ? [fileId, node]
    : target(index, fileId, node);
  const props = holder.properties;
  if (!isObject(props)) return [];
  return Object.keys(props).filter((name) => {
    const prop = props[name];
    return isObject(prop) && Array.isArray(target(index, propsFile, prop)[1].anyOf);
  });
}

/** Copies of `files` in which every CEL rule that reads a value union carries SERVER_UNCHECKED. */
export function markServerUncheckedRules(files: readonly SchemaFile[]): SchemaFile[] {
  const index = new SchemaIndex(files);
  const visit = (fileId: string, node: unknown): unknown => {
    if (Array.isArray(node)) return node.map((n) => visit(fileId, n));
    if (!isObject(node)) return node;
    const out: SchemaNode = {};
    for (const [key, value] of Object.entries(node)) out[key] = visit(fileId, value);
    const rules = node["x-kubernetes-validations"];
    if (Array.isArray(rules)) {
      const unions = unionProperties(index, fileId, node);
      out["x-kubernetes-validations"] = rules.map((r: unknown) =>
        isObject(r) && typeof r.rule === "string" && readsProperty(r.rule, unions)
          ? { ...r, [SERVER_UNCHECKED]: true }
          : r,
      );
    }
    return out;
  };
  return files.map((f) => ({ ...f, schema: visit(f.id, f.schema) as SchemaNode }));
}

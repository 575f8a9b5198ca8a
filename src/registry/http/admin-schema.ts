// The admin bodies' schemas in the OpenAPI document: a source and a registry as the
// configuration file writes them (schemas/config/registry-server.yaml, which the admin routes
// check bodies against), with the file's cross-field rules (CEL there) said in JSON Schema.
import { McpfleetError } from "../../errors.js";
import { installedDefs, type Schema } from "./schema-defs.js";

/** Shared schemas of the document are named `Config<Definition>`. */
const PREFIX = "Config";

/** The configuration file's CEL rules on these definitions, in JSON Schema. */
const RULES: Record<string, Schema> = {
  Source: {
    // Exactly one kind.
    oneOf: ["git", "api", "url", "file", "managed", "kubernetes"].map((k) => ({ required: [k] })),
    // A filter only for synced sources.
    not: { required: ["filter"], anyOf: [{ required: ["managed"] }, { required: ["kubernetes"] }] },
  },
  // At most one of branch, tag and commit.
  GitSource: {
    not: {
      anyOf: [
        { required: ["branch", "tag"] },
        { required: ["branch", "commit"] },
        { required: ["tag", "commit"] },
      ],
    },
  },
  // Each source once.
  Registry: { properties: { sources: { uniqueItems: true } } },
};

/** A definition without its CEL rules (x-kubernetes-validations), which RULES restate. */
function withoutCel(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutCel);
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => k !== "x-kubernetes-validations")
      .map(([k, v]) => [k, withoutCel(v)]),
  );
}

/** A definition with RULES' keywords added (its properties' own merged property by property). */
function withRules(name: string, def: Schema): Schema {
  const rule = RULES[name] ?? {};
  const merged: Schema = { ...def, ...rule };
  if (rule.properties !== undefined) {
    const props = { ...(def.properties as Record<string, Schema>) };
    for (const [k, v] of Object.entries(rule.properties as Record<string, Schema>)) {
      props[k] = { ...props[k], ...v };
    }
    merged.properties = props;
  }
  // A body's name comes from the path: it may be left out.
  if (name === "Source" || name === "Registry") {
    merged.required = (def.required as string[]).filter((r) => r !== "name");
  }
  return merged;
}

/** The definitions `start` reaches, by name, with their $refs named as shared schemas. */
function reachable(defs: Record<string, Schema>, start: string[]): Schema[] {
  const out = new Map<string, Schema>();
  const todo = [...start];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    if (out.has(name)) continue;
    const def = defs[name];
    if (def === undefined) {
      throw new McpfleetError("ERR_SCHEMA_LOAD", `the registry config schema has no ${name}`);
    }
    const text = JSON.stringify(withoutCel(def)).replace(
      /"(?:\.\.\/common\/types\.yaml)?#\/\$defs\/([A-Za-z]+)"/g,
      (_m, ref: string) => {
        todo.push(ref);
        return `"${PREFIX}${ref}#"`;
      },
    );
    out.set(name, { $id: `${PREFIX}${name}`, ...withRules(name, JSON.parse(text) as Schema) });
  }
  return [...out.values()];
}

/** The shared schemas of a source and a registry body: ConfigSource, ConfigRegistry, ... */
export function adminBodySchemas(): Schema[] {
  const defs = {
    ...installedDefs("common/types.yaml"),
    ...installedDefs("config/registry-server.yaml"),
  };
  return reachable(defs, ["Source", "Registry"]);
}

/** A body of PUT /v1/sources/{name} or /v1/registries/{name}. */
export function adminBody(def: "Source" | "Registry", description: string) {
  return {
    description: `${description} \`name\` may be left out; when given it must be the path's (400 otherwise).`,
    allOf: [{ $ref: `${PREFIX}${def}#` }],
    type: "object",
    properties: { name: { type: "string" } },
    additionalProperties: true,
  } as const;
}

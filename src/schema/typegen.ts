import { compile } from "json-schema-to-typescript";
import { type Kind, KINDS } from "./kinds.js";
import type { SchemaFile, SchemaNode } from "./load.js";
import { SchemaIndex } from "./resolve.js";
import { typeForms } from "./versions.js";
import { McpfleetError } from "../errors.js";

/** Root schemas of configuration files get these names; kind files are named after the kind. */
const ROOT_NAMES: Record<string, string> = {
  "config/vmcp.yaml": "VirtualMCPConfig",
  "config/registry-server.yaml": "RegistryServerConfig",
};

function stem(path: string): string {
  const base = path.replace(/^.*\//, "").replace(/\.yaml$/, "");
  return base
    .split(/[-_]/)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join("");
}

function kindOfPath(path: string): Kind | undefined {
  return KINDS.find((k) => `crd/${k.toLowerCase()}.yaml` === path);
}

function hasRootSchema(file: SchemaFile): boolean {
  return "type" in file.schema || "properties" in file.schema;
}

/**
 * One TypeScript name per schema: a kind's root is the kind, `$defs` entries keep their name
 * unless two files use it, then the file's name prefixes it; embedded `Config` types read
 * `Embedded<File>Config`.
 */
export function typeNames(files: readonly SchemaFile[]): Map<string, string> {
  const names = new Map<string, string>();
  const count = new Map<string, number>();
  for (const file of files) {
    for (const def of Object.keys((file.schema.$defs as SchemaNode | undefined) ?? {})) {
      count.set(def, (count.get(def) ?? 0) + 1);
    }
  }
  const taken = new Set<string>();
  for (const file of files) {
    if (hasRootSchema(file)) {
      const name = kindOfPath(file.path) ?? ROOT_NAMES[file.path] ?? `${stem(file.path)}Schema`;
      names.set(`${file.id}#`, name);
      taken.add(name);
    }
  }
  for (const file of files) {
    for (const def of Object.keys((file.schema.$defs as SchemaNode | undefined) ?? {})) {
      let name = def;
      if (def === "Config") name = `Embedded${stem(file.path)}Config`;
      else if ((count.get(def) ?? 0) > 1 && !file.path.startsWith("common/"))
        name = `${stem(file.path)}${def}`;
      if (taken.has(name)) name = `${stem(file.path)}${def}`;
      taken.add(name);
      names.set(`${file.id}#/$defs/${def}`, name);
    }
  }
  return names;
}

/**
 * All schemas as one document whose `$defs` hold every named type, with references rewritten
 * to point inside it, so the type generator needs no resolver and names come out stable.
 */
function bundle(index: SchemaIndex, names: Map<string, string>): SchemaNode {
  const defs: SchemaNode = {};
  const rewrite = (fileId: string, node: unknown, top: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => rewrite(fileId, n, false));
    if (node === null || typeof node !== "object") return node;
    const src = node as SchemaNode;
    if (typeof src.$ref === "string") {
      const target = index.resolve(fileId, src.$ref);
      const name = names.get(`${target.fileId}#${target.pointer}`);
      if (name === undefined)
        throw new McpfleetError(
          "ERR_SCHEMA_LOAD",
          `reference ${src.$ref} from ${fileId} names no type`,
        );
      // A description beside the $ref would make the generator declare a new alias type.
      return { $ref: `#/$defs/${name}` };
    }
    const out: SchemaNode = {};
    for (const [key, value] of Object.entries(src)) {
      if (key === "$defs" || key === "$id" || key === "$schema" || key.startsWith("x-")) continue;
      if (key === "title" && !top) continue;
      if (key === "properties" && value !== null && typeof value === "object") {
        const props: SchemaNode = {};
        for (const [p, sub] of Object.entries(value)) props[p] = rewrite(fileId, sub, false);
        out.properties = props;
      } else {
        out[key] = rewrite(fileId, value, false);
      }
    }
    if (src["x-kubernetes-preserve-unknown-fields"] === true && !("additionalProperties" in src)) {
      out.additionalProperties = true;
    }
    return out;
  };
  // A `$defs` entry that only refers to another type is an alias, declared as such (the
  // generator would otherwise copy the target under a numbered name).
  const alias = (fileId: string, node: SchemaNode, name: string): SchemaNode | undefined => {
    if (typeof node.$ref !== "string") return undefined;
    const target = index.resolve(fileId, node.$ref);
    const targetName = names.get(`${target.fileId}#${target.pointer}`);
    if (targetName === undefined) return undefined;
    const out: SchemaNode = { tsType: targetName, title: name };
    if (typeof node.description === "string") out.description = node.description;
    return out;
  };
  for (const file of index.files) {
    if (hasRootSchema(file)) {
      const name = names.get(`${file.id}#`) as string;
      defs[name] = { ...(rewrite(file.id, file.schema, true) as SchemaNode), title: name };
    }
    for (const [def, node] of Object.entries((file.schema.$defs as SchemaNode | undefined) ?? {})) {
      const name = names.get(`${file.id}#/$defs/${def}`) as string;
      defs[name] = alias(file.id, node as SchemaNode, name) ?? {
        ...(rewrite(file.id, node, true) as SchemaNode),
        title: name,
      };
    }
  }
  return { $defs: defs, type: "object", properties: {}, title: "AllSchemas" };
}

export const GENERATED_BANNER =
  "// Generated by `make generate` from schemas/. Do not edit by hand: change the schema instead.";

/** TypeScript declarations of every kind and embedded configuration. */
export async function generateTypes(schemas: SchemaIndex): Promise<string> {
  // One type per schema holds what either served version admits.
  const index = new SchemaIndex(typeForms(schemas.files));
  const names = typeNames(index.files);
  const source = await compile(bundle(index, names), "AllSchemas", {
    bannerComment: GENERATED_BANNER,
    additionalProperties: false,
    unreachableDefinitions: true,
    declareExternallyReferenced: true,
    strictIndexSignatures: true,
    enableConstEnums: false,
    format: true,
    ignoreMinAndMaxItems: true,
    style: { printWidth: 100 },
  });
  // The bundle's own empty root and the generator's notes about it are artefacts of bundling.
  return source
    .replace(/export interface AllSchemas \{\}\n\n?/, "")
    .replace(
      /\n \*\n \* This interface was referenced by `AllSchemas`'s JSON-Schema\n \* via the `definition` "[^"]*"\./g,
      "",
    )
    .replace(
      /\/\*\*\n \* This interface was referenced by `AllSchemas`'s JSON-Schema\n \* via the `definition` "[^"]*"\.\n \*\/\n/g,
      "",
    );
}

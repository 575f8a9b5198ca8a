// Kinds of other projects validated with their own CustomResourceDefinitions (`validate --crd
// PATH`, as kubectl-validate takes CRD files): each served version's openAPIV3Schema, with its
// x-kubernetes-validations rules, compiled by the same schema set as our kinds, so unknown
// fields, CEL rules, list types and int-or-string are checked as for ours and as the API server
// checks them.
import { readFileSync } from "node:fs";
import { loadAll } from "js-yaml";
import { McpfleetError } from "../errors.js";
import { SchemaSet, type SchemaIssue, type SchemaNode } from "../schema/index.js";
import { collectInputs, isInputError } from "./sources.js";
import { isObject } from "../json.js";

/** The kinds the CRDs of one run define, by `apiVersion/Kind`. */
export class CrdSchemas {
  constructor(
    private readonly set: SchemaSet,
    /** `apiVersion/Kind` -> the schema's id. */
    private readonly byKind: Map<string, string>,
    /** `group/Kind` -> the versions its CRD serves, for a version it does not. */
    readonly versions: Map<string, string[]>,
  ) {}

  /** The schema id of a kind at a version, if a CRD given defines it. */
  idOf(apiVersion: string, kind: string): string | undefined {
    return this.byKind.get(`${apiVersion}/${kind}`);
  }

  /** The versions the CRDs given serve `kind` of `group` as (none: no CRD of it). */
  versionsOf(group: string, kind: string): readonly string[] {
    return this.versions.get(`${group}/${kind}`) ?? [];
  }

  validate(id: string, doc: unknown): SchemaIssue[] {
    return this.set.validateSchema(id, doc);
  }
}

/** Formats the API server checks that ajv-formats checks the same way; others are dropped. */
const KEPT_FORMATS = new Set([
  "int32",
  "int64",
  "float",
  "double",
  "byte",
  "date",
  "date-time",
  "uuid",
  "ipv4",
  "ipv6",
]);

/** Keywords of OpenAPI 3.0 schema objects that are documentation only. */
const DOCUMENTATION = new Set(["example", "externalDocs", "xml", "deprecated", "discriminator"]);

/**
 * An openAPIV3Schema (OpenAPI 3.0 dialect) as the JSON Schema 2020-12 the schema set compiles:
 * `nullable` becomes a "null" type, boolean `exclusiveMinimum`/`exclusiveMaximum` numeric ones,
 * formats the API server reads otherwise (a Go duration, a quantity) are dropped, and rules
 * about updates (`oldSelf`) are left out: a file is validated as a create.
 */
export function toJsonSchema(node: unknown): unknown {
  if (!isObject(node)) return node;
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (DOCUMENTATION.has(key) || key === "nullable") continue;
    if (key === "properties" || key === "patternProperties" || key === "$defs") {
      out[key] = isObject(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonSchema(v)]))
        : value;
    } else if (key === "items" || key === "additionalProperties" || key === "not") {
      out[key] = toJsonSchema(value);
    } else if (key === "anyOf" || key === "oneOf" || key === "allOf") {
      out[key] = Array.isArray(value) ? value.map(toJsonSchema) : value;
    } else if (key === "format") {
      if (typeof value === "string" && KEPT_FORMATS.has(value)) out[key] = value;
    } else if (key === "exclusiveMinimum" || key === "exclusiveMaximum") {
      const bound = key === "exclusiveMinimum" ? "minimum" : "maximum";
      if (value === true && typeof node[bound] === "number") out[key] = node[bound];
      else if (typeof value === "number") out[key] = value;
    } else if (key === "x-kubernetes-validations" && Array.isArray(value)) {
      const rules = value.filter(
        (r) => isObject(r) && typeof r.rule === "string" && !/\boldSelf\b/.test(r.rule),
      );
      if (rules.length > 0) out[key] = rules;
    } else {
      out[key] = value;
    }
  }
  // A bound made exclusive is not also inclusive.
  if (typeof out.exclusiveMinimum === "number" && node.exclusiveMinimum === true)
    delete out.minimum;
  if (typeof out.exclusiveMaximum === "number" && node.exclusiveMaximum === true)
    delete out.maximum;
  if (node.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}

const CRD_ID_PREFIX = "https://crd.mcpfleet.invalid/";

function usage(message: string): McpfleetError {
  return new McpfleetError("ERR_USAGE", `validate: --crd ${message}; see mcpfleet help validate`);
}

/**
 * The CRDs in `paths` (files, or directories read as validate reads them). A path without a
 * CustomResourceDefinition, or one that cannot be read or parsed, is a usage error: a schema
 * meant to be used and silently missing would let its kind pass unchecked.
 */
export function loadCrds(paths: readonly string[]): CrdSchemas {
  const files: { id: string; path: string; schema: SchemaNode }[] = [];
  const byKind = new Map<string, string>();
  const versions = new Map<string, string[]>();
  for (const path of paths) {
    let found = 0;
    for (const input of collectInputs([path])) {
      if (isInputError(input)) throw usage(`${input.name}: ${input.error}`);
      let docs: unknown[];
      try {
        docs = loadAll(readFileSync(input.path, "utf8"));
      } catch (err) {
        throw usage(`${input.name}: ${(err as Error).message.split("\n")[0]}`);
      }
      for (const doc of docs) {
        if (!isObject(doc) || doc.kind !== "CustomResourceDefinition") continue;
        const spec = isObject(doc.spec) ? doc.spec : {};
        const names = isObject(spec.names) ? spec.names : {};
        const group = spec.group;
        const kind = names.kind;
        if (typeof group !== "string" || typeof kind !== "string") continue;
        found++;
        for (const version of Array.isArray(spec.versions) ? spec.versions : []) {
          if (!isObject(version) || typeof version.name !== "string") continue;
          const schema = isObject(version.schema) ? version.schema.openAPIV3Schema : undefined;
          if (version.served === false || !isObject(schema)) continue;
          const apiVersion = `${group}/${version.name}`;
          const id = `${CRD_ID_PREFIX}${apiVersion}/${kind}`;
          if (byKind.has(`${apiVersion}/${kind}`)) continue; // The first file given wins.
          files.push({ id, path: input.name, schema: toJsonSchema(schema) as SchemaNode });
          byKind.set(`${apiVersion}/${kind}`, id);
          versions.set(`${group}/${kind}`, [
            ...(versions.get(`${group}/${kind}`) ?? []),
            version.name,
          ]);
        }
      }
    }
    if (found === 0) throw usage(`${path}: no CustomResourceDefinition found`);
  }
  // Compiled now, so that a schema ajv cannot take is a usage error naming its CRD, not a
  // failure in the middle of the run.
  let set: SchemaSet;
  let at = "";
  try {
    set = new SchemaSet(files);
    for (const f of files) {
      at = `${f.path} (${f.id.slice(CRD_ID_PREFIX.length)})`;
      set.validator(f.id);
    }
  } catch (err) {
    throw usage(
      `${at || paths.join(", ")}: its schema cannot be used: ${(err as Error).message.split("\n")[0]}`,
    );
  }
  return new CrdSchemas(set, byKind, versions);
}

// Custom resource writes as the API server treats them against the CRD version's
// openAPIV3Schema: prune unknown fields (unless x-kubernetes-preserve-unknown-fields), drop
// non-nullable nulls, apply defaults, validate the structural schema (ajv) and the
// x-kubernetes-validations CEL rules, and reject duplicate items of map/set lists. Failures come
// back as Status causes (field, message, reason) worded like the API server's.
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { compileRule, evaluateRule, toCelValue } from "../../../src/schema/cel.js";
import type { StatusCause } from "./errors.js";
import { canonical } from "./fieldpath.js";
import { type KObject, clone, isRecord } from "./types.js";

type Schema = Record<string, unknown>;

type FormatsPlugin = (ajv: Ajv) => Ajv;
const formatsModule = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;

const OBJECT_META_FIELDS = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: string;
}

let sharedAjv: Ajv | undefined;
/** Compiled validators by schema, shared by every server in the process (CRDs repeat). */
const compiledSchemas = new Map<string, ValidateFunction>();
function ajv(): Ajv {
  if (sharedAjv === undefined) {
    sharedAjv = new Ajv({ allErrors: true, strict: false, logger: false, verbose: true });
    addFormats(sharedAjv);
    for (const format of ["int32", "int64", "float", "double", "byte", "binary", "password"]) {
      sharedAjv.addFormat(format, true);
    }
  }
  return sharedAjv;
}

/** The schema in the form ajv checks: int-or-string as anyOf, metadata left to metadata rules. */
function forAjv(schema: unknown, root: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => forAjv(s, false));
  if (!isRecord(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "x-kubernetes-validations" || key === "default") continue;
    if (key === "properties" && isRecord(value)) {
      const props: Schema = {};
      for (const [name, sub] of Object.entries(value)) {
        props[name] = root && name === "metadata" ? { type: "object" } : forAjv(sub, false);
      }
      out.properties = props;
    } else out[key] = forAjv(value, false);
  }
  if (schema["x-kubernetes-int-or-string"] === true) {
    delete out.type;
    out.anyOf = [{ type: "integer" }, { type: "string" }];
  }
  return out;
}

/** `/spec/env/0/name` as `spec.env[0].name`. */
export function fieldPath(pointer: string): string {
  let out = "";
  for (const raw of pointer.split("/").slice(1)) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out === "" ? part : `.${part}`;
  }
  return out;
}

function join(path: string, child: string): string {
  return path === "" ? child : `${path}.${child}`;
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value === "object" ? "object" : typeof value;
}

function show(value: unknown): string {
  return typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : JSON.stringify(value);
}

function ajvCause(error: ErrorObject): StatusCause | undefined {
  const field = fieldPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const data: unknown = error.data;
  const inBody = `${field} in body`;
  switch (error.keyword) {
    case "required":
      return {
        reason: "FieldValueRequired",
        message: "Required value",
        field: join(field, String(params.missingProperty)),
      };
    case "enum":
      return {
        reason: "FieldValueNotSupported",
        message: `Unsupported value: ${show(data)}: supported values: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`,
        field,
      };
    case "type":
      return {
        reason: "FieldValueTypeInvalid",
        message: `Invalid value: "${typeName(data)}": ${inBody} must be of type ${String(params.type)}: "${typeName(data)}"`,
        field,
      };
    case "maximum":
    case "minimum":
    case "exclusiveMaximum":
    case "exclusiveMinimum": {
      const words: Record<string, string> = {
        maximum: "less than or equal to",
        minimum: "greater than or equal to",
        exclusiveMaximum: "less than",
        exclusiveMinimum: "greater than",
      };
      return {
        reason: "FieldValueInvalid",
        message: `Invalid value: ${show(data)}: ${inBody} should be ${words[error.keyword]} ${String(params.limit)}`,
        field,
      };
    }
    case "minLength":
      return {
        reason: "FieldValueInvalid",
        message: `Invalid value: ${show(data)}: ${inBody} should be at least ${String(params.limit)} chars long`,
        field,
      };
    case "maxLength":
      return {
        reason: "FieldValueTooLong",
        message: `Too long: may not be more than ${String(params.limit)} bytes`,
        field,
      };
    case "pattern":
      return {
        reason: "FieldValueInvalid",
        message: `Invalid value: ${show(data)}: ${inBody} should match '${String(params.pattern)}'`,
        field,
      };
    case "minItems":
      return {
        reason: "FieldValueInvalid",
        message: `Invalid value: ${Array.isArray(data) ? data.length : 0}: ${inBody} should have at least ${String(params.limit)} items`,
        field,
      };
    case "maxItems":
      return {
        reason: "FieldValueTooMany",
        message: `Too many: ${Array.isArray(data) ? data.length : 0}: must have at most ${String(params.limit)} items`,
        field,
      };
    case "minProperties":
    case "maxProperties":
      return {
        reason: "FieldValueInvalid",
        message: `Invalid value: ${show(data)}: ${inBody} ${error.message ?? "is invalid"}`,
        field,
      };
    case "format":
      return {
        reason: "FieldValueInvalid",
        message: `Invalid value: ${show(data)}: ${inBody} must be of type ${String(params.format)}: ${show(data)}`,
        field,
      };
    case "anyOf":
      return {
        reason: "FieldValueInvalid",
        message: `Invalid value: ${show(data)}: ${inBody} must validate at least one schema (anyOf)`,
        field,
      };
    case "oneOf":
      return {
        reason: "FieldValueInvalid",
        message: `Invalid value: ${show(data)}: ${inBody} must validate one and only one schema (oneOf)`,
        field,
      };
    default:
      return {
        reason: "FieldValueInvalid",
        message: `Invalid value: ${show(data)}: ${inBody} ${error.message ?? "is invalid"}`,
        field,
      };
  }
}

/** One served version's schema of a CRD, ready to prune, default and validate objects. */
export class CustomResourceSchema {
  private validateFn: ValidateFunction | undefined;

  constructor(readonly schema: Schema) {}

  private compiled(): ValidateFunction {
    if (this.validateFn === undefined) {
      const schema = forAjv(this.schema, true) as Schema;
      const key = canonical(schema);
      let fn = compiledSchemas.get(key);
      if (fn === undefined) {
        fn = ajv().compile(schema);
        compiledSchemas.set(key, fn);
      }
      this.validateFn = fn;
    }
    return this.validateFn;
  }

  /** Removes fields the schema does not declare; returns their paths (`spec.foo`). */
  prune(obj: KObject): string[] {
    const pruned: string[] = [];
    if (isRecord(obj.metadata)) {
      for (const key of Object.keys(obj.metadata)) {
        if (!OBJECT_META_FIELDS.has(key)) {
          delete obj.metadata[key];
          pruned.push(`metadata.${key}`);
        }
      }
    }
    const walk = (value: unknown, schema: Schema, path: string, root: boolean): void => {
      if (Array.isArray(value)) {
        if (isRecord(schema.items)) {
          value.forEach((item, i) => walk(item, schema.items as Schema, `${path}[${i}]`, false));
        }
        return;
      }
      if (!isRecord(value)) return;
      const properties = isRecord(schema.properties) ? schema.properties : undefined;
      const additional = schema.additionalProperties;
      const preserve = schema["x-kubernetes-preserve-unknown-fields"] === true;
      const embedded = schema["x-kubernetes-embedded-resource"] === true;
      for (const key of Object.keys(value)) {
        if (root && (key === "apiVersion" || key === "kind" || key === "metadata")) continue;
        if (embedded && (key === "apiVersion" || key === "kind" || key === "metadata")) continue;
        const child = properties?.[key] ?? (isRecord(additional) ? additional : undefined);
        if (isRecord(child)) {
          if (value[key] === null && child.nullable !== true) delete value[key];
          else walk(value[key], child, join(path, key), false);
        } else if (!preserve && additional !== true) {
          delete value[key];
          pruned.push(join(path, key));
        }
      }
    };
    walk(obj, this.schema, "", true);
    return pruned;
  }

  /** Applies `default`s of absent fields, top-down. */
  applyDefaults(obj: KObject): void {
    const walk = (value: unknown, schema: Schema): void => {
      if (Array.isArray(value)) {
        if (isRecord(schema.items)) for (const item of value) walk(item, schema.items);
        return;
      }
      if (!isRecord(value)) return;
      if (isRecord(schema.properties)) {
        for (const [key, child] of Object.entries(schema.properties)) {
          if (!isRecord(child)) continue;
          if (value[key] === undefined && child.default !== undefined)
            value[key] = clone(child.default);
          if (value[key] !== undefined) walk(value[key], child);
        }
      }
      if (isRecord(schema.additionalProperties)) {
        for (const [key, child] of Object.entries(value)) {
          if (isRecord(schema.properties) && key in schema.properties) continue;
          walk(child, schema.additionalProperties);
        }
      }
    };
    walk(obj, this.schema);
  }

  /** Schema, list-type and CEL failures of `obj` (`old` for transition rules on update). */
  validate(obj: KObject, old?: KObject): StatusCause[] {
    const validate = this.compiled();
    const causes: StatusCause[] = [];
    if (!validate(obj)) {
      const errors = (validate.errors ?? []).filter(
        (e) => !e.schemaPath.includes("/anyOf/") && !e.schemaPath.includes("/oneOf/"),
      );
      for (const error of errors) {
        const cause = ajvCause(error);
        if (cause) causes.push(cause);
      }
    }
    const schemaFailed = causes.length > 0;
    this.walkRules(obj, old, this.schema, "", causes, schemaFailed);
    return causes;
  }

  private walkRules(
    value: unknown,
    old: unknown,
    schema: Schema,
    path: string,
    causes: StatusCause[],
    schemaFailed: boolean,
  ): void {
    if (value === undefined) return;
    const listType = schema["x-kubernetes-list-type"];
    if (Array.isArray(value) && (listType === "map" || listType === "set")) {
      const keys = (schema["x-kubernetes-list-map-keys"] as string[] | undefined) ?? [];
      const seen = new Set<string>();
      value.forEach((item, i) => {
        const identity =
          listType === "map" && isRecord(item)
            ? canonical(Object.fromEntries(keys.map((k) => [k, item[k]])))
            : canonical(item);
        if (seen.has(identity)) {
          causes.push({
            reason: "FieldValueDuplicate",
            message: `Duplicate value: ${identity}`,
            field: `${path}[${i}]`,
          });
        }
        seen.add(identity);
      });
    }
    const rules = schema["x-kubernetes-validations"];
    if (Array.isArray(rules)) {
      for (const rule of rules as CelRule[])
        this.checkRule(rule, value, old, path, causes, schemaFailed);
    }
    if (isRecord(value)) {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      for (const [key, child] of Object.entries(value)) {
        const sub = properties[key] ?? schema.additionalProperties;
        if (!isRecord(sub) || (path === "" && key === "metadata")) continue;
        this.walkRules(
          child,
          isRecord(old) ? old[key] : undefined,
          sub,
          join(path, key),
          causes,
          schemaFailed,
        );
      }
    } else if (Array.isArray(value) && isRecord(schema.items)) {
      const keys = (schema["x-kubernetes-list-map-keys"] as string[] | undefined) ?? [];
      const oldItems = Array.isArray(old) ? (old as unknown[]) : [];
      value.forEach((item, i) => {
        const previous =
          listType === "map" && isRecord(item)
            ? oldItems.find(
                (o) => isRecord(o) && keys.every((k) => canonical(o[k]) === canonical(item[k])),
              )
            : undefined;
        this.walkRules(
          item,
          previous,
          schema.items as Schema,
          `${path}[${i}]`,
          causes,
          schemaFailed,
        );
      });
    }
  }

  private checkRule(
    rule: CelRule,
    self: unknown,
    old: unknown,
    path: string,
    causes: StatusCause[],
    schemaFailed: boolean,
  ): void {
    const transition = /\boldSelf\b/.test(rule.rule);
    if (transition && old === undefined) return;
    let ok: boolean;
    let error: string | undefined;
    if (transition) {
      try {
        ok = compileRule(rule.rule)({ self: toCelValue(self), oldSelf: toCelValue(old) }) === true;
      } catch (err) {
        ok = false;
        error = (err as Error).message.split("\n")[0];
      }
    } else {
      const outcome = evaluateRule(rule.rule, self);
      ok = outcome.ok;
      if (!outcome.ok) error = outcome.error;
    }
    if (ok) return;
    if (error !== undefined && schemaFailed) return;
    let message = rule.message ?? `failed rule: ${rule.rule}`;
    if (rule.messageExpression !== undefined) {
      try {
        const text = compileRule(rule.messageExpression)({ self: toCelValue(self) });
        if (typeof text === "string" && text.length > 0) message = text;
      } catch {
        // the static message stands
      }
    }
    if (error !== undefined) message = `${error} evaluating rule: ${rule.rule}`;
    const field = rule.fieldPath ? `${path}${rule.fieldPath}` : path;
    const reason = rule.reason ?? "FieldValueInvalid";
    const prefixes: Record<string, string> = {
      FieldValueForbidden: "Forbidden: ",
      FieldValueRequired: "Required value: ",
      FieldValueDuplicate: "Duplicate value: ",
    };
    const text = prefixes[reason] ?? `Invalid value: "${typeName(self)}": `;
    causes.push({ reason, message: `${text}${message}`, field: field.replace(/^\./, "") });
  }
}

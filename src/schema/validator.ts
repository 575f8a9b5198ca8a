import { createRequire } from "node:module";
import type * as AjvModule from "ajv/dist/2020.js";
import type { Ajv2020, ErrorObject, KeywordCxt, ValidateFunction } from "ajv/dist/2020.js";
import { escapeSegment } from "../json-pointer.js";
import { didYouMean } from "../suggest.js";
import {
  type CelValueCache,
  type StructuralBounds,
  type RuleTree,
  exceedsBounds,
  ruleEvaluator,
  ruleTree,
  structuralBounds,
} from "./cel.js";
import { KINDS, type Kind, kindSchemaId } from "./kinds.js";
import {
  type SchemaFile,
  type SchemaNode,
  isCheckedSnapshot,
  loadInstalledSchemaFiles,
} from "./load.js";
import {
  type KeywordRuntime,
  PRECOMPILED_REFS,
  type Precompiled,
  loadPrecompiled,
  precompiledModuleRefs,
  precompiledModuleText,
} from "./precompiled.js";
import { SERVER_UNCHECKED, markServerUncheckedRules } from "./server-unchecked.js";
import { DURATION_PATTERN, markUnknownFields } from "./transform.js";
import {
  V1BETA1_API_VERSION,
  V1BETA1_KEYWORD,
  kindSchemaIdFor,
  v1beta1SchemaId,
  withVersionForms,
} from "./versions.js";
import { McpfleetError } from "../errors.js";

// ajv and its formats are loaded only when a validator must be compiled: a run on this
// installation's schemas uses the validators `make generate` compiled (see precompiled.ts),
// and loading and compiling were most of a one-file run's start. Both are CommonJS.
const require = createRequire(import.meta.url);
const ajvModule = (): typeof AjvModule => require("ajv/dist/2020.js") as typeof AjvModule;

export type IssueLevel = "schema" | "cel";

/** One problem found in a document, located by JSON pointer. */
export interface SchemaIssue {
  path: string;
  message: string;
  level: IssueLevel;
  /** Set on fields the schema does not declare (see --unknown-fields). */
  unknownField?: boolean;
  /**
   * Set on what the API server cannot check with our CRDs (a value union's type, a rule reading
   * one; see server-unchecked.ts): its verdict may differ from the validator's here.
   */
  serverUnchecked?: boolean;
}

interface CelRule {
  rule: string;
  /** The rule's syntax tree, as the precompiled validators carry it (see RuleTree). */
  tree?: RuleTree;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: string;
  [SERVER_UNCHECKED]?: boolean;
}

const CEL_KEYWORD = "x-kubernetes-validations";

/** ajv-formats's plugin: the CommonJS module is the function. */
const addFormats = (ajv: Ajv2020): Ajv2020 =>
  (require("ajv-formats") as (ajv: Ajv2020) => Ajv2020)(ajv);

/** `.a.b` (the fieldPath form of a CEL rule) as a JSON pointer suffix `/a/b`. */
function fieldPathToPointer(fieldPath: string | undefined): string {
  if (!fieldPath) return "";
  return fieldPath
    .split(".")
    .filter((part) => part.length > 0)
    .map((part) => "/" + escapeSegment(part))
    .join("");
}

/** No errors: shared, as almost every rule holds. */
const NO_ERRORS: ErrorObject[] = [];

/** The rules of one schema node, each looked up and compiled once (when ajv compiles the node). */
function celValidator(
  rules: readonly CelRule[],
  cache: () => CelValueCache,
  bounds: StructuralBounds | undefined,
): (data: unknown, instancePath: string) => ErrorObject[] {
  // Each rule is compiled when first evaluated: a run meets the rules of few nodes (this
  // matters to the cold start).
  const compiled = rules.map((rule) => ({
    rule,
    evaluate: undefined as ReturnType<typeof ruleEvaluator> | undefined,
    pointer: fieldPathToPointer(rule.fieldPath),
  }));
  return (data, instancePath) => {
    // Over its size limits the node already fails the schema: its rules are not run.
    if (exceedsBounds(data, bounds)) return NO_ERRORS;
    let errors = NO_ERRORS;
    for (const entry of compiled) {
      const { rule, pointer } = entry;
      entry.evaluate ??= ruleEvaluator(rule.rule, rule.tree);
      const outcome = entry.evaluate(data, cache);
      if (outcome.ok) continue;
      if (errors === NO_ERRORS) errors = [];
      errors.push({
        keyword: CEL_KEYWORD,
        instancePath: instancePath + pointer,
        schemaPath: "",
        params: { rule: rule.rule, serverUnchecked: rule[SERVER_UNCHECKED] === true },
        message:
          outcome.overBudget === true
            ? `${outcome.error} (rule: ${rule.rule})`
            : (rule.message ?? `failed rule: ${rule.rule}`),
      });
    }
    return errors;
  };
}

/**
 * The API server rejects a `map` list with two items of the same key, and a `set` list with two
 * equal items; so does the validator, pointing at the second occurrence.
 */
function duplicateListEntries(
  type: string,
  data: unknown,
  parent: SchemaNode | undefined,
  instancePath: string,
): ErrorObject[] {
  if ((type !== "map" && type !== "set") || !Array.isArray(data) || data.length < 2) {
    return NO_ERRORS;
  }
  const keys = (parent?.["x-kubernetes-list-map-keys"] as string[] | undefined) ?? [];
  const seen = new ListIdentities();
  let errors = NO_ERRORS;
  for (let index = 0; index < data.length; index++) {
    const item: unknown = data[index];
    const byKeys = type === "map" && item !== null && typeof item === "object";
    const record = item as Record<string, unknown>;
    // One key (nearly every list map: `name`): its value alone is the identity.
    const identity = !byKeys
      ? item
      : keys.length === 1
        ? record[keys[0]!]
        : keyValues(record, keys);
    if (!seen.add(identity)) continue;
    const json = JSON.stringify(byKeys ? keyValues(record, keys) : type === "map" ? [item] : item);
    const what = type === "map" ? `${keys.join(", ")} ${json.slice(1, -1)}` : `value ${json}`;
    if (errors === NO_ERRORS) errors = [];
    errors.push({
      keyword: "x-kubernetes-list-type",
      instancePath: `${instancePath}/${index}`,
      schemaPath: "",
      params: { type },
      message: `duplicate entry: ${what} appears more than once`,
    });
  }
  return errors;
}

/** The values of an item's map keys (null for a missing one, as JSON has it). */
function keyValues(item: Record<string, unknown>, keys: readonly string[]): unknown[] {
  return keys.map((k) => item[k] ?? null);
}

/**
 * The identities of a list's items, compared as their JSON texts would be: a scalar is kept as
 * itself (a missing key counts as null), anything else as its JSON text; each set is made on
 * first use.
 */
class ListIdentities {
  private scalars: Set<unknown> | undefined;
  private texts: Set<string> | undefined;

  /** Adds an identity; true when it was there already. */
  add(identity: unknown): boolean {
    if (identity !== null && typeof identity === "object") {
      const text = JSON.stringify(identity);
      this.texts ??= new Set();
      if (this.texts.has(text)) return true;
      this.texts.add(text);
      return false;
    }
    const scalar = identity ?? null;
    this.scalars ??= new Set();
    if (this.scalars.has(scalar)) return true;
    this.scalars.add(scalar);
    return false;
  }
}

const ROOT_DEFAULT = "strict mode: default is ignored in the schema root";
const STRICT_LOGGER = {
  log: () => undefined,
  warn: (message: unknown) => {
    if (message !== ROOT_DEFAULT) throw new McpfleetError("ERR_SCHEMA_LOAD", String(message));
  },
  error: (message: unknown) => {
    throw new McpfleetError("ERR_SCHEMA_LOAD", String(message));
  },
};

/** x-kubernetes-int-or-string: an integer or a string. */
function intOrString(enabled: boolean, data: unknown): boolean {
  return !enabled || typeof data === "string" || Number.isInteger(data);
}

/** x-kubernetes-list-type: no two items of a `map` list with one key, or of a `set` list, equal. */
function listType(
  type: string,
  data: unknown,
  parent?: SchemaNode,
  cxt?: { instancePath: string },
): boolean {
  const errors = duplicateListEntries(type, data, parent, cxt?.instancePath ?? "");
  (listType as unknown as { errors: ErrorObject[] }).errors = errors;
  return errors.length === 0;
}

/**
 * The functions our keywords call, for ajv and for the precompiled validators alike;
 * `celCache()` is the conversion cache of the validation under way (see CelValueCache).
 */
function keywordRuntime(celCache: () => CelValueCache): KeywordRuntime {
  const cel = (rules: readonly unknown[], bounds?: StructuralBounds) => {
    const check = celValidator(rules as readonly CelRule[], celCache, bounds);
    const validate = (data: unknown, cxt?: { instancePath: string }): boolean => {
      const errors = check(data, cxt?.instancePath ?? "");
      (validate as unknown as { errors: ErrorObject[] }).errors = errors;
      return errors.length === 0;
    };
    return validate;
  };
  return { cel, listType, intOrString };
}

/**
 * ajv with `files` added. `checked`: the schemas are known to conform to the meta-schema (see
 * isCheckedSnapshot);
 * `source`: keep the generated code, a statement a line, to write the validators out (see
 * precompiledModule).
 * Every function the generated code calls is given the code that names it in a module (the
 * keyword runtime, ajv's own runtime), so that ajv's standalone code can be made of it.
 */
function newAjv(
  runtime: KeywordRuntime,
  files: readonly SchemaFile[],
  checked: boolean,
  source = false,
): Ajv2020 {
  const { Ajv2020: Ajv, _, stringify } = ajvModule();
  const ajv = new Ajv({
    ...(checked ? { meta: false, validateSchema: false } : {}),
    // Defaults are filled in as each object is validated, before its keywords run; the CEL and
    // list-type keywords are `post`, so they see the object with every default below it, as
    // on the API server, which defaults a whole object before it validates.
    useDefaults: true,
    allErrors: true,
    strict: true,
    // Strict-mode findings are errors, except a default at the root of a schema compiled on its
    // own (a `$defs` entry's property, as tests do): it simply has nothing to fill in there.
    strictSchema: "log",
    logger: STRICT_LOGGER,
    // The optimiser of the generated code costs compile time and gains nothing measurable on
    // the validate benchmark.
    code: { optimize: false, source, lines: source },
    strictTypes: false,
    strictRequired: false,
    allowUnionTypes: true,
    verbose: true,
  });
  addFormats(ajv);
  replaceLengthKeywords(ajv);
  for (const keyword of [
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-embedded-resource",
    "x-mcpfleet-crd",
    V1BETA1_KEYWORD,
  ]) {
    ajv.addKeyword({ keyword });
  }
  ajv.scope.value("keyword", { ref: runtime.intOrString, code: _`runtime.intOrString` });
  ajv.addKeyword({
    keyword: "x-kubernetes-int-or-string",
    errors: true,
    validate: runtime.intOrString,
  });
  ajv.scope.value("keyword", { ref: runtime.listType, code: _`runtime.listType` });
  ajv.addKeyword({
    keyword: "x-kubernetes-list-type",
    schemaType: "string",
    post: true,
    errors: true,
    validate: runtime.listType,
  });
  ajv.addKeyword({
    keyword: CEL_KEYWORD,
    schemaType: "array",
    post: true,
    errors: true,
    compile: (rules: CelRule[], parent, it) => {
      const bounds = structuralBounds(parent);
      const validate = runtime.cel(rules, bounds);
      // The node's function in a module: made again from its rules when the module loads, each
      // with its syntax tree, so that the module's rules need no parser until one fails.
      const written = source ? rules.map((r) => ({ ...r, tree: ruleTree(r.rule) })) : rules;
      it.gen.scopeValue("keyword", {
        ref: validate,
        code:
          bounds === undefined
            ? _`runtime.cel(${stringify(written)})`
            : _`runtime.cel(${stringify(written)}, ${stringify(bounds)})`,
      });
      return validate;
    },
  });
  for (const file of markServerUncheckedRules(withVersionForms(files))) {
    ajv.addSchema(markUnknownFields(file.schema), file.id);
  }
  return ajv;
}

/**
 * maxLength and minLength as ajv has them (lengths in code points, as the API server counts),
 * except that the code points are counted only when the string's UTF-16 length leaves the
 * answer open: a string has at most as many code points as UTF-16 units, and at least half as
 * many. Counting walks the whole string, and almost every string is decided by its length.
 */
function replaceLengthKeywords(ajv: Ajv2020): void {
  const { _, str } = ajvModule();
  const ucs2length = (
    require("ajv/dist/runtime/ucs2length.js") as { default: (s: string) => number }
  ).default;
  ajv.removeKeyword("maxLength");
  ajv.removeKeyword("minLength");
  ajv.addKeyword({
    keyword: ["maxLength", "minLength"],
    type: "string",
    schemaType: "number",
    error: {
      message: ({ keyword, schemaCode }) =>
        str`must NOT have ${keyword === "maxLength" ? "more" : "fewer"} than ${schemaCode} characters`,
      params: ({ schemaCode }) => _`{limit: ${schemaCode}}`,
    },
    code(cxt: KeywordCxt) {
      const { keyword, data, schemaCode, gen } = cxt;
      const count = gen.scopeValue("func", {
        ref: ucs2length,
        code: _`require("ajv/dist/runtime/ucs2length").default`,
      });
      cxt.fail(
        keyword === "maxLength"
          ? _`${data}.length > ${schemaCode} && ${count}(${data}) > ${schemaCode}`
          : _`${data}.length < 2 * ${schemaCode} && ${count}(${data}) < ${schemaCode}`,
      );
    },
  });
}

function describeTypes(schema: unknown): string {
  const branches = (schema as { anyOf?: SchemaNode[] }).anyOf ?? [];
  const names = branches.map((b) => {
    const t = b.type;
    if (t === "array") {
      const itemType = (b.items as SchemaNode | undefined)?.type;
      return typeof itemType === "string" ? `a list of ${itemType}s` : "a list";
    }
    if (t === "object") return "an object";
    return typeof t === "string" ? `a ${t}` : "a value of another form";
  });
  return names.length > 0 ? `must be ${names.join(" or ")}` : "must match one of the allowed forms";
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** The "did you mean" of each unknown field met, by the schema node that lacks it. */
const fieldSuggestions = new WeakMap<object, Map<string, string>>();

/**
 * ` (did you mean "X"?)` naming the property declared beside an unknown field that it most
 * likely misspells (not only the unset ones: defaults are filled in by now), or "". Kept per
 * schema node and field: a set of copies repeats the same mistake, and each edit distance
 * to every property of a node is what a run with many unknown fields would spend its time on.
 */
function fieldSuggestion(error: ErrorObject, field: string): string {
  const node = error.parentSchema;
  const properties = node?.properties as unknown;
  if (node === undefined || properties === null || typeof properties !== "object") return "";
  let known = fieldSuggestions.get(node);
  if (known === undefined) fieldSuggestions.set(node, (known = new Map<string, string>()));
  let suggestion = known.get(field);
  if (suggestion === undefined) {
    suggestion = didYouMean(field, Object.keys(properties));
    // Bounded: a long-lived process (the controller) must not grow with every new misspelling.
    if (known.size < 256) known.set(field, suggestion);
  }
  return suggestion;
}

function toIssue(error: ErrorObject): SchemaIssue {
  const at = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case CEL_KEYWORD:
      return {
        path: at,
        message: error.message ?? "rule failed",
        level: "cel",
        ...(params.serverUnchecked === true ? { serverUnchecked: true } : {}),
      };
    case "required":
      return {
        path: `${at}/${escapeSegment(String(params.missingProperty))}`,
        message: `missing required field "${String(params.missingProperty)}"`,
        level: "schema",
      };
    case "unevaluatedProperties": {
      const field = String(params.unevaluatedProperty);
      return {
        path: `${at}/${escapeSegment(field)}`,
        message: `unknown field "${field}"${fieldSuggestion(error, field)}`,
        level: "schema",
        unknownField: true,
      };
    }
    case "enum": {
      const allowed = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ");
      return { path: at, message: `must be one of: ${allowed}`, level: "schema" };
    }
    case "type":
      return {
        path: at,
        message: `must be ${String(params.type)}, not ${typeOf(error.data)}`,
        level: "schema",
      };
    case "pattern":
      return {
        path: at,
        message:
          params.pattern === DURATION_PATTERN
            ? `must be a duration such as 30s, 5m or 1h30m, not ${JSON.stringify(error.data)}`
            : `must match pattern ${String(params.pattern)}`,
        level: "schema",
      };
    case "anyOf":
      // A value union: an untyped node to the API server.
      return {
        path: at,
        message: describeTypes(error.parentSchema),
        level: "schema",
        serverUnchecked: true,
      };
    case "x-kubernetes-int-or-string":
      return { path: at, message: "must be an integer or a string", level: "schema" };
    default:
      return { path: at, message: error.message ?? error.keyword, level: "schema" };
  }
}

/** True when some field of an object in `value` is null (rare: `env:` with nothing after it). */
function hasNullField(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasNullField(value[i])) return true;
    return false;
  }
  const fields = value as Record<string, unknown>;
  for (const key in fields) {
    const field = fields[key];
    if (field === null || hasNullField(field)) return true;
  }
  return false;
}

/** A copy without null fields. */
function dropNullFields(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const items: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) items[i] = dropNullFields(value[i]);
    return items;
  }
  const fields = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const field = fields[key];
    if (field !== null) out[key] = dropNullFields(field);
  }
  return out;
}

/** Ajv reports every failing branch of an anyOf; keep only the anyOf's own summary. */
function dropBranchErrors(errors: ErrorObject[]): ErrorObject[] {
  const anyOfPaths = errors.filter((e) => e.keyword === "anyOf").map((e) => e.schemaPath + "/");
  if (anyOfPaths.length === 0) return errors;
  return errors.filter(
    (e) => e.keyword === "anyOf" || !anyOfPaths.some((p) => e.schemaPath.startsWith(p)),
  );
}

/** Every schema under schemas/, compiled lazily, each root or `$defs` entry addressable by `$id`. */
export class SchemaSet {
  private celCache: CelValueCache | undefined;
  private readonly runtime: KeywordRuntime;
  /** The validators compiled ahead for these schemas, if they are the installed ones. */
  private readonly precompiled: Precompiled | undefined;
  private ajvInstance: Ajv2020 | undefined;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** The `$id`s of the schema files and of the kinds' v1beta1 forms, made on first use. */
  private v1beta1Ids: Set<string> | undefined;

  constructor(readonly files: readonly SchemaFile[]) {
    // A cache per validation, made only if a rule reaches the CEL engine.
    this.runtime = keywordRuntime(() => (this.celCache ??= new WeakMap()));
    this.precompiled = loadPrecompiled(files, this.runtime);
    // Other schemas are checked against the meta-schema now, as ajv adds them.
    if (this.precompiled === undefined) void this.ajv;
  }

  /** ajv with every schema added, made when a validator is not precompiled. */
  private get ajv(): Ajv2020 {
    if (this.ajvInstance === undefined) {
      this.ajvInstance = newAjv(this.runtime, this.files, isCheckedSnapshot(this.files));
    }
    return this.ajvInstance;
  }

  /** The compiled validator of a schema `$id` (optionally with a `#/$defs/...` fragment). */
  validator(ref: string): ValidateFunction {
    let fn = this.compiled.get(ref);
    if (fn === undefined) {
      fn = this.precompiled?.(ref) ?? this.ajv.getSchema(ref);
      if (fn === undefined) throw new McpfleetError("ERR_SCHEMA_LOAD", `no schema ${ref}`);
      this.compiled.set(ref, fn);
    }
    return fn;
  }

  /** Whether `ref`'s validator comes from generated/validators/ (for tests). */
  isPrecompiled(ref: string): boolean {
    return this.precompiled?.(ref) !== undefined;
  }

  /** Validates a document (left unchanged) against a schema, defaults applied first. */
  validateSchema(ref: string, doc: unknown): SchemaIssue[] {
    return this.validateOwned(ref, structuredClone(doc));
  }

  /** validateSchema() for a document the caller hands over: its defaults are filled in place. */
  validateSchemaInPlace(ref: string, doc: unknown): SchemaIssue[] {
    return this.validateOwned(ref, doc);
  }

  /**
   * Validates a document this set may modify: schema defaults are filled in, in place, as the
   * API server does before it validates (a CEL rule sees the defaulted object, so a default
   * that a rule forbids is caught here as on a cluster).
   */
  private validateOwned(ref: string, doc: unknown): SchemaIssue[] {
    const validate = this.validator(ref);
    // The document does not change while it is validated: CEL conversions can be shared.
    let valid: boolean;
    try {
      valid = validate(doc);
    } finally {
      this.celCache = undefined;
    }
    if (valid) return [];
    const seen = new Set<string>();
    const issues: SchemaIssue[] = [];
    for (const issue of dropBranchErrors(validate.errors ?? []).map(toIssue)) {
      const key = `${issue.path}\u0000${issue.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      issues.push(issue);
    }
    return issues;
  }

  /**
   * Validates a whole resource (left unchanged). As the API server does, a field whose value is
   * null (`env:` with nothing after it) is treated as absent rather than as a wrongly typed value.
   */
  validateKind(kind: string, doc: unknown): SchemaIssue[] {
    const owned = dropNullFields(doc);
    return this.validateOwned(this.kindRef(kind as Kind, owned), owned);
  }

  /**
   * validateKind() for a document the caller hands over: its defaults are filled in place (it is
   * copied only when it has null fields to leave out), so a run need not copy every resource.
   * `nullFields: false` says the caller knows it has none.
   */
  validateKindInPlace(kind: string, doc: unknown, nullFields = true): SchemaIssue[] {
    const owned = nullFields && hasNullField(doc) ? dropNullFields(doc) : doc;
    return this.validateOwned(this.kindRef(kind as Kind, owned), owned);
  }

  /** The schema of `kind` as `doc`'s apiVersion serves it (see versions.ts). */
  private kindRef(kind: Kind, doc: unknown): string {
    const apiVersion = (doc as { apiVersion?: unknown } | null)?.apiVersion;
    if (apiVersion !== V1BETA1_API_VERSION) return kindSchemaId(kind);
    this.v1beta1Ids ??= new Set(withVersionForms(this.files).map((f) => f.id));
    return kindSchemaIdFor(kind, apiVersion, this.v1beta1Ids);
  }
}

/**
 * The modules of generated/validators/ for `files` by file name (see precompiled.ts): ajv's
 * standalone code of the validators of PRECOMPILED_REFS and of the kinds' v1beta1 forms,
 * compiled exactly as a schema set compiles them.
 */
export function precompiledModules(
  files: readonly SchemaFile[],
  digest: string,
): Map<string, string> {
  const standaloneCode = require("ajv/dist/standalone/index.js") as {
    default: (ajv: Ajv2020, refs: Record<string, string>) => string;
  };
  const unused = () => {
    throw new McpfleetError(
      "ERR_INTERNAL",
      "the keyword runtime is given when the module is loaded",
    );
  };
  const ajv = newAjv(keywordRuntime(unused), files, true, true);
  const forms = withVersionForms(files).map((f) => f.id);
  const versioned = KINDS.map(v1beta1SchemaId).filter((id) => forms.includes(id));
  const modules = precompiledModuleRefs([...PRECOMPILED_REFS, ...versioned]);
  return new Map(
    [...modules].map(([file, refs]) => [
      file,
      precompiledModuleText(
        standaloneCode.default(ajv, Object.fromEntries(refs.map((ref) => [ref, ref]))),
        digest,
      ),
    ]),
  );
}

let defaultSet: SchemaSet | undefined;

/** The schema set of this installation's schemas/ directory, loaded once. */
export function defaultSchemaSet(): SchemaSet {
  return (defaultSet ??= new SchemaSet(loadInstalledSchemaFiles()));
}

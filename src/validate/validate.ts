// `mcpfleet validate` as a library: reads the inputs, classifies every document, runs the schema
// and CEL levels on each and the reference level across all of them, and returns one result per
// resource. Nothing here throws for bad input: every problem is a reported issue.
import { basename, extname } from "node:path";
import { McpfleetError } from "../errors.js";
import {
  API_GROUP,
  type Kind,
  REGISTRY_CONFIG_SCHEMA_ID,
  type SchemaIssue,
  type SchemaSet,
  defaultSchemaSet,
  asKind,
  isOwnApiVersion,
  KINDS,
  SERVED_VERSIONS,
} from "../schema/index.js";
import { didYouMean } from "../suggest.js";
import { issueLine } from "./format.js";
import { type ForeignVerdict, foreignVerdict } from "./foreign.js";
import { KUSTOMIZE_HINT, notAResource, templateIssue } from "./hints.js";
import { type CrdSchemas, loadCrds } from "./crds.js";
import { type ResourceFacts, resourceFacts } from "./reference-facts.js";
import { type ReferencePattern, referencePatternsOf } from "./reference-table.js";
import { ReferenceLevel } from "./references.js";
import { type EnforceNotes, EnforceServersLevel } from "./enforce-servers.js";
import {
  type RuntimeIssue,
  hasPodTemplate,
  podTemplateRuntimeIssues,
  runtimeIssues,
} from "./runtime-rules.js";
import {
  REGISTRY_CONFIG_KIND,
  type ConfigIssue,
  coveredCelIssue,
  looksLikeRegistryConfig,
  looksLikeRegistryData,
  sourceRuleIssues,
} from "./registry-config.js";
import {
  type Unit,
  addIssue,
  addPositionedIssue,
  describeValue,
  isObject,
  newUnit,
} from "./resource.js";
import {
  STDIN_PATH,
  type Input,
  collectInputs,
  isInputError,
  readFileCapped,
  readProcessStdin,
  readStdinCapped,
  type ReadOutcome,
} from "./sources.js";
import {
  DEFAULT_OPTIONS,
  EXIT_INVALID,
  EXIT_USAGE_OR_IO,
  EXIT_VALID,
  type Issue,
  type Level,
  type Report,
  type ResourceResult,
  type Summary,
  type ValidateOptions,
} from "./types.js";
import {
  type Position,
  type ParsedDocument,
  type ScalarOrigin,
  parseDocuments,
  reparsedDocument,
} from "./yaml-docs.js";

interface Context {
  options: ValidateOptions;
  set: SchemaSet;
  references: ReferenceLevel;
  /** enforceServers: MCPServer images against the catalogs of the namespace's MCPRegistries. */
  enforce: EnforceServersLevel;
  /** The one string of each namespace met (the run keeps one per resource). */
  namespaceOf: (namespace: string) => string;
  /** The reference patterns of a kind in this schema set. */
  patterns: (kind: Kind) => readonly ReferencePattern[];
  /** Other projects' kinds, from the CRDs given (`--crd`). */
  crds: CrdSchemas | undefined;
}

function newContext(options: ValidateOptions, set: SchemaSet): Context {
  return {
    options,
    set,
    references: new ReferenceLevel({ allowMissingRefs: options.allowMissingRefs }),
    enforce: new EnforceServersLevel(),
    namespaceOf: interner(),
    patterns: referencePatternsOf(set.files),
    crds: options.crdPaths.length > 0 ? loadCrds(options.crdPaths) : undefined,
  };
}

/** A function that returns the first string equal to each one it is given. */
function interner(): (s: string) => string {
  const seen = new Map<string, string>();
  return (s) => {
    const known = seen.get(s);
    if (known !== undefined) return known;
    seen.set(s, s);
    return s;
  };
}

/** Validates the files and directories named by `paths` (`-` for stdin; none means `.`). */
export async function validatePaths(
  paths: readonly string[],
  options: Partial<ValidateOptions> = {},
  set: SchemaSet = defaultSchemaSet(),
): Promise<Report> {
  return (await validateReadPaths(paths, options, set)).report;
}

/** A report, and the text of each file it was made from, in input order. */
export interface ValidatedTexts {
  report: Report;
  files: { name: string; text: string }[];
}

/**
 * Validates as validatePaths does and keeps the text each file had when it was read, so that a
 * caller (synth, apply, diff) renders exactly the bytes that were validated, without a second
 * read that could see a file changed in between.
 */
export async function validateReadPaths(
  paths: readonly string[],
  options: Partial<ValidateOptions> = {},
  set: SchemaSet = defaultSchemaSet(),
): Promise<ValidatedTexts> {
  const opts: ValidateOptions = { ...DEFAULT_OPTIONS, ...options };
  const ctx = newContext(opts, set);
  const results: ResourceResult[] = [];
  const files: { name: string; text: string }[] = [];
  const inputs = collectInputs(paths.length > 0 ? paths : ["."], opts.onSkippedDir);
  const pooled = await validateInPool(inputs, opts, set);
  for (const [i, input] of inputs.entries()) {
    opts.onProgress?.(i, inputs.length);
    if (isInputError(input)) {
      results.push(fileResult(input.name, input.error, "io"));
      continue;
    }
    const done = pooled?.get(i);
    if (done !== undefined) {
      results.push(...adoptPooledFile(done, ctx));
      files.push({ name: input.name, text: done.text });
      continue;
    }
    let read: ReadOutcome;
    if (input.path === STDIN_PATH) {
      const stdin = opts.stdin ?? (() => readProcessStdin(opts.maxFileBytes));
      read = await readStdinCapped(stdin, opts.maxFileBytes);
    } else {
      read = readFileCapped(input.path, opts.maxFileBytes);
    }
    if (!read.ok) {
      results.push(fileResult(input.name, read.message, read.kind === "io" ? "io" : "parse"));
      continue;
    }
    results.push(...(await validateText(input.name, read.text, ctx)));
    files.push({ name: input.name, text: read.text });
  }
  await finish(ctx, results);
  return { report: { resources: results, summary: summarise(results) }, files };
}

/** A file for a worker thread of the pool: validated with the default schema set. */
export interface PoolTask {
  name: string;
  path: string;
  options: Omit<ValidateOptions, "stdin" | "onProgress">;
}

/** A resource of ours validated in a worker: its facts for the reference level, and its place. */
interface PooledResource {
  /** Index of its result among the file's results. */
  result: number;
  facts: ResourceFacts;
  prefix: string;
  doc: { index: number; range: readonly [number, number]; start: Position };
}

/** What a worker sends back for one file: its results, and its text for later positions. */
export interface PooledFile {
  results: ResourceResult[];
  own: PooledResource[];
  enforce: EnforceNotes;
  text: string;
}

/** In a worker thread: reads and validates one file at the schema and CEL levels. */
export async function validatePooledFile(task: PoolTask): Promise<PooledFile> {
  const read = readFileCapped(task.path, task.options.maxFileBytes);
  if (!read.ok) {
    const level = read.kind === "io" ? "io" : "parse";
    const results = [fileResult(task.name, read.message, level)];
    return { results, own: [], enforce: new EnforceServersLevel().export(results), text: "" };
  }
  const ctx = newContext(task.options, defaultSchemaSet());
  const results = await validateText(task.name, read.text, ctx);
  const own = ctx.references.resources.map(({ result, prefix, doc, ...facts }) => ({
    result: results.indexOf(result),
    facts,
    prefix,
    doc: { index: doc.index, range: doc.range, start: doc.start },
  }));
  return { results, own, enforce: ctx.enforce.export(results), text: read.text };
}

/** Takes a worker's results for a file into this run, its resources into the reference level. */
function adoptPooledFile(done: PooledFile, ctx: Context): ResourceResult[] {
  const docs = new Map<number, ParsedDocument>();
  for (const r of done.own) {
    const result = done.results[r.result];
    if (result === undefined) continue;
    let doc = docs.get(r.doc.index);
    if (doc === undefined) {
      doc = reparsedDocument(done.text, r.doc.index, r.doc.range, r.doc.start);
      docs.set(r.doc.index, doc);
    }
    ctx.references.add(r.facts, { result, prefix: r.prefix, doc });
  }
  ctx.enforce.adopt(done.enforce, done.results);
  return done.results;
}

/**
 * The files validated on worker threads (see pool.ts), by input index; or undefined when the
 * run stays in this thread: no `threads` asked for, a schema set other than the default one
 * (workers load their own), or a worker that failed.
 */
async function validateInPool(
  inputs: readonly Input[],
  opts: ValidateOptions,
  set: SchemaSet,
): Promise<Map<number, PooledFile> | undefined> {
  if (opts.threads === undefined || opts.threads < 2 || set !== defaultSchemaSet())
    return undefined;
  const files: { index: number; task: PoolTask }[] = [];
  const { stdin: _stdin, onProgress: _onProgress, onSkippedDir: _onSkipped, ...options } = opts;
  inputs.forEach((input, index) => {
    if (isInputError(input) || input.path === STDIN_PATH) return;
    files.push({ index, task: { name: input.name, path: input.path, options } });
  });
  // Loaded only here: worker_threads and the pool were a part of every run's start-up.
  const { poolSize, runPool } = await import("./pool.js");
  const threads = poolSize(files.length, opts.threads);
  if (threads < 2) return undefined;
  try {
    const done = await runPool(
      files.map((f) => f.task),
      threads,
    );
    return new Map(files.map((f, i) => [f.index, done[i]!]));
  } catch {
    return undefined;
  }
}

/** Validates documents given as text (one "file"); the reference level sees only these. */
export async function validateTexts(
  files: readonly { name: string; text: string }[],
  options: Partial<ValidateOptions> = {},
  set: SchemaSet = defaultSchemaSet(),
): Promise<Report> {
  const opts: ValidateOptions = { ...DEFAULT_OPTIONS, ...options };
  const ctx = newContext(opts, set);
  const results: ResourceResult[] = [];
  for (const f of files) results.push(...(await validateText(f.name, f.text, ctx)));
  await finish(ctx, results);
  return { resources: results, summary: summarise(results) };
}

async function finish(ctx: Context, results: readonly ResourceResult[]): Promise<void> {
  ctx.references.finish();
  await ctx.enforce.finish();
  // Issues in the order of their position in the file, whatever level found them.
  const byPosition = (a: Issue, b: Issue) => a.line - b.line || a.column - b.column;
  for (const r of results) {
    if (r.errors.length > 1) r.errors = r.errors.toSorted(byPosition);
    if (r.warnings.length > 1) r.warnings = r.warnings.toSorted(byPosition);
  }
}

/** A result for a whole file that could not be read or is not text. */
function fileResult(file: string, message: string, level: "io" | "parse"): ResourceResult {
  return {
    file,
    line: 0,
    kind: "",
    namespace: "",
    name: "",
    valid: false,
    skipped: false,
    errors: [{ path: "", line: 0, column: 0, message, level }],
    warnings: [],
  };
}

async function validateText(file: string, text: string, ctx: Context): Promise<ResourceResult[]> {
  const results: ResourceResult[] = [];
  const docs = parseDocuments(text, ctx.options);
  // Index loops: this function can await, and iterators kept across an await are allocated.
  for (let d = 0; d < docs.length; d++) {
    const doc = docs[d]!;
    if (doc.empty) continue;
    if (doc.value === undefined) {
      results.push(unparsedResult(file, doc, text));
      continue;
    }
    const units = unitsOf(file, doc);
    for (let u = 0; u < units.length; u++) {
      const unit = units[u]!;
      if (doc.warnings.length > 0) addIssues(unit, doc.warnings, "warning");
      const waiting = validateUnit(unit, ctx);
      if (waiting !== undefined) await waiting;
      results.push(unit.result);
    }
    doc.release();
  }
  return results;
}

/**
 * The result of a document that did not parse: its syntax errors and warnings, or for a
 * template (a Helm chart's file) the one error that says so.
 */
function unparsedResult(file: string, doc: ParsedDocument, text: string): ResourceResult {
  const unit = newUnit(file, doc, "", undefined, doc.start);
  const template = doc.errors.length > 0 ? templateIssue(text, doc.range) : undefined;
  addIssues(unit, template === undefined ? doc.errors : [template], "error");
  addIssues(unit, doc.warnings, "warning");
  return unit.result;
}

function addIssues(unit: Unit, issues: readonly Issue[], severity: "error" | "warning"): void {
  for (const issue of issues) addPositionedIssue(unit, issue, severity);
}

/** A document, or each item of a List document (`kind: List` or `<Kind>List` with items). */
function unitsOf(file: string, doc: ParsedDocument): Unit[] {
  const value = doc.value;
  if (
    isObject(value) &&
    typeof value.kind === "string" &&
    value.kind.endsWith("List") &&
    Array.isArray(value.items)
  ) {
    return value.items.map((item: unknown, i) => {
      const prefix = `/items/${i}`;
      return newUnit(file, doc, prefix, item, doc.locate(prefix));
    });
  }
  return [newUnit(file, doc, "", value, doc.start)];
}

/**
 * Validates one unit; returns a promise only for work that waits (`--kube` schemas), so that
 * the usual run does not pass every resource through the microtask queue.
 */
function validateUnit(unit: Unit, ctx: Context): Promise<void> | undefined {
  const value = unit.value;
  if (!isObject(value)) {
    addIssue(
      unit,
      "",
      `a resource must be a mapping with apiVersion, kind and metadata, not ${describeValue(value)}`,
      "schema",
    );
    return;
  }
  if (ctx.options.registryConfig || looksLikeRegistryConfig(value)) {
    validateRegistryConfig(unit, value, ctx);
    return;
  }
  if (looksLikeRegistryData(value)) {
    unit.result.skipped = true;
    return;
  }
  const { apiVersion, kind } = value;
  // Strings kept for the whole run are shared where they repeat: kinds and namespaces.
  const ownKind = typeof kind === "string" ? asKind(kind) : undefined;
  if (typeof kind === "string") unit.result.kind = ownKind ?? kind;
  const metadata = isObject(value.metadata) ? value.metadata : {};
  unit.result.name = typeof metadata.name === "string" ? metadata.name : "";
  unit.result.namespace =
    typeof metadata.namespace === "string" && metadata.namespace !== ""
      ? ctx.namespaceOf(metadata.namespace)
      : ctx.options.namespace;
  if (typeof apiVersion !== "string" || typeof kind !== "string" || !apiVersion || !kind) {
    const other = notAResource(unit.result.file, value);
    if (other === KUSTOMIZE_HINT && ctx.options.ignoreMissingSchemas) {
      // A kustomization of a Flux-style tree, skipped as one with an apiVersion is; the CLI
      // says once that kustomizations were skipped.
      unit.result.kind = "Kustomization";
      unit.result.skipped = true;
      return;
    }
    if (other !== undefined) {
      addIssue(unit, "", other, "schema");
      return;
    }
    typeMetaIssue(unit, "apiVersion", apiVersion);
    typeMetaIssue(unit, "kind", kind);
    return;
  }

  const listed = kindListed(apiVersion, kind, ctx.options);
  if (listed === "reject") {
    addIssue(unit, "/kind", `${kind} of ${apiVersion} is rejected here (--reject)`, "schema");
    return;
  }
  if (listed === "skip") {
    unit.result.skipped = true;
    return;
  }
  const slash = apiVersion.indexOf("/");
  const group = slash === -1 ? "" : apiVersion.slice(0, slash);
  if (group === API_GROUP) {
    if (ownKind === undefined) {
      const suggestion = didYouMean(kind, KINDS);
      const known = suggestion === "" ? `; the kinds are ${KINDS.join(", ")}` : suggestion;
      addIssue(unit, "/kind", `unknown kind "${kind}" in API group ${API_GROUP}${known}`, "schema");
      return;
    }
    validateOwn(unit, ownKind, apiVersion, value, ctx);
    if (!hasPodTemplate(ownKind, value)) return;
    return podTemplateRuntimeIssues(ownKind, value).then((issues) =>
      addRuntimeIssues(unit, issues),
    );
  }
  if (apiVersion === "v1" && kind === "ConfigMap") {
    ctx.enforce.noteConfigMap(unit.result.namespace, value);
  }
  if (ctx.crds !== undefined && crdVerdict(unit, apiVersion, group, kind, value, ctx)) return;
  const verdict = foreignVerdict(apiVersion, kind, value, ctx.options);
  if (verdict instanceof Promise) return verdict.then((v) => settleForeign(unit, v));
  settleForeign(unit, verdict);
  return undefined;
}

/**
 * A kind a CRD given defines: validated with its schema and rules as ours are (true). A version
 * the CRD does not serve is an error naming those it does.
 */
function crdVerdict(
  unit: Unit,
  apiVersion: string,
  group: string,
  kind: string,
  value: Record<string, unknown>,
  ctx: Context,
): boolean {
  const crds = ctx.crds!;
  const id = crds.idOf(apiVersion, kind);
  if (id !== undefined) {
    addSchemaIssues(unit, crds.validate(id, value), ctx);
    return true;
  }
  const served = crds.versionsOf(group, kind);
  if (served.length === 0) return false;
  addIssue(
    unit,
    "/apiVersion",
    `no ${kind} in ${apiVersion}; its CRD (--crd) serves ${served.map((v) => `${group}/${v}`).join(", ")}`,
    "schema",
  );
  return true;
}

/** Whether `--reject` or `--skip` names the kind (`Kind` or `apiVersion/Kind`); reject wins. */
function kindListed(
  apiVersion: string,
  kind: string,
  options: ValidateOptions,
): "reject" | "skip" | undefined {
  const { rejectKinds, skipKinds } = options;
  if (rejectKinds.length === 0 && skipKinds.length === 0) return undefined;
  const gvk = `${apiVersion}/${kind}`;
  if (rejectKinds.includes(kind) || rejectKinds.includes(gvk)) return "reject";
  if (skipKinds.includes(kind) || skipKinds.includes(gvk)) return "skip";
  return undefined;
}

function settleForeign(unit: Unit, verdict: ForeignVerdict): void {
  if (verdict === "skipped") unit.result.skipped = true;
  else for (const i of verdict) addIssue(unit, i.path, i.message, "schema");
}

/** The issue, if any, of `apiVersion` or `kind` (`field`) having `v` as its value. */
function typeMetaIssue(unit: Unit, field: "apiVersion" | "kind", v: unknown): void {
  if (v === undefined || v === null || v === "") {
    addIssue(unit, `/${field}`, `missing required field "${field}"`, "schema");
  } else if (typeof v !== "string") {
    addIssue(unit, `/${field}`, `${field} must be a string, not ${describeValue(v)}`, "schema");
  }
}

function addSchemaIssues(
  unit: Unit,
  issues: readonly SchemaIssue[],
  ctx: Context,
  base = "",
  covered: readonly ConfigIssue[] = [],
): void {
  if (issues.length === 0) return;
  const unknownSeverity = unknownFieldSeverity(ctx.options);
  // A rule over a value that already fails its schema (a string where a list belongs, a
  // malformed duration) cannot be evaluated meaningfully: its message would mislead.
  const schemaPaths = new Set(
    issues.filter((i) => i.level === "schema" && i.unknownField !== true).map((i) => i.path),
  );
  for (const issue of issues) {
    if (coveredCelIssue(issue, base, covered)) continue;
    if (issue.level === "cel" && schemaPaths.has(issue.path)) continue;
    const unknown = issue.unknownField === true;
    const severity = unknown ? unknownSeverity : "error";
    if (severity === undefined) continue;
    addIssue(unit, issue.path, issue.message, levelOf(issue), severity, unknown ? "key" : "value");
  }
}

/**
 * What the API server cannot check with our CRDs (a value union) is reported at the run-time
 * level: the server admits the resource, synthesis then refuses it. The schema and CEL levels
 * stay the server's verdict.
 */
function levelOf(issue: SchemaIssue): Level {
  return issue.serverUnchecked === true ? "runtime" : issue.level;
}

/** How an unknown field is reported: `--strict` (kept for compatibility) makes it an error. */
function unknownFieldSeverity(options: ValidateOptions): "error" | "warning" | undefined {
  if (options.strict) return "error";
  if (options.unknownFields === "ignore") return undefined;
  return options.unknownFields === "warn" ? "warning" : "error";
}

function addConfigIssues(unit: Unit, base: string, issues: readonly ConfigIssue[]): void {
  for (const i of issues) addIssue(unit, base + i.path, i.message, "reference", "error", i.target);
}

function validateOwn(
  unit: Unit,
  kind: Kind,
  apiVersion: string,
  value: Record<string, unknown>,
  ctx: Context,
): void {
  // What the reference level needs is taken now, from the document as written, so that the
  // document itself need not be kept until every file has been read.
  const { namespace, name } = unit.result;
  if (name !== "") {
    const identity = { kind, namespace, name };
    const facts = resourceFacts(identity, value, ctx.patterns(kind), ctx.references.known);
    ctx.references.add(facts, unit);
  }
  if (kind === "MCPServer" || kind === "MCPRegistry") ctx.enforce.noteOwn(kind, unit, value);
  const spec = kind === "MCPRegistry" && isObject(value.spec) ? value.spec : undefined;
  const covered = spec === undefined ? [] : sourceRuleIssues(spec);
  const configYAML = typeof spec?.configYAML === "string" ? spec.configYAML : undefined;
  const issues = ctx.set.validateKindInPlace(kind, value, unit.doc.nullFields);
  if (!isOwnApiVersion(apiVersion) && !issues.some((i) => i.path === "/apiVersion")) {
    addIssue(
      unit,
      "/apiVersion",
      `${kind} is served as ${SERVED_VERSIONS.map((v) => `${API_GROUP}/${v}`).join(" or ")}, not ${apiVersion}`,
      "schema",
    );
  }
  // Server-side apply needs a name (generateName only works with create); the schemas'
  // ObjectMeta leaves it optional, so the validator checks it.
  if (isObject(value.metadata) && name === "" && !issues.some((i) => i.path === "/metadata/name")) {
    addIssue(unit, "/metadata/name", 'missing required field "name"', "schema");
  }
  addSchemaIssues(unit, issues, ctx, "/spec", covered);
  addConfigIssues(unit, "/spec", covered);
  addRuntimeIssues(unit, runtimeIssues(kind, value));
  if (configYAML !== undefined) validateEmbeddedConfig(unit, "/spec/configYAML", configYAML, ctx);
}

function addRuntimeIssues(unit: Unit, issues: readonly RuntimeIssue[]): void {
  for (const i of issues) addIssue(unit, i.path, i.message, "runtime", i.severity);
}

function validateRegistryConfig(unit: Unit, value: Record<string, unknown>, ctx: Context): void {
  unit.result.kind = REGISTRY_CONFIG_KIND;
  unit.result.name = registryConfigName(unit.result.file);
  const covered = sourceRuleIssues(value);
  addSchemaIssues(
    unit,
    ctx.set.validateSchemaInPlace(REGISTRY_CONFIG_SCHEMA_ID, value),
    ctx,
    "",
    covered,
  );
  addConfigIssues(unit, "", covered);
}

function registryConfigName(file: string): string {
  const base = basename(file);
  return base.slice(0, base.length - extname(base).length) || base;
}

/**
 * An MCPRegistry's `configYAML` is a whole registry-server configuration in a string: it is
 * parsed and validated like a configuration file, its issues reported on `configYAML` (at the
 * run-time level: the API server admits any string) at the
 * line and column inside the block scalar.
 */
function validateEmbeddedConfig(unit: Unit, pointer: string, text: string, ctx: Context): void {
  const docs = parseDocuments(text, ctx.options).filter((d) => !d.empty);
  // Where the string starts is looked up only for an issue: most configurations have none.
  let origin: ScalarOrigin | undefined;
  let looked = false;
  const report = (issue: Issue, severity: "error" | "warning", inner: string): void => {
    if (!looked) {
      origin = unit.doc.scalarOrigin(unit.prefix + pointer);
      looked = true;
    }
    let line: number;
    let column: number;
    if (origin === undefined) {
      ({ line, column } = unit.doc.locate(unit.prefix + pointer));
    } else if (origin.lines && issue.line > 0) {
      line = origin.line + issue.line - 1;
      column = origin.column + issue.column - 1;
    } else {
      ({ line, column } = origin);
    }
    const where = inner === "" ? "" : ` at ${inner}`;
    // The API server sees a string; the registry server refuses the configuration at start.
    const message = `configYAML${where}: ${issue.message}`;
    const level = "runtime";
    addPositionedIssue(unit, { ...issue, path: pointer, line, column, message, level }, severity);
  };
  if (docs.length === 0) {
    report({ path: "", line: 0, column: 0, message: "is empty", level: "schema" }, "error", "");
    return;
  }
  if (docs.length > 1) {
    const second = docs[1]!;
    report(
      { path: "", ...second.start, message: "must hold one YAML document", level: "parse" },
      "error",
      "",
    );
  }
  const doc = docs[0]!;
  for (const e of doc.errors) report(e, "error", "");
  for (const w of doc.warnings) report(w, "warning", "");
  if (doc.value === undefined) return;
  const position = (path: string, target: "value" | "key" = "value"): Issue => ({
    path,
    ...doc.locate(path, target),
    message: "",
    level: "schema",
  });
  const covered = sourceRuleIssues(doc.value);
  const schemaIssues = ctx.set.validateSchemaInPlace(REGISTRY_CONFIG_SCHEMA_ID, doc.value);
  const schemaPaths = new Set(
    schemaIssues.filter((i) => i.level === "schema" && i.unknownField !== true).map((i) => i.path),
  );
  const unknownSeverity = unknownFieldSeverity(ctx.options);
  for (const issue of schemaIssues) {
    if (coveredCelIssue(issue, "", covered)) continue;
    if (issue.level === "cel" && schemaPaths.has(issue.path)) continue;
    const unknown = issue.unknownField === true;
    const severity = unknown ? unknownSeverity : "error";
    if (severity === undefined) continue;
    report(
      {
        ...position(issue.path, unknown ? "key" : "value"),
        message: issue.message,
        level: issue.level,
      },
      severity,
      issue.path,
    );
  }
  for (const c of covered) {
    report(
      { ...position(c.path, c.target), message: c.message, level: "reference" },
      "error",
      c.path,
    );
  }
}

export function summarise(results: readonly ResourceResult[]): Summary {
  const summary: Summary = {
    resources: results.length,
    valid: 0,
    invalid: 0,
    skipped: 0,
    errors: 0,
    warnings: 0,
  };
  for (const r of results) {
    if (r.skipped) summary.skipped++;
    else if (r.valid) summary.valid++;
    else summary.invalid++;
    summary.errors += r.errors.length;
    summary.warnings += r.warnings.length;
  }
  return summary;
}

/**
 * 2 when a path could not be read, else 1 when anything is invalid or nothing was found (unless
 * `allowEmpty`: an empty input in CI is most often a pipeline that rendered nothing), else 0.
 */
export function exitCode(report: Report, { allowEmpty = false } = {}): number {
  if (report.resources.some((r) => r.errors.some((e) => e.level === "io"))) return EXIT_USAGE_OR_IO;
  if (report.resources.length === 0 && !allowEmpty) return EXIT_INVALID;
  return report.summary.invalid > 0 ? EXIT_INVALID : EXIT_VALID;
}

/**
 * For commands that must not act on invalid input (synth, the controller): throws
 * ERR_INVALID_RESOURCES naming the first errors, or returns when the report has none.
 */
export function assertValid(report: Report, shown = 20): void {
  const lines: string[] = [];
  for (const r of report.resources) {
    for (const e of r.errors) lines.push(issueLine(r, e, "error"));
  }
  if (lines.length === 0) return;
  const more = lines.length > shown ? `\n... and ${lines.length - shown} more` : "";
  throw new McpfleetError(
    "ERR_INVALID_RESOURCES",
    `${lines.length} validation error(s):\n${lines.slice(0, shown).join("\n")}${more}`,
  );
}

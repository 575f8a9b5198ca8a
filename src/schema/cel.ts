import { createRequire } from "node:module";
import type * as CelEngine from "@marcbachmann/cel-js";
import type { ASTNode, Environment } from "@marcbachmann/cel-js";
import { type FastRule, compileFastRule } from "./cel-fast.js";
import { McpfleetError } from "../errors.js";

// The CEL engine is loaded when a rule must be parsed or evaluated by it: the rules of this
// installation's schemas come with their syntax trees (see RuleTree), and most rules hold and
// are decided by their shortcut, so a run whose documents are valid may never load it.
const require = createRequire(import.meta.url);
let engine: Environment | undefined;

/**
 * CEL as the Kubernetes API server evaluates `x-kubernetes-validations`: `self` is the node the
 * rule sits on, integers are CEL ints, optionals are enabled. Programs are compiled once per rule.
 */
function environment(): Environment {
  if (engine === undefined) {
    const cel = require("@marcbachmann/cel-js") as typeof CelEngine;
    engine = new cel.Environment({
      unlistedVariablesAreDyn: true,
      homogeneousAggregateLiterals: false,
      enableOptionalTypes: true,
    });
  }
  return engine;
}

type Program = ((context: Record<string, unknown>) => unknown) & { ast: ASTNode };

interface CompiledRule {
  /** The engine's program, parsed when the engine is first asked (see programOf). */
  program: Program | undefined;
  /** The shortcut for when the rule holds (cel-fast.ts); undefined: the engine only. */
  fast: FastRule | undefined;
  /** How deeply the rule's comprehensions nest (`all` inside `all`: 2). */
  depth: number;
}

/**
 * Most elements the engine may visit for one rule, estimated as the longest list or map the
 * rule sees raised to the nesting of its comprehensions: the API server bounds a rule's cost the
 * same way (its per-expression limit is 1,000,000 units). Above it the rule is not evaluated
 * and reported as failed, so no document makes validation quadratic.
 */
export const CEL_COST_BUDGET = 1_000_000;

const MACROS = new Set(["all", "exists", "exists_one", "filter", "map"]);

/** The deepest nesting of comprehensions in a syntax tree. */
function comprehensionDepth(n: unknown): number {
  if (Array.isArray(n)) return Math.max(0, ...n.map(comprehensionDepth));
  if (n === null || typeof n !== "object" || !("op" in n)) return 0;
  const x = n as { op: unknown; args: unknown };
  const inner = comprehensionDepth(x.args);
  const name = Array.isArray(x.args) ? (x.args as unknown[])[0] : undefined;
  return x.op === "rcall" && typeof name === "string" && MACROS.has(name) ? inner + 1 : inner;
}

/** The length of the longest list or map in a value (an iterative walk). */
function longestCollection(value: unknown): number {
  let longest = 0;
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    const items = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
    longest = Math.max(longest, items.length);
    for (const item of items) if (item !== null && typeof item === "object") stack.push(item);
  }
  return longest;
}
const compiled = new Map<string, CompiledRule>();

/** A rule the CEL engine cannot parse: a mistake in a schema, or in a CRD given with --crd. */
export class CelCompileError extends McpfleetError {
  constructor(message: string) {
    super("ERR_CEL_COMPILE", message);
    this.name = "CelCompileError";
  }
}

function parse(rule: string): Program {
  try {
    return environment().parse(rule) as Program;
  } catch (err) {
    throw new CelCompileError((err as Error).message);
  }
}

/**
 * A rule's syntax tree as data: what the engine's parser gives, without source positions, whole
 * numbers as `{ "int": "12" }` (they are BigInts). Written into the precompiled validators with
 * each rule, so that its shortcut is made without the engine.
 */
export type RuleTree = unknown;

/** The syntax tree of a rule as a RuleTree. */
export function ruleTree(rule: string): RuleTree {
  const strip = (n: unknown): unknown => {
    if (typeof n === "bigint") return { int: String(n) };
    if (Array.isArray(n)) return n.map(strip);
    if (n !== null && typeof n === "object" && "op" in n) {
      const { op, args } = n as { op: unknown; args: unknown };
      return { op, args: strip(args) };
    }
    if (n !== null && typeof n === "object") {
      throw new CelCompileError(`a syntax tree node of no known form in rule ${rule}`);
    }
    return n;
  };
  return strip(parse(rule).ast);
}

/** The syntax tree a RuleTree was written from, as cel-fast.ts reads it. */
function fromRuleTree(tree: RuleTree): ASTNode {
  const build = (n: unknown): unknown => {
    if (Array.isArray(n)) return n.map(build);
    if (n !== null && typeof n === "object") {
      if ("op" in n) {
        const { op, args } = n as { op: unknown; args: unknown };
        return { op, args: build(args) };
      }
      return BigInt((n as { int: string }).int);
    }
    return n;
  };
  return build(tree) as ASTNode;
}

function compile(rule: string, tree?: RuleTree): CompiledRule {
  let entry = compiled.get(rule);
  if (entry === undefined) {
    const program = tree === undefined ? parse(rule) : undefined;
    const ast = program?.ast ?? fromRuleTree(tree);
    entry = { program, fast: compileFastRule(ast), depth: comprehensionDepth(ast) };
    compiled.set(rule, entry);
  }
  return entry;
}

/** The engine's program of a compiled rule, parsed on first use. */
function programOf(rule: string, entry: CompiledRule): Program {
  return (entry.program ??= parse(rule));
}

/** Compiles a rule, throwing CelCompileError with the engine's message when it does not parse. */
export function compileRule(rule: string): Program {
  return programOf(rule, compile(rule));
}

/** The shortcut closure of a rule, or undefined when the engine alone evaluates it. */
export function fastRuleOf(rule: string): FastRule | undefined {
  return compile(rule).fast;
}

/**
 * Objects already converted, by identity. The caller owns it and keeps it only while the data
 * cannot change (one validation): rules on nested nodes then reuse the conversion of their
 * subtree instead of converting it again for every rule.
 */
export type CelValueCache = WeakMap<object, unknown>;

/** JSON numbers that are whole become CEL ints, as the API server decodes them. */
export function toCelValue(value: unknown, cache?: CelValueCache): unknown {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (value === null || typeof value !== "object") return value;
  const known = cache?.get(value);
  if (known !== undefined) return known;
  let out: unknown;
  if (Array.isArray(value)) {
    const items: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) items[i] = toCelValue(value[i], cache);
    out = items;
  } else {
    const fields = value as Record<string, unknown>;
    const obj: Record<string, unknown> = {};
    for (const k of Object.keys(fields)) obj[k] = toCelValue(fields[k], cache);
    out = obj;
  }
  cache?.set(value, out);
  return out;
}

export type RuleOutcome = { ok: true } | { ok: false; error?: string; overBudget?: boolean };

const HOLDS: RuleOutcome = { ok: true };

/**
 * Evaluates a rule against `self`. A rule that cannot be evaluated (a runtime type error on data
 * that already failed the schema) is reported as not satisfied with the engine's reason. Most
 * rules hold and are decided by their shortcut; the rest go to the engine.
 */
export function evaluateRule(
  rule: string,
  self: unknown,
  cache?: CelValueCache | (() => CelValueCache),
): RuleOutcome {
  return ruleEvaluator(rule)(self, cache);
}

/** evaluateRule() for one rule, looked up once: for callers that evaluate it many times. */
export function ruleEvaluator(
  rule: string,
  tree?: RuleTree,
): (self: unknown, cache?: CelValueCache | (() => CelValueCache)) => RuleOutcome {
  const { fast, depth } = compile(rule, tree);
  return (self, cache) => {
    if (fast !== undefined && fast(self) === true) return HOLDS;
    if (depth >= 2 && longestCollection(self) ** depth > CEL_COST_BUDGET) {
      return {
        ok: false,
        overBudget: true,
        error: `not evaluated: the rule's estimated cost exceeds the budget of ${CEL_COST_BUDGET} (lists too long for its nested comprehensions)`,
      };
    }
    // The cache is asked for only now: most documents never reach the engine.
    return evaluateWithEngine(rule, self, typeof cache === "function" ? cache() : cache);
  };
}

/** evaluateRule() by the CEL engine alone. */
export function evaluateWithEngine(
  rule: string,
  self: unknown,
  cache?: CelValueCache,
): RuleOutcome {
  const program = programOf(rule, compile(rule));
  try {
    const result = program({ self: toCelValue(self, cache) });
    return result === true ? HOLDS : { ok: false };
  } catch (err) {
    return { ok: false, error: (err as Error).message.split("\n")[0] };
  }
}

/** The size limits of a schema node that bound what its rules iterate. */
interface SizeLimits {
  maxItems?: number;
  maxProperties?: number;
  maxLength?: number;
}

/**
 * The size limits of the node a rule list sits on and of its direct properties (inline ones).
 * A value over one of them already fails the schema, and the API server does not run the
 * rules there; neither do we (see exceedsBounds), so an oversized list costs no rule time.
 */
export interface StructuralBounds {
  self?: SizeLimits;
  properties?: Record<string, SizeLimits>;
}

function sizeLimits(node: unknown): SizeLimits | undefined {
  if (node === null || typeof node !== "object") return undefined;
  const n = node as Record<string, unknown>;
  const out: SizeLimits = {};
  for (const k of ["maxItems", "maxProperties", "maxLength"] as const) {
    if (typeof n[k] === "number") out[k] = n[k];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export function structuralBounds(schemaNode: unknown): StructuralBounds | undefined {
  const self = sizeLimits(schemaNode);
  const props = (schemaNode as { properties?: unknown } | null)?.properties;
  const properties: Record<string, SizeLimits> = {};
  if (props !== null && typeof props === "object") {
    for (const [k, v] of Object.entries(props)) {
      const limits = sizeLimits(v);
      if (limits !== undefined) properties[k] = limits;
    }
  }
  const bounds: StructuralBounds = {};
  if (self !== undefined) bounds.self = self;
  if (Object.keys(properties).length > 0) bounds.properties = properties;
  return bounds.self === undefined && bounds.properties === undefined ? undefined : bounds;
}

function over(value: unknown, limits: SizeLimits | undefined): boolean {
  if (limits === undefined) return false;
  if (Array.isArray(value)) return limits.maxItems !== undefined && value.length > limits.maxItems;
  if (typeof value === "string") {
    // Code points, as the schema counts them; a string within the limit in UTF-16 units is too.
    const max = limits.maxLength;
    return max !== undefined && value.length > max && [...value].length > max;
  }
  if (value !== null && typeof value === "object") {
    const max = limits.maxProperties;
    return max !== undefined && Object.keys(value).length > max;
  }
  return false;
}

/** Whether `data` breaks the size limits of its node or of a direct property. */
export function exceedsBounds(data: unknown, bounds: StructuralBounds | undefined): boolean {
  if (bounds === undefined) return false;
  if (over(data, bounds.self)) return true;
  if (bounds.properties === undefined || data === null || typeof data !== "object") return false;
  const record = data as Record<string, unknown>;
  for (const [k, limits] of Object.entries(bounds.properties)) {
    if (Object.hasOwn(record, k) && over(record[k], limits)) return true;
  }
  return false;
}

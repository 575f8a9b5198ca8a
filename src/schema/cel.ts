import { type ASTNode, Environment } from "@marcbachmann/cel-js";
import { type FastRule, compileFastRule } from "./cel-fast.js";

/**
 * CEL as the Kubernetes API server evaluates `x-kubernetes-validations`: `self` is the node the
 * rule sits on, integers are CEL ints, optionals are enabled. Programs are compiled once per rule.
 */
const environment = new Environment({
  unlistedVariablesAreDyn: true,
  homogeneousAggregateLiterals: false,
  enableOptionalTypes: true,
});

type Program = ((context: Record<string, unknown>) => unknown) & { ast: ASTNode };

interface CompiledRule {
  program: Program;
  /** The shortcut for when the rule holds (cel-fast.ts); undefined: the engine only. */
  fast: FastRule | undefined;
}
const compiled = new Map<string, CompiledRule>();

export class CelCompileError extends Error {
  readonly code = "ERR_CEL_COMPILE";
}

function compile(rule: string): CompiledRule {
  let entry = compiled.get(rule);
  if (entry === undefined) {
    let program: Program;
    try {
      program = environment.parse(rule);
    } catch (err) {
      throw new CelCompileError((err as Error).message);
    }
    entry = { program, fast: compileFastRule(program.ast) };
    compiled.set(rule, entry);
  }
  return entry;
}

/** Compiles a rule, throwing CelCompileError with the engine's message when it does not parse. */
export function compileRule(rule: string): Program {
  return compile(rule).program;
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

export type RuleOutcome = { ok: true } | { ok: false; error?: string };

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
): (self: unknown, cache?: CelValueCache | (() => CelValueCache)) => RuleOutcome {
  const { fast } = compile(rule);
  return (self, cache) => {
    if (fast !== undefined && fast(self) === true) return HOLDS;
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
  const { program } = compile(rule);
  try {
    const result = program({ self: toCelValue(self, cache) });
    return result === true ? HOLDS : { ok: false };
  } catch (err) {
    return { ok: false, error: (err as Error).message.split("\n")[0] };
  }
}

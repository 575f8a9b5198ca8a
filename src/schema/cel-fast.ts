// A shortcut for the common case of a CEL rule that holds. The rules of our schemas are small
// (`has`, comparisons, `size`, `all`/`exists` over short lists), and evaluating them through the
// CEL engine costs more than validating the rest of the document: every value is first converted
// to CEL's (whole numbers to BigInt), then walked by a general interpreter. Here a rule's syntax
// tree, as the engine parsed it, becomes a JavaScript closure over the plain JSON values.
//
// The closure only ever answers "the rule holds". Whenever its answer could differ from the
// engine's by a hair (a type it does not model, a missing field that CEL reports as an error, a
// non-integral number, a function it does not know), it answers UNSURE, and so does it when the
// rule is false: the engine then evaluates the rule as before, and its outcome and message are
// the ones reported. A test compares the two on every rule and many documents.
import type { ASTNode } from "@marcbachmann/cel-js";

/** The closure could not decide; the CEL engine must. */
export const UNSURE: unique symbol = Symbol("unsure");
type Unsure = typeof UNSURE;

/** A `google.protobuf.Duration`, in nanoseconds (only ever compared). */
class Duration {
  constructor(readonly nanos: number) {}
}

/**
 * Values a compiled rule works with: JSON values (whole numbers are CEL ints), Durations, and
 * UNSURE once anything is in doubt.
 */
type Value = unknown;
/** Variables by slot: `self` in slot 0, each comprehension's variable in the next one. */
type Scope = Value[];
type Compiled = (scope: Scope) => Value;
/** Slot of each variable in scope while compiling. */
type Variables = ReadonlyMap<string, number>;

/**
 * Thrown while compiling: a construct this module does not model (the engine evaluates it).
 * Never escapes: compileFastRule catches it and leaves the rule to the engine, so it carries no
 * catalogue code.
 */
class Unsupported extends Error {}

type Map_ = Record<string, unknown>;

function isMap(v: unknown): v is Map_ {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Duration);
}

/** A whole number CEL and JavaScript agree on (a JSON number in the safe range). */
function isInt(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v);
}

function isPrimitive(v: unknown): v is string | number | boolean {
  return typeof v === "string" || typeof v === "boolean" || isInt(v);
}

/** Equality of two values of the same primitive CEL type; UNSURE for anything else. */
function equal(a: Value, b: Value): boolean | Unsure {
  if (!isPrimitive(a) || !isPrimitive(b) || typeof a !== typeof b) return UNSURE;
  return a === b;
}

/**
 * Go's duration syntax, integers only (a strict subset of what the engine accepts): one or more
 * of digits followed by a unit, ns|us|µs|ms|s|m|h. Read by hand: rules that compare durations
 * run on every document that has one.
 */
function duration(text: Value): Duration | Unsure {
  if (typeof text !== "string" || text.length === 0) return UNSURE;
  let nanos = 0;
  let i = 0;
  while (i < text.length) {
    const start = i;
    let amount = 0;
    for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) {
      amount = amount * 10 + (c - 48);
    }
    const unit = i === start ? 0 : unitNanos(text, i);
    if (unit === 0) return UNSURE;
    nanos += amount * unit;
    // ns, us, µs and ms are two characters; s, m and h one.
    i += unit <= 1e6 ? 2 : 1;
  }
  return Number.isSafeInteger(nanos) ? new Duration(nanos) : UNSURE;
}

/** Nanoseconds of the duration unit at `i`, or 0 when there is none. */
function unitNanos(text: string, i: number): number {
  const next = text[i + 1];
  switch (text[i]) {
    case "n":
      return next === "s" ? 1 : 0;
    case "u":
    case "µ":
      return next === "s" ? 1e3 : 0;
    case "m":
      return next === "s" ? 1e6 : 60e9;
    case "s":
      return 1e9;
    case "h":
      return 3600e9;
    default:
      return 0;
  }
}

/** CEL's size: code points of a string, entries of a list or map. */
function size(v: Value): number | Unsure {
  if (typeof v === "string") {
    let n = 0;
    for (const _ of v) n++;
    return n;
  }
  if (Array.isArray(v)) return v.length;
  if (isMap(v)) return Object.keys(v).length;
  return UNSURE;
}

function compare(op: string, a: Value, b: Value): boolean | Unsure {
  let x: number;
  let y: number;
  if (isInt(a) && isInt(b)) [x, y] = [a, b];
  else if (a instanceof Duration && b instanceof Duration) [x, y] = [a.nanos, b.nanos];
  else return UNSURE;
  switch (op) {
    case "<":
      return x < y;
    case "<=":
      return x <= y;
    case ">":
      return x > y;
    default:
      return x >= y;
  }
}

/** `field` of a map; a missing field is an error in CEL. */
function select(target: Value, field: string): Value {
  if (!isMap(target) || !Object.hasOwn(target, field)) return UNSURE;
  const v = target[field];
  // Only values this module models go on (a fractional number is a CEL double).
  if (typeof v === "number" && !isInt(v)) return UNSURE;
  return v === undefined || v === null ? UNSURE : v;
}

function literal(value: unknown): Value {
  if (typeof value === "bigint") {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new Unsupported("large int literal");
    return n;
  }
  if (typeof value === "string" || typeof value === "boolean") return value;
  throw new Unsupported(`literal ${typeof value}`);
}

/** Elements a comprehension ranges over: a list's items, a map's keys. */
function rangeOf(v: Value): readonly unknown[] | Unsure {
  if (Array.isArray(v)) return v as unknown[];
  if (isMap(v)) return Object.keys(v);
  return UNSURE;
}

type Node = ASTNode | string | Node[];

function node(n: unknown): ASTNode {
  if (n === null || typeof n !== "object" || Array.isArray(n) || !("op" in n)) {
    throw new Unsupported("malformed syntax tree");
  }
  return n as ASTNode;
}

function args(n: ASTNode): Node[] {
  const a = (n as { args: unknown }).args;
  return Array.isArray(a) ? (a as Node[]) : [a as Node];
}

/**
 * Comprehension steps one evaluation of a rule may take before the closure gives up (UNSURE:
 * the engine's cost guard in cel.ts then decides). Rules with nested comprehensions over long
 * lists would otherwise cost the square or cube of the list's length.
 */
export const FAST_STEP_BUDGET = 1_000_000;
let steps = 0;

/** Comprehension steps the last evaluation of a rule took (what the budget counts). */
export function lastSteps(): number {
  return steps;
}

function compileMacro(name: string, range: Compiled, slot: number, body: Compiled): Compiled {
  const run = (scope: Scope, items: readonly unknown[]): Value => {
    let matches = 0;
    const kept: unknown[] = [];
    steps += items.length;
    if (steps > FAST_STEP_BUDGET) return UNSURE;
    for (const item of items) {
      scope[slot] = item;
      const v = body(scope);
      if (typeof v !== "boolean") return UNSURE;
      if (name === "all" && !v) return false;
      if (name === "exists" && v) return true;
      if (v) {
        matches++;
        if (name === "filter") kept.push(item);
      }
    }
    switch (name) {
      case "all":
        return true;
      case "exists":
        return false;
      case "exists_one":
        return matches === 1;
      default:
        return kept;
    }
  };
  return (scope) => {
    const items = rangeOf(range(scope));
    if (items === UNSURE) return UNSURE;
    const result = run(scope, items);
    scope[slot] = undefined; // no reference to the document outlives the evaluation
    return result;
  };
}

/** The closures of literals, with their values. */
const CONSTANTS = new WeakMap<Compiled, Value>();

function compileCall(name: string, receiver: Compiled | undefined, params: Compiled[]): Compiled {
  const [p] = params;
  if (receiver === undefined && params.length === 1 && p !== undefined) {
    if (name === "size") return (s) => size(p(s));
    if (name === "duration") {
      // `duration('0s')`: read once, when the rule is compiled.
      if (CONSTANTS.has(p)) {
        const d = duration(CONSTANTS.get(p));
        return () => d;
      }
      return (s) => duration(p(s));
    }
  }
  if (receiver !== undefined && params.length === 0) {
    if (name === "size") return (s) => size(receiver(s));
    if (name === "lowerAscii") {
      return (s) => {
        const v = receiver(s);
        return typeof v === "string" ? v.replace(/[A-Z]+/g, (c) => c.toLowerCase()) : UNSURE;
      };
    }
  }
  if (receiver !== undefined && params.length === 1 && p !== undefined) {
    if (name === "startsWith" || name === "endsWith" || name === "contains") {
      return (s) => {
        const v = receiver(s);
        const q = p(s);
        if (typeof v !== "string" || typeof q !== "string") return UNSURE;
        if (name === "startsWith") return v.startsWith(q);
        return name === "endsWith" ? v.endsWith(q) : v.includes(q);
      };
    }
  }
  // Another function (`matches`, whose RE2 syntax is not JavaScript's): the engine decides,
  // but a rule whose other branches decide it alone still takes the shortcut.
  return () => UNSURE;
}

/** A syntax tree as text, its operators and operands only (no source positions). */
function astText(n: unknown): string {
  if (Array.isArray(n)) return `[${n.map(astText).join(",")}]`;
  if (n !== null && typeof n === "object" && "op" in n) {
    const x = n as { op: unknown; args: unknown };
    return `{${JSON.stringify(x.op)}:${astText(x.args)}}`;
  }
  return JSON.stringify(n) ?? "undefined";
}

/**
 * `L.all(a, L.exists_one(b, b.k == a.k))` (or `b == a`): "the keys of L are unique", the
 * idiom our schemas use where CustomResourceDefinitions do not take uniqueItems. Evaluated
 * as written it costs the square of L's length; here it is one pass with a set. Undefined when
 * `n` is not the idiom.
 */
function compileUniqueness(n: ASTNode, variables: Variables): Compiled | undefined {
  const a = args(n);
  const params = a[2];
  if (a[0] !== "all" || !Array.isArray(params) || params.length !== 2) return undefined;
  const outer = node(params[0]);
  const inner = node(params[1]);
  const outerName = (outer as { args: unknown }).args;
  if (outer.op !== "id" || typeof outerName !== "string" || inner.op !== "rcall") {
    return undefined;
  }
  const b = args(inner);
  const innerParams = b[2];
  if (b[0] !== "exists_one" || !Array.isArray(innerParams) || innerParams.length !== 2) {
    return undefined;
  }
  // The same list on both sides, and not one that depends on the outer variable.
  const range = astText(a[1]);
  if (range !== astText(b[1]) || range.includes(JSON.stringify(outerName))) return undefined;
  const innerVar = node(innerParams[0]);
  const innerName = (innerVar as { args: unknown }).args;
  const cmp = node(innerParams[1]);
  if (innerVar.op !== "id" || typeof innerName !== "string" || cmp.op !== "==") return undefined;
  const key = (side: unknown): { variable: string; field?: string } | undefined => {
    const x = node(side);
    const xa = (x as { args: unknown }).args;
    if (x.op === "id" && typeof xa === "string") return { variable: xa };
    if (x.op !== ".") return undefined;
    const [target, field] = args(x);
    const t = node(target);
    const name = (t as { args: unknown }).args;
    if (t.op !== "id" || typeof name !== "string" || typeof field !== "string") return undefined;
    return { variable: name, field };
  };
  const [l, r] = args(cmp).map(key);
  if (l === undefined || r === undefined || l.field !== r.field) return undefined;
  const both = (x: string, y: string): boolean =>
    (l.variable === x && r.variable === y) || (l.variable === y && r.variable === x);
  if (innerName === outerName || !both(innerName, outerName)) return undefined;
  const list = compileNode(node(a[1]), variables);
  const field = l.field;
  return (scope) => {
    const items = rangeOf(list(scope));
    if (items === UNSURE) return UNSURE;
    steps += items.length;
    const seen = new Set<unknown>();
    let type: string | undefined;
    for (const item of items) {
      const k = field === undefined ? item : select(item, field);
      if (!isPrimitive(k) || (type !== undefined && typeof k !== type)) return UNSURE;
      type = typeof k;
      // A repeated key: the rule is false, and the engine says so (and how).
      if (seen.has(k)) return UNSURE;
      seen.add(k);
    }
    return true;
  };
}

function compileNode(n: ASTNode, variables: Variables): Compiled {
  switch (n.op) {
    case "value":
    case "list":
    case "id":
    case ".":
      return compileOperand(n, variables);
    case "!_":
    case "&&":
    case "||":
    case "?:":
      return compileLogic(n, variables);
    case "call":
    case "rcall":
      return compileCallNode(n, variables);
    default:
      return compileComparison(n, variables);
  }
}

/** Compiles the i-th of the operands `a`, in `variables` unless a macro binds more. */
function operandCompiler(
  a: Node[],
  variables: Variables,
): (i: number, vars?: Variables) => Compiled {
  return (i, vars = variables) => compileNode(node(a[i]), vars);
}

/** Literals, variables and field selections. */
function compileOperand(n: ASTNode, variables: Variables): Compiled {
  const a = args(n);
  const sub = operandCompiler(a, variables);
  switch (n.op) {
    case "value": {
      const v = literal((n as { args: unknown }).args);
      const constant = () => v;
      CONSTANTS.set(constant, v);
      return constant;
    }
    case "list": {
      // A list literal (`x in ['a', 'b']`): made once when its items are constants.
      const items = a.map((_, i) => sub(i));
      if (items.every((item) => CONSTANTS.has(item))) {
        const v = items.map((item) => CONSTANTS.get(item));
        return () => v;
      }
      return (s) => {
        const v = items.map((item) => item(s));
        return v.includes(UNSURE) ? UNSURE : v;
      };
    }
    case "id": {
      const name = (n as { args: unknown }).args;
      const slot = typeof name === "string" ? variables.get(name) : undefined;
      if (slot === undefined) throw new Unsupported("variable");
      return (scope) => {
        const v = scope[slot];
        return typeof v === "number" && !isInt(v) ? UNSURE : v;
      };
    }
    case ".": {
      const target = sub(0);
      const field = a[1];
      if (typeof field !== "string") throw new Unsupported("field");
      return (s) => {
        const t = target(s);
        return t === UNSURE ? UNSURE : select(t, field);
      };
    }
    default:
      throw new Unsupported(`operator ${n.op}`);
  }
}

/** Negation, the short-circuit operators and the conditional. */
function compileLogic(n: ASTNode, variables: Variables): Compiled {
  const a = args(n);
  const sub = operandCompiler(a, variables);
  switch (n.op) {
    case "!_": {
      const x = sub(0);
      return (s) => {
        const v = x(s);
        return typeof v === "boolean" ? !v : UNSURE;
      };
    }
    case "&&":
    case "||": {
      const [x, y] = [sub(0), sub(1)];
      const stop = n.op === "||";
      return (s) => {
        const l = x(s);
        if (typeof l !== "boolean") return UNSURE;
        if (l === stop) return stop;
        const r = y(s);
        return typeof r === "boolean" ? r : UNSURE;
      };
    }
    case "?:": {
      const [c, t, f] = [sub(0), sub(1), sub(2)];
      return (s) => {
        const v = c(s);
        if (typeof v !== "boolean") return UNSURE;
        return v ? t(s) : f(s);
      };
    }
    default:
      throw new Unsupported(`operator ${n.op}`);
  }
}

/** Equality, ordering, integer addition and `in`. */
function compileComparison(n: ASTNode, variables: Variables): Compiled {
  const a = args(n);
  const sub = operandCompiler(a, variables);
  switch (n.op) {
    case "==":
    case "!=": {
      const [x, y] = [sub(0), sub(1)];
      const negate = n.op === "!=";
      return (s) => {
        const l = x(s);
        const r = y(s);
        if (l === UNSURE || r === UNSURE) return UNSURE;
        const eq = equal(l, r);
        return eq === UNSURE ? UNSURE : eq !== negate;
      };
    }
    case "<":
    case "<=":
    case ">":
    case ">=": {
      const [x, y] = [sub(0), sub(1)];
      const op = n.op;
      return (s) => compare(op, x(s), y(s));
    }
    case "+": {
      const [x, y] = [sub(0), sub(1)];
      return (s) => {
        const l = x(s);
        const r = y(s);
        if (!isInt(l) || !isInt(r)) return UNSURE;
        const sum = l + r;
        return Number.isSafeInteger(sum) ? sum : UNSURE;
      };
    }
    case "in": {
      const [x, y] = [sub(0), sub(1)];
      return (s) => {
        const item = x(s);
        const container = y(s);
        if (isMap(container)) {
          return typeof item === "string" ? Object.hasOwn(container, item) : UNSURE;
        }
        if (!Array.isArray(container)) return UNSURE;
        for (const element of container) {
          const eq = equal(item, element);
          if (eq === UNSURE) return UNSURE;
          if (eq) return true;
        }
        return false;
      };
    }
    default:
      throw new Unsupported(`operator ${n.op}`);
  }
}

/** Function calls (`has(...)`, `size(x)`) and method calls with their macros. */
function compileCallNode(n: ASTNode, variables: Variables): Compiled {
  const a = args(n);
  const sub = operandCompiler(a, variables);
  switch (n.op) {
    case "call": {
      const name = a[0];
      const params = a[1];
      if (typeof name !== "string" || !Array.isArray(params)) throw new Unsupported("call");
      if (name === "has") {
        const selection = node(params[0]);
        if (params.length !== 1 || selection.op !== ".") throw new Unsupported("has");
        const inner = args(selection);
        const target = compileNode(node(inner[0]), variables);
        const field = inner[1];
        if (typeof field !== "string") throw new Unsupported("has field");
        return (s) => {
          const t = target(s);
          return isMap(t) ? Object.hasOwn(t, field) : UNSURE;
        };
      }
      const compiled = params.map((p) => compileNode(node(p), variables));
      return compileCall(name, undefined, compiled);
    }
    case "rcall": {
      const name = a[0];
      const params = a[2];
      if (typeof name !== "string" || !Array.isArray(params)) throw new Unsupported("call");
      const unique = compileUniqueness(n, variables);
      if (unique !== undefined) return unique;
      const receiver = sub(1);
      if (["all", "exists", "exists_one", "filter"].includes(name)) {
        const variable = node(params[0]);
        const varName = (variable as { args: unknown }).args;
        if (params.length !== 2 || variable.op !== "id" || typeof varName !== "string") {
          throw new Unsupported(name);
        }
        const slot = Math.max(...variables.values()) + 1;
        const body = compileNode(node(params[1]), new Map([...variables, [varName, slot]]));
        return compileMacro(name, receiver, slot, body);
      }
      const compiled = params.map((p) => compileNode(node(p), variables));
      return compileCall(name, receiver, compiled);
    }
    default:
      throw new Unsupported(`operator ${n.op}`);
  }
}

export type FastRule = (self: unknown) => boolean | Unsure;

/**
 * The closure of a rule whose every construct this module models, or undefined (the engine
 * evaluates that rule every time). Its answer is `true` or UNSURE, never `false`.
 */
export function compileFastRule(ast: ASTNode): FastRule | undefined {
  let compiled: Compiled;
  try {
    compiled = compileNode(ast, new Map([["self", 0]]));
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  // One scope per rule, reused: evaluation is synchronous and a rule never evaluates itself.
  const scope: Scope = [];
  return (self) => {
    if (self === null || self === undefined) return UNSURE;
    steps = 0;
    scope[0] = self;
    const holds = compiled(scope) === true;
    scope[0] = undefined;
    return holds ? true : UNSURE;
  };
}

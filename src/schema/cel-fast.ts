// A shortcut for the common case of a CEL rule that holds. The rules of our schemas are small
// (`has`, comparisons, `size`, `all`/`exists` over short lists), and evaluating them through the
// CEL engine costs more than validating the rest of the document: every value is first converted
// to CEL's (whole numbers to BigInt), then walked by a general interpreter. Here a rule's syntax
// tree, as the engine parsed it, becomes a JavaScript function over the plain JSON values.
//
// The function only ever answers "the rule holds". Whenever its answer could differ from the
// engine's by a hair (a type it does not model, a missing field that CEL reports as an error, a
// non-integral number, a function it does not know), it answers UNSURE, and so does it when the
// rule is false: the engine then evaluates the rule as before, and its outcome and message are
// the ones reported. A test compares the two on every rule and many documents.
import type { ASTNode } from "@marcbachmann/cel-js";

/** The shortcut could not decide; the CEL engine must. */
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
/** Slot of each variable in scope while compiling. */
type Variables = ReadonlyMap<string, number>;

/** Thrown while compiling: a construct this module does not model (the engine evaluates it). */
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

/** `item in container`: a key of a map, an element of a list. */
function inContainer(item: Value, container: Value): boolean | Unsure {
  if (isMap(container)) return typeof item === "string" ? Object.hasOwn(container, item) : UNSURE;
  if (!Array.isArray(container)) return UNSURE;
  for (const element of container) {
    const eq = equal(item, element);
    if (eq === UNSURE) return UNSURE;
    if (eq) return true;
  }
  return false;
}

/** The outcome of comprehension `name` (`all`, `exists`, `exists_one`, `filter`) over `items`. */
function comprehend(
  name: string,
  items: readonly unknown[],
  scope: Scope,
  slot: number,
  body: () => Value,
): Value {
  let matches = 0;
  const kept: unknown[] = [];
  for (const item of items) {
    scope[slot] = item;
    const v = body();
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
}

/** A comprehension over `range`, its variable in slot `slot` of `scope` while `body` runs. */
function comprehension(
  name: string,
  range: Value,
  scope: Scope,
  slot: number,
  body: () => Value,
): Value {
  const items = rangeOf(range);
  if (items === UNSURE) return UNSURE;
  const result = comprehend(name, items, scope, slot, body);
  scope[slot] = undefined; // no reference to the document outlives the evaluation
  return result;
}

/** What generated code calls: small functions, which the JIT compiler inlines into each rule. */
const RUNTIME = {
  U: UNSURE,
  variable: (v: Value): Value => (typeof v === "number" && !isInt(v) ? UNSURE : v),
  select,
  has: (target: Value, field: string): boolean | Unsure =>
    isMap(target) ? Object.hasOwn(target, field) : UNSURE,
  not: (v: Value): boolean | Unsure => (typeof v === "boolean" ? !v : UNSURE),
  bool: (v: Value): boolean | Unsure => (typeof v === "boolean" ? v : UNSURE),
  equals: (l: Value, r: Value, negate: boolean): boolean | Unsure => {
    if (l === UNSURE || r === UNSURE) return UNSURE;
    const eq = equal(l, r);
    return eq === UNSURE ? UNSURE : eq !== negate;
  },
  compare,
  plus: (l: Value, r: Value): number | Unsure => {
    if (!isInt(l) || !isInt(r)) return UNSURE;
    const sum = l + r;
    return Number.isSafeInteger(sum) ? sum : UNSURE;
  },
  inContainer,
  size,
  duration,
  lowerAscii: (v: Value): string | Unsure =>
    typeof v === "string" ? v.replace(/[A-Z]+/g, (c) => c.toLowerCase()) : UNSURE,
  text: (name: string, v: Value, q: Value): boolean | Unsure => {
    if (typeof v !== "string" || typeof q !== "string") return UNSURE;
    if (name === "startsWith") return v.startsWith(q);
    return name === "endsWith" ? v.endsWith(q) : v.includes(q);
  },
  comprehension,
};

/** A JavaScript expression for a node; `constant` when it is a literal, with its value. */
interface Code {
  js: string;
  constant?: { value: Value };
}

/**
 * Writes one rule as JavaScript source: an expression per node over the scope `S` (a closure
 * tree would call through a shared, megamorphic function per operator, several calls per node).
 * Values go to the generated code by index into `K`, names as JSON string literals: nothing of
 * a schema's text is spliced in unquoted.
 */
class RuleWriter {
  readonly constants: Value[] = [];
  /** Functions for comprehension bodies, declared before the rule's function. */
  readonly bodies: string[] = [];
  /** Temporaries of the function being written. */
  private temps: string[] = [];
  private count = 0;

  constant(value: Value): string {
    this.constants.push(value);
    return `K[${this.constants.length - 1}]`;
  }

  /** Writes `js` as a function body with its own temporaries: `() => { let t..; return js; }`. */
  function(write: () => string): string {
    const outer = this.temps;
    this.temps = [];
    const js = write();
    const declared = this.temps.length > 0 ? `let ${this.temps.join(", ")}; ` : "";
    this.temps = outer;
    return `() => { ${declared}return ${js}; }`;
  }

  temp(): string {
    const name = `t${this.count++}`;
    this.temps.push(name);
    return name;
  }

  node(n: ASTNode, variables: Variables): Code {
    const a = args(n);
    const sub = (i: number): string => this.node(node(a[i]), variables).js;
    switch (n.op) {
      case "value": {
        const value = literal((n as { args: unknown }).args);
        return { js: this.constant(value), constant: { value } };
      }
      case "id": {
        const name = (n as { args: unknown }).args;
        const slot = typeof name === "string" ? variables.get(name) : undefined;
        if (slot === undefined) throw new Unsupported("variable");
        return { js: `variable(S[${slot}])` };
      }
      case ".": {
        const target = sub(0);
        const field = a[1];
        if (typeof field !== "string") throw new Unsupported("field");
        return { js: `select(${target}, ${JSON.stringify(field)})` };
      }
      case "!_":
        return { js: `not(${sub(0)})` };
      case "&&":
      case "||": {
        const [x, y] = [sub(0), sub(1)];
        const stop = String(n.op === "||");
        const t = this.temp();
        return {
          js: `(typeof (${t} = ${x}) !== "boolean" ? U : ${t} === ${stop} ? ${stop} : bool(${y}))`,
        };
      }
      case "?:": {
        const [c, yes, no] = [sub(0), sub(1), sub(2)];
        const t = this.temp();
        return { js: `(typeof (${t} = ${c}) !== "boolean" ? U : ${t} ? ${yes} : ${no})` };
      }
      case "==":
      case "!=":
        return { js: `equals(${sub(0)}, ${sub(1)}, ${String(n.op === "!=")})` };
      case "<":
      case "<=":
      case ">":
      case ">=":
        return { js: `compare(${JSON.stringify(n.op)}, ${sub(0)}, ${sub(1)})` };
      case "+":
        return { js: `plus(${sub(0)}, ${sub(1)})` };
      case "in":
        return { js: `inContainer(${sub(0)}, ${sub(1)})` };
      case "call": {
        const name = a[0];
        const params = a[1];
        if (typeof name !== "string" || !Array.isArray(params)) throw new Unsupported("call");
        if (name === "has") {
          const selection = node(params[0]);
          if (params.length !== 1 || selection.op !== ".") throw new Unsupported("has");
          const inner = args(selection);
          const target = this.node(node(inner[0]), variables).js;
          const field = inner[1];
          if (typeof field !== "string") throw new Unsupported("has field");
          return { js: `has(${target}, ${JSON.stringify(field)})` };
        }
        const compiled = params.map((p) => this.node(node(p), variables));
        return { js: this.call(name, undefined, compiled) };
      }
      case "rcall": {
        const name = a[0];
        const params = a[2];
        if (typeof name !== "string" || !Array.isArray(params)) throw new Unsupported("call");
        const receiver = sub(1);
        if (["all", "exists", "exists_one", "filter"].includes(name)) {
          const variable = node(params[0]);
          const varName = (variable as { args: unknown }).args;
          if (params.length !== 2 || variable.op !== "id" || typeof varName !== "string") {
            throw new Unsupported(name);
          }
          const slot = Math.max(...variables.values()) + 1;
          const inner = new Map([...variables, [varName, slot]]);
          const body = this.function(() => this.node(node(params[1]), inner).js);
          this.bodies.push(body);
          const ref = `B[${this.bodies.length - 1}]`;
          return { js: `comprehension(${JSON.stringify(name)}, ${receiver}, S, ${slot}, ${ref})` };
        }
        const compiled = params.map((p) => this.node(node(p), variables));
        return { js: this.call(name, receiver, compiled) };
      }
      default:
        throw new Unsupported(`operator ${n.op}`);
    }
  }

  private call(name: string, receiver: string | undefined, params: Code[]): string {
    const [p] = params;
    if (receiver === undefined && params.length === 1 && p !== undefined) {
      if (name === "size") return `size(${p.js})`;
      if (name === "duration") {
        // `duration('0s')`: read once, when the rule is compiled.
        return p.constant ? this.constant(duration(p.constant.value)) : `duration(${p.js})`;
      }
    }
    if (receiver !== undefined && params.length === 0) {
      if (name === "size") return `size(${receiver})`;
      if (name === "lowerAscii") return `lowerAscii(${receiver})`;
    }
    if (receiver !== undefined && params.length === 1 && p !== undefined) {
      if (name === "startsWith" || name === "endsWith" || name === "contains") {
        return `text(${JSON.stringify(name)}, ${receiver}, ${p.js})`;
      }
    }
    // Another function (`matches`, whose RE2 syntax is not JavaScript's): the engine decides,
    // but a rule whose other branches decide it alone still takes the shortcut.
    return "U";
  }
}

export type FastRule = (self: unknown) => boolean | Unsure;

/**
 * The function of a rule whose every construct this module models, or undefined (the engine
 * evaluates that rule every time). Its answer is `true` or UNSURE, never `false`.
 */
export function compileFastRule(ast: ASTNode): FastRule | undefined {
  const writer = new RuleWriter();
  let rule: string;
  try {
    rule = writer.function(() => writer.node(ast, new Map([["self", 0]])).js);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  const names = Object.keys(RUNTIME).join(", ");
  // One scope per rule, reused: evaluation is synchronous and a rule never evaluates itself.
  const source =
    `const { ${names} } = R; const S = []; const B = [${writer.bodies.join(", ")}]; ` +
    `const rule = ${rule}; ` +
    `return (self) => { if (self === null || self === undefined) return U; ` +
    `S[0] = self; const holds = rule() === true; S[0] = undefined; return holds ? true : U; };`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- source written above from the rule's syntax tree
  const make = new Function("R", "K", source) as (runtime: typeof RUNTIME, k: Value[]) => FastRule;
  return make(RUNTIME, writer.constants);
}

// Label selectors (=, ==, !=, in, notin, exists, !exists) and field selectors (=, ==, != on the
// fields each resource supports), parsed from the query string as the API server does.
import { badRequest } from "./errors.js";
import { type KObject, isRecord } from "./types.js";

type LabelRequirement =
  | { op: "eq" | "neq"; key: string; value: string }
  | { op: "in" | "notin"; key: string; values: string[] }
  | { op: "exists" | "notexists"; key: string };

export type Selector = (obj: KObject) => boolean;

const KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** Splits on commas outside parentheses. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

function checkKey(key: string, text: string): string {
  if (!KEY.test(key))
    throw badRequest(`unable to parse requirement: invalid label key "${key}" in "${text}"`);
  return key;
}

function checkValue(value: string, text: string): string {
  if (!VALUE.test(value) || value.length > 63) {
    throw badRequest(`unable to parse requirement: invalid label value "${value}" in "${text}"`);
  }
  return value;
}

function parseRequirement(text: string): LabelRequirement {
  let m = /^!\s*(\S+)$/.exec(text);
  if (m) return { op: "notexists", key: checkKey(m[1]!, text) };
  m = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(text);
  if (m) {
    const values = m[3]!
      .split(",")
      .map((v) => v.trim())
      .map((v) => checkValue(v, text));
    return { op: m[2] === "in" ? "in" : "notin", key: checkKey(m[1]!, text), values };
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(text);
  if (m) {
    return {
      op: m[2] === "!=" ? "neq" : "eq",
      key: checkKey(m[1]!, text),
      value: checkValue(m[3]!, text),
    };
  }
  if (/^\S+$/.test(text)) return { op: "exists", key: checkKey(text, text) };
  throw badRequest(`unable to parse requirement: found '${text}', expected: identifier`);
}

function labelsOf(obj: KObject): Record<string, string> {
  const labels = obj.metadata?.labels;
  return isRecord(labels) ? labels : {};
}

export function parseLabelSelector(text: string | undefined): Selector | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const requirements = splitTop(text).map(parseRequirement);
  return (obj) => {
    const labels = labelsOf(obj);
    return requirements.every((r) => {
      const has = Object.prototype.hasOwnProperty.call(labels, r.key);
      const value = labels[r.key];
      switch (r.op) {
        case "eq":
          return has && value === r.value;
        case "neq":
          return !has || value !== r.value;
        case "in":
          return has && r.values.includes(value!);
        case "notin":
          return !has || !r.values.includes(value!);
        case "exists":
          return has;
        case "notexists":
          return !has;
      }
    });
  };
}

/** Reads a dotted field path (`metadata.name`, `involvedObject.kind`) as a string. */
function fieldValue(obj: KObject, path: string): string {
  let node: unknown = obj;
  for (const part of path.split(".")) {
    if (!isRecord(node)) return "";
    node = node[part];
  }
  if (node === undefined || node === null) return "";
  return typeof node === "string" ? node : JSON.stringify(node);
}

/** `fields` are the selectable fields besides metadata.name and metadata.namespace. */
export function parseFieldSelector(
  text: string | undefined,
  fields: readonly string[],
): Selector | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const allowed = new Set(["metadata.name", "metadata.namespace", ...fields]);
  const requirements = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .map((part) => {
      const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(part);
      if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
      const field = m[1]!.trim();
      if (!allowed.has(field)) {
        throw badRequest(
          `"${field}" is not a known field selector: only "${[...allowed].join('", "')}"`,
        );
      }
      return { field, negate: m[2] === "!=", value: m[3]!.trim() };
    });
  return (obj) => requirements.every((r) => (fieldValue(obj, r.field) === r.value) !== r.negate);
}

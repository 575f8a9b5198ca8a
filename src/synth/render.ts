import { ApiObject, App, Chart } from "cdk8s";
import { stringify } from "yaml";
import { KINDS, type Kind } from "../schema/kinds.js";
import type { RendererTable, SynthContext } from "./context.js";
import { RENDERERS } from "./constructs/index.js";
import { type KubeObject, type Resource, ResourceSet } from "./model.js";
import { DEFAULT_SYNTH_OPTIONS, type SynthOptions } from "./options.js";

/** Order objects are written and applied in: what others depend on comes first. */
const KIND_ORDER = [
  "Namespace",
  "CustomResourceDefinition",
  "ServiceAccount",
  "Secret",
  "ConfigMap",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
  "Service",
  "Deployment",
  "StatefulSet",
];

function kindRank(kind: string): number {
  const i = KIND_ORDER.indexOf(kind);
  return i === -1 ? KIND_ORDER.length : i;
}

/** Sorts objects by kind order, then kind, namespace and name: the output's only order. */
export function sortObjects(objects: KubeObject[]): KubeObject[] {
  return [...objects].sort(
    (a, b) =>
      kindRank(a.kind) - kindRank(b.kind) ||
      a.kind.localeCompare(b.kind) ||
      (a.metadata.namespace ?? "").localeCompare(b.metadata.namespace ?? "") ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
}

export interface SynthResult {
  /** Every rendered object, sorted. */
  objects: KubeObject[];
  /** Rendered objects per namespace, sorted. */
  byNamespace: Map<string, KubeObject[]>;
}

function render<K extends Kind>(
  table: RendererTable,
  kind: K,
  chart: Chart,
  resource: Resource<K>,
  context: SynthContext,
): void {
  const renderer = table[kind];
  if (renderer !== undefined) renderer(chart, resource, context);
}

/**
 * Renders validated resources into the Kubernetes objects an operator would create, one cdk8s
 * chart per namespace. The same resources give the same objects whatever their input order.
 */
export function synthesize(
  resources: Iterable<Resource>,
  options: SynthOptions = DEFAULT_SYNTH_OPTIONS,
  table: RendererTable = RENDERERS,
): SynthResult {
  const set = new ResourceSet(resources);
  const context: SynthContext = { resources: set, options };
  const app = new App();
  const byNamespace = new Map<string, KubeObject[]>();
  for (const namespace of set.namespaces()) {
    const chart = new Chart(app, `ns-${namespace}`, { namespace, disableResourceNameHashes: true });
    for (const kind of KINDS) {
      for (const resource of set.list(kind, namespace))
        render(table, kind, chart, resource, context);
    }
    // Each ApiObject renders itself; the chart's own toJson would also build a dependency graph
    // to order them, which sortObjects replaces.
    const objects = chart.node
      .findAll()
      .filter((c): c is ApiObject => c instanceof ApiObject)
      .map((o) => o.toJson() as KubeObject);
    byNamespace.set(namespace, sortObjects(objects));
  }
  const objects = sortObjects([...byNamespace.values()].flat());
  return { objects, byNamespace };
}

/** Multi-document YAML of objects, in the given order (the bytes `yaml`'s stringify writes). */
export function toYaml(objects: KubeObject[]): string {
  return objects.map((o) => yamlDocument(o)).join("---\n");
}

// A YAML writer for JSON data that writes exactly what the `yaml` package's stringify writes
// (lineWidth 0, no aliases), several times faster: structure is written directly, and only
// scalars that are not obviously plain are given to the library, one at a time, memoised.
// test/synth/yaml.test.ts compares the two on every example and on edge cases.

const PLAIN = /^[A-Za-z][A-Za-z0-9._/-]*$/;
const CORE_WORDS = new Set([
  "true",
  "True",
  "TRUE",
  "false",
  "False",
  "FALSE",
  "null",
  "Null",
  "NULL",
]);
const scalarCache = new Map<string, string>();
const keyCache = new Map<string, string>();

/**
 * The library's rendering of one string as a mapping value: a plain or quoted scalar, or a block
 * scalar header (`|`, `|-`, `|+`) followed by its lines, indented by two spaces.
 */
function stringScalar(value: string): string {
  if (PLAIN.test(value) && !CORE_WORDS.has(value)) return value;
  let out = scalarCache.get(value);
  if (out === undefined) {
    out = stringify({ k: value }, { lineWidth: 0 }).slice(3, -1);
    if (scalarCache.size > 50_000) scalarCache.clear();
    scalarCache.set(value, out);
  }
  return out;
}

function keyScalar(key: string): string {
  if (PLAIN.test(key) && !CORE_WORDS.has(key)) return key;
  let out = keyCache.get(key);
  if (out === undefined) {
    const text = stringify({ [key]: 0 }, { lineWidth: 0 });
    out = text.slice(0, text.lastIndexOf(": 0\n"));
    keyCache.set(key, out);
  }
  return out;
}

/** A scalar after "key: " or "- "; block scalars get their lines indented under `indent`. */
function scalar(value: unknown, indent: string): string {
  if (value === null) return "null\n";
  switch (typeof value) {
    case "boolean":
      return `${value}\n`;
    case "number":
      return Number.isInteger(value) ? `${value}\n` : `${stringify(value).slice(0, -1)}\n`;
    case "string": {
      const s = stringScalar(value);
      if (s.startsWith("|") || s.startsWith(">")) {
        const [header, ...lines] = s.split("\n");
        return `${header}\n${lines.map((l) => (l === "" ? "" : indent + l)).join("\n")}\n`;
      }
      return `${s}\n`;
    }
    default:
      return `${stringify(value).slice(0, -1)}\n`;
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function mapLines(obj: Record<string, unknown>, indent: string): string {
  let out = "";
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (value === undefined) continue;
    out += `${indent}${keyScalar(key)}:`;
    out += nested(value, indent);
  }
  return out;
}

/** What follows "key:" (or, for sequence items, "- " with `first`). */
function nested(value: unknown, indent: string): string {
  if (Array.isArray(value)) {
    return value.length === 0 ? " []\n" : `\n${seqLines(value, `${indent}  `)}`;
  }
  if (isMap(value)) {
    return Object.keys(value).length === 0 ? " {}\n" : `\n${mapLines(value, `${indent}  `)}`;
  }
  return ` ${scalar(value, indent)}`;
}

function seqLines(items: unknown[], indent: string): string {
  let out = "";
  const inner = `${indent}  `;
  for (const item of items) {
    out += `${indent}- `;
    if (Array.isArray(item)) {
      out += item.length === 0 ? "[]\n" : seqLines(item, inner).slice(inner.length);
    } else if (isMap(item)) {
      out += Object.keys(item).length === 0 ? "{}\n" : mapLines(item, inner).slice(inner.length);
    } else {
      out += scalar(item === undefined ? null : item, indent);
    }
  }
  return out;
}

/** One document: a mapping at the top level (every Kubernetes object). */
export function yamlDocument(value: unknown): string {
  if (isMap(value) && Object.keys(value).length > 0) return mapLines(value, "");
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

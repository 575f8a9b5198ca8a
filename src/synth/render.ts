import { ApiObject, App, Chart } from "cdk8s";
import { KINDS, type Kind } from "../schema/kinds.js";
import {
  emptyResolution,
  type RendererTable,
  type Resolution,
  type SynthContext,
} from "./context.js";
import { ownerOf } from "./constructs/common.js";
import { RENDERERS } from "./constructs/index.js";
import { type SynthIssue, SynthIssues } from "./issues.js";
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
  /** The resource each object (of `objects`) was rendered for. */
  owners: Map<KubeObject, Resource>;
  /** What the renderers reported, in the order resources are rendered (namespace, kind, name). */
  issues: SynthIssue[];
  /** What the renderers resolved that status reports too (computeStatus's `resolved`). */
  resolved: Resolution;
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

/** Runs every renderer: one cdk8s chart per namespace, holding the objects not yet rendered. */
function renderCharts(
  resources: Iterable<Resource>,
  options: SynthOptions,
  table: RendererTable,
): { charts: Map<string, Chart>; context: SynthContext; issues: SynthIssues } {
  const set = new ResourceSet(resources);
  const issues = new SynthIssues();
  const context: SynthContext = { resources: set, options, issues, resolved: emptyResolution() };
  const app = new App();
  const charts = new Map<string, Chart>();
  for (const namespace of set.namespaces()) {
    const chart = new Chart(app, `ns-${namespace}`, { namespace, disableResourceNameHashes: true });
    for (const kind of KINDS) {
      for (const resource of set.list(kind, namespace))
        render(table, kind, chart, resource, context);
    }
    charts.set(namespace, chart);
  }
  return { charts, context, issues };
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
  const { charts, context, issues } = renderCharts(resources, options, table);
  const byNamespace = new Map<string, KubeObject[]>();
  const owners = new Map<KubeObject, Resource>();
  for (const [namespace, chart] of charts) {
    // Each ApiObject renders itself; the chart's own toJson would also build a dependency graph
    // to order them, which sortObjects replaces.
    const objects = chart.node
      .findAll()
      .filter((c): c is ApiObject => c instanceof ApiObject)
      .map((o) => {
        const json = o.toJson() as KubeObject;
        const owner = ownerOf(o);
        if (owner !== undefined) owners.set(json, owner);
        return json;
      });
    byNamespace.set(namespace, sortObjects(objects));
  }
  const objects = sortObjects([...byNamespace.values()].flat());
  return { objects, byNamespace, owners, issues: issues.all(), resolved: context.resolved };
}

/**
 * What synthesize() reports of these resources (its `issues`, the same and in the same order),
 * without writing out the objects: the renderers report while they build them, and writing
 * them out (cdk8s resolving every value, the sort) is a third of a run's time. For a check
 * that renders nothing (validate's).
 */
export function synthesisIssues(
  resources: Iterable<Resource>,
  options: SynthOptions = DEFAULT_SYNTH_OPTIONS,
  table: RendererTable = RENDERERS,
): SynthIssue[] {
  return renderCharts(resources, options, table).issues.all();
}

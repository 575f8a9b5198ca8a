// The files a synthesis run writes: `<namespace>.yaml` per namespace and the install bundle
// under `install/` (output-dir.ts writes them into a directory).
import { McpfleetError } from "../errors.js";
import type { Resolution } from "./context.js";
import { installFiles } from "./install.js";
import type { SynthIssue } from "./issues.js";
import type { KubeObject, Resource } from "./model.js";
import { DEFAULT_SYNTH_OPTIONS, type SynthOptions } from "./options.js";
import { synthesize } from "./render.js";
import { toYaml } from "./yaml.js";

export interface RenderedFiles {
  /** Relative path -> content, in path order. */
  files: Map<string, string>;
  /** Number of objects rendered for the resources (install bundle not counted). */
  objects: number;
  namespaces: number;
  /** What the renderers reported (synthesize's issues). */
  issues: SynthIssue[];
  /** What the renderers resolved, for status (synthesize's resolved). */
  resolved: Resolution;
}

/** Namespaces every cluster has: no Namespace object is rendered for them. */
const BUILT_IN_NAMESPACES = new Set(["default", "kube-system", "kube-public", "kube-node-lease"]);

/**
 * A namespace's objects as its file holds them: its Namespace first (unless it is a built-in
 * one), so that applying the file on an empty cluster needs nothing else.
 */
export function namespaceFileObjects(namespace: string, objects: KubeObject[]): KubeObject[] {
  if (BUILT_IN_NAMESPACES.has(namespace)) return objects;
  const ns: KubeObject = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace, labels: { "app.kubernetes.io/managed-by": "mcpfleet" } },
  };
  return [ns, ...objects];
}

/**
 * Every output file of a run, as text. The same resources give the same bytes. Each namespace's
 * file starts with its Namespace (unless `namespaces` is false or it is a built-in one), so that
 * `kubectl apply -f DIR` works on an empty cluster.
 */
export function renderFiles(
  resources: Iterable<Resource>,
  options: SynthOptions = DEFAULT_SYNTH_OPTIONS,
  {
    install = true,
    namespaces: withNamespaces = true,
  }: { install?: boolean; namespaces?: boolean } = {},
): RenderedFiles {
  const result = synthesize(resources, options);
  // Validation refuses resources whose objects would collide; this guards the renderers too.
  const seen = new Set<string>();
  for (const o of result.objects) {
    const id = `${o.apiVersion}/${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    if (seen.has(id)) {
      throw new McpfleetError(
        "ERR_INVALID_RESOURCES",
        `two resources render the same object ${id}`,
      );
    }
    seen.add(id);
  }
  const files = new Map<string, string>();
  let namespaces = 0;
  for (const [namespace, objects] of result.byNamespace) {
    if (objects.length === 0) continue;
    namespaces++;
    files.set(
      `${namespace}.yaml`,
      toYaml(withNamespaces ? namespaceFileObjects(namespace, objects) : objects),
    );
  }
  if (install) {
    for (const [name, objects] of installFiles()) files.set(`install/${name}`, toYaml(objects));
  }
  const sorted = new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    files: sorted,
    objects: result.objects.length,
    namespaces,
    issues: result.issues,
    resolved: result.resolved,
  };
}

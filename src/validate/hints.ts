// What an input that is not resource YAML most likely is, and what to do instead: a parse error
// or a missing apiVersion says what is wrong, not why; the usual causes are few (tabs, an
// indentation slip, two resources without `---`, a Helm template or a kustomization given
// before it is rendered), and each gets a one-line hint.
import { basename } from "node:path";
import type { Issue } from "./types.js";
import { LineIndex, type Position } from "../yaml/model.js";

export const KUSTOMIZE_HINT =
  "a kustomization, not a resource: render it first, kustomize build DIR | mcpfleet validate";

const HELM_HINT = "render the chart first, helm template CHART | mcpfleet validate";

/** Top-level keys of a kustomization that no resource has. */
const KUSTOMIZATION_KEYS = [
  "resources",
  "bases",
  "components",
  "patches",
  "patchesStrategicMerge",
  "patchesJson6902",
  "configMapGenerator",
  "secretGenerator",
  "helmCharts",
];

/**
 * Why a document without apiVersion or kind is not a resource, when its file or keys tell:
 * a kustomization (kustomize lets it omit both), a Helm chart's Chart.yaml or values.yaml.
 */
export function notAResource(file: string, value: Record<string, unknown>): string | undefined {
  const name = basename(file);
  if (/^kustomization\.ya?ml$/i.test(name) || KUSTOMIZATION_KEYS.some((k) => k in value)) {
    return KUSTOMIZE_HINT;
  }
  if (name === "Chart.yaml") return `a Helm chart's Chart.yaml, not a resource: ${HELM_HINT}`;
  if (/^values(\.[\w-]+)?\.ya?ml$/.test(name)) {
    return `a Helm chart's values file, not a resource? ${HELM_HINT}`;
  }
  return undefined;
}

/** `{{ ... }}` outside a quoted string: a template action, which YAML reads as a flow mapping. */
const TEMPLATE_ACTION = /(^|[\s:[{,-])\{\{[^\n]*?\}\}/m;

/**
 * The one issue of a document that did not parse because it is a template (Helm's, or any Go
 * template): its YAML errors are consequences of the template actions, so they are left out.
 */
export function templateIssue(text: string, range: readonly [number, number]): Issue | undefined {
  const body = text.slice(range[0], range[1]);
  const found = TEMPLATE_ACTION.exec(body);
  if (found === null) return undefined;
  const offset = range[0] + found.index + found[1]!.length;
  const at: Position = new LineIndex(text).position(offset);
  return {
    path: "",
    ...at,
    message: `"{{" starts a template action, which is not YAML: ${HELM_HINT} (or quote a literal "{{ }}")`,
    level: "parse",
  };
}

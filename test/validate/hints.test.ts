// Input that is not resource YAML yet: each usual cause gets one line saying what it most
// likely is and what to do instead.
import { describe, expect, it } from "vitest";
import { check, issues } from "./helpers.js";

const SERVER = [
  "apiVersion: toolhive.stacklok.dev/v1alpha1",
  "kind: MCPServer",
  "metadata:",
  "  name: github",
  "spec:",
  "  image: ghcr.io/github/github-mcp-server",
  "",
].join("\n");

async function lines(files: Record<string, string>): Promise<string[]> {
  return issues(await check(files)).map(
    (i) => `${i.file}:${i.line}:${i.column}: ${i.message} (${i.level})`,
  );
}

describe("structural YAML errors", () => {
  it("a tab used as indentation", async () => {
    expect(await lines({ "s.yaml": SERVER.replace("  name", "\tname") })).toEqual([
      "s.yaml:4:1: Tabs are not allowed as indentation; YAML indents with spaces only: replace the tabs (parse)",
    ]);
  });

  it("a key indented less than its siblings", async () => {
    expect(await lines({ "s.yaml": SERVER.replace("spec:", " spec:") })).toEqual([
      "s.yaml:5:1: All mapping items must start at the same column; check this line's indentation against the lines above it (parse)",
    ]);
  });

  it("a key indented more than its siblings", async () => {
    const found = await lines({ "s.yaml": SERVER.replace("  image", "    image") + "  x: 1\n" });
    expect(found.length).toBeGreaterThan(0);
    for (const l of found) expect(l).toMatch(/check this line's indentation/);
  });

  it("two resources without --- between them", async () => {
    const group =
      "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPGroup\nmetadata:\n  name: eng\n";
    expect(await lines({ "s.yaml": SERVER + group })).toEqual([
      's.yaml:7:1: duplicate key "apiVersion": keys of a mapping must be unique; two resources in one document? separate them with a line "---" (parse)',
      's.yaml:8:1: duplicate key "kind": keys of a mapping must be unique; two resources in one document? separate them with a line "---" (parse)',
      's.yaml:9:1: duplicate key "metadata": keys of a mapping must be unique (parse)',
    ]);
  });

  it("a duplicate key inside a resource is only a duplicate key", async () => {
    expect(await lines({ "s.yaml": SERVER + "  image: again\n" })).toEqual([
      's.yaml:7:3: duplicate key "image": keys of a mapping must be unique (parse)',
    ]);
  });
});

describe("input given before it is rendered", () => {
  it("a Helm template: one error at its first action, saying to run helm template", async () => {
    const template = SERVER.replace("name: github", "name: {{ .Release.Name }}").replace(
      "spec:",
      '  labels:\n    {{- include "chart.labels" . | nindent 4 }}\nspec:',
    );
    expect(await lines({ "templates/server.yaml": template })).toEqual([
      'templates/server.yaml:4:9: "{{" starts a template action, which is not YAML: render the chart first, helm template CHART | mcpfleet validate (or quote a literal "{{ }}") (parse)',
    ]);
  });

  it("a quoted template in a valid resource is a string like any other", async () => {
    const quoted = SERVER.replace("ghcr.io/github/github-mcp-server", '"{{ .Values.image }}"');
    expect(await lines({ "s.yaml": quoted })).toEqual([]);
  });

  it("a Helm chart's Chart.yaml and values.yaml", async () => {
    expect(
      await lines({
        "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
        "chart/values.yaml": "image: x\n",
      }),
    ).toEqual([
      "chart/Chart.yaml:1:1: a Helm chart's Chart.yaml, not a resource: render the chart first, helm template CHART | mcpfleet validate (schema)",
      "chart/values.yaml:1:1: a Helm chart's values file, not a resource? render the chart first, helm template CHART | mcpfleet validate (schema)",
    ]);
  });

  it("a kustomization, with or without its apiVersion and kind", async () => {
    const hint =
      "a kustomization, not a resource: render it first, kustomize build DIR | mcpfleet validate (schema)";
    expect(
      await lines({
        "a/kustomization.yaml":
          "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - s.yaml\n",
        "b/kustomization.yml": "namespace: tools\n",
        "c/overlay.yaml": "resources:\n  - ../a\n",
      }),
    ).toEqual([
      `a/kustomization.yaml:2:7: ${hint}`,
      `b/kustomization.yml:1:1: ${hint}`,
      `c/overlay.yaml:1:1: ${hint}`,
    ]);
  });
});

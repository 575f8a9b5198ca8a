// Shared fixtures of the synth tests: resources built in code, rendering that always runs every
// object (and the runner's pod patch) through the Kubernetes checks, and lookups in the output.
import { expect } from "vitest";
import type { Kind } from "../../src/schema/kinds.js";
import { checkObjects, checkPodTemplate } from "../../src/synth/kube-check.js";
import type { KubeObject, Resource } from "../../src/synth/model.js";
import { DEFAULT_SYNTH_OPTIONS, type SynthOptions } from "../../src/synth/options.js";
import { synthesize } from "../../src/synth/render.js";

export const NS = "team-a";

/** A resource of `kind` in namespace NS (or `namespace`). */
export function res<K extends Kind>(
  kind: K,
  name: string,
  spec: unknown,
  namespace = NS,
): Resource<K> {
  return {
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind,
    metadata: { name, namespace },
    spec,
  } as unknown as Resource<K>;
}

export function server(name: string, spec: Record<string, unknown> = {}): Resource<"MCPServer"> {
  return res("MCPServer", name, { image: "ghcr.io/example/server:1.0.0", ...spec });
}

export function proxy(
  name: string,
  spec: Record<string, unknown> = {},
): Resource<"MCPRemoteProxy"> {
  return res("MCPRemoteProxy", name, { remoteURL: "https://mcp.example.com/mcp", ...spec });
}

/** The pod patch the runner is given, parsed from its `--k8s-pod-patch` argument. */
export function podPatchOf(deployment: KubeObject): Record<string, unknown> | undefined {
  const containers = podSpecOf(deployment).containers as Obj[];
  const args = containers.find((c) => c.name === "toolhive")?.args as string[] | undefined;
  const arg = args?.find((a) => a.startsWith("--k8s-pod-patch="));
  return arg === undefined
    ? undefined
    : (JSON.parse(arg.slice("--k8s-pod-patch=".length)) as Record<string, unknown>);
}

/** Renders and checks: every object and every pod patch must pass the Kubernetes checks. */
export function render(
  resources: Resource[],
  options: SynthOptions = DEFAULT_SYNTH_OPTIONS,
): KubeObject[] {
  const { objects } = synthesize(resources, options);
  const issues = checkObjects(objects);
  for (const o of objects) {
    if (o.kind !== "Deployment") continue;
    const patch = podPatchOf(o);
    if (patch !== undefined) issues.push(...checkPodTemplate(patch, o.metadata.name));
  }
  expect(issues).toEqual([]);
  return objects;
}

export function find(objects: KubeObject[], kind: string, name: string): KubeObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (o === undefined) {
    const have = objects.map((x) => `${x.kind}/${x.metadata.name}`).join(", ");
    throw new Error(`no ${kind}/${name} among ${have}`);
  }
  return o;
}

type Obj = Record<string, unknown>;

export function podSpecOf(deployment: KubeObject): Obj {
  return ((deployment.spec as Obj).template as Obj).spec as Obj;
}

export function containerOf(deployment: KubeObject, name: string): Obj {
  const containers = podSpecOf(deployment).containers as Obj[];
  const c = containers.find((x) => x.name === name);
  if (c === undefined) throw new Error(`no container ${name}`);
  return c;
}

/** The parsed run-config of workload `name`. */
export function runConfigOf(objects: KubeObject[], name: string): Obj {
  const cm = find(objects, "ConfigMap", `${name}-runconfig`);
  return JSON.parse((cm.data as Record<string, string>)["runconfig.json"] ?? "") as Obj;
}

export function envOf(container: Obj): { name: string; value?: string; valueFrom?: unknown }[] {
  return (
    (container.env as { name: string; value?: string; valueFrom?: unknown }[] | undefined) ?? []
  );
}

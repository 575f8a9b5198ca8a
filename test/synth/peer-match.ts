// Scores rendered objects against the reference operator's expectations
// (shared/data/peer-tests/synth/cases.yaml): the matching rules of its e2e assert tool, with the
// API server's defaults filled in first, since those asserts read live objects. Every leaf of
// an expected object is one field; an `(rbac)` list counts one field per (group, resource, verb).
import { parse as parseYaml } from "yaml";
import type { KubeObject } from "../../src/synth/model.js";

type Json = unknown;
type Obj = Record<string, unknown>;

export interface FieldResult {
  path: string;
  ok: boolean;
  expected?: Json;
  actual?: Json;
}

export interface Expectation {
  from: string;
  via?: { runnerPodPatch: string };
  object: Obj;
}

export interface PeerCase {
  id: string;
  group: "chainsaw" | "go-builder" | "chainsaw-stale";
  kind: string;
  inputs: string[];
  expect: Expectation[];
}

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Leaves of an expected value: the number of fields it asserts. */
function leafCount(expected: Json): number {
  if (Array.isArray(expected)) {
    const items =
      expected[0] === "(contains)" || expected[0] === "(set)" ? expected.slice(1) : expected;
    return items.reduce<number>((n, e) => n + leafCount(e), 0);
  }
  if (isObj(expected)) {
    if ("(rbac)" in expected) return rbacTriples(expected["(rbac)"]).size;
    if ("(json)" in expected) return leafCount(expected["(json)"]);
    if ("(yaml)" in expected) return leafCount(expected["(yaml)"]);
    return Object.values(expected).reduce<number>((n, e) => n + leafCount(e), 0);
  }
  return 1;
}

function rbacTriples(rules: Json): Set<string> {
  const out = new Set<string>();
  for (const r of Array.isArray(rules) ? (rules as Obj[]) : []) {
    for (const g of (r.apiGroups as string[] | undefined) ?? [])
      for (const res of (r.resources as string[] | undefined) ?? [])
        for (const v of (r.verbs as string[] | undefined) ?? []) out.add(`${g}/${res}/${v}`);
  }
  return out;
}

function scalarMatches(expected: Json, actual: Json): boolean {
  if (expected === "(present)") return actual !== undefined;
  if (expected === "(absent)") return actual === undefined;
  if (typeof expected === "string" && expected.startsWith("(match)"))
    return typeof actual === "string" && new RegExp(expected.slice(7)).test(actual);
  if (typeof expected === "number" && typeof actual === "string")
    return String(expected) === actual;
  return expected === actual;
}

/** Compares `actual` with `expected`, one result per asserted field. */
export function compare(expected: Json, actual: Json, path = ""): FieldResult[] {
  if (Array.isArray(expected)) {
    const all = expected as unknown[];
    const mode = all[0] === "(contains)" || all[0] === "(set)" ? all[0] : "list";
    const items = mode === "list" ? all : all.slice(1);
    const list = Array.isArray(actual) ? actual : [];
    if (mode === "list") {
      const lengthOk = Array.isArray(actual) && list.length === items.length;
      return items.flatMap((e, i) =>
        compare(e, list[i], `${path}[${i}]`).map((r) =>
          lengthOk ? r : { ...r, ok: false, expected: e, actual: list[i] },
        ),
      );
    }
    const lengthOk = mode !== "(set)" || list.length === items.length;
    return items.flatMap((e, i) => {
      // The candidate that matches most fields of this item.
      let best: FieldResult[] | undefined;
      for (const a of list) {
        const r = compare(e, a, `${path}[${i}]`);
        if (best === undefined || score(r) > score(best)) best = r;
      }
      const results = best ?? compare(e, undefined, `${path}[${i}]`);
      return lengthOk ? results : results.map((r) => ({ ...r, ok: false }));
    });
  }
  if (isObj(expected)) {
    if ("(rbac)" in expected) {
      const want = rbacTriples(expected["(rbac)"]);
      const have = rbacTriples(actual);
      return [...want].map((t) => ({ path: `${path}{${t}}`, ok: have.has(t), expected: t }));
    }
    for (const marker of ["(json)", "(yaml)"] as const) {
      if (marker in expected) {
        let parsed: unknown;
        try {
          parsed =
            typeof actual === "string"
              ? marker === "(json)"
                ? JSON.parse(actual)
                : parseYaml(actual)
              : undefined;
        } catch {
          parsed = undefined;
        }
        return compare(expected[marker], parsed, path);
      }
    }
    const a = isObj(actual) ? actual : {};
    return Object.entries(expected).flatMap(([k, e]) => compare(e, a[k], `${path}.${k}`));
  }
  const ok = scalarMatches(expected, actual);
  return [{ path, ok, ...(ok ? {} : { expected, actual }) }];
}

function score(r: FieldResult[]): number {
  return r.filter((x) => x.ok).length;
}

const PROBE_DEFAULTS = {
  timeoutSeconds: 1,
  periodSeconds: 10,
  successThreshold: 1,
  failureThreshold: 3,
};

function defaultContainer(c: Obj): Obj {
  const image = typeof c.image === "string" ? c.image : "";
  const tag = image.includes("@") ? "digest" : (/:([^/:]+)$/.exec(image)?.[1] ?? "latest");
  const out: Obj = {
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: tag === "latest" ? "Always" : "IfNotPresent",
    ...c,
  };
  if (Array.isArray(c.ports))
    out.ports = (c.ports as Obj[]).map((p) => ({ protocol: "TCP", ...p }));
  for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"])
    if (isObj(c[probe])) out[probe] = { ...PROBE_DEFAULTS, ...c[probe] };
  return out;
}

function defaultPodSpec(s: Obj): Obj {
  const out: Obj = {
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 30,
    dnsPolicy: "ClusterFirst",
    schedulerName: "default-scheduler",
    securityContext: {},
    ...s,
  };
  for (const key of ["containers", "initContainers"])
    if (Array.isArray(s[key])) out[key] = (s[key] as Obj[]).map(defaultContainer);
  return out;
}

function defaultTemplate(t: Json): Json {
  if (!isObj(t) || !isObj(t.spec)) return t;
  return { ...t, spec: defaultPodSpec(t.spec) };
}

/** The defaults the API server writes into what the asserts read back. */
export function withServerDefaults(o: KubeObject): KubeObject {
  const spec = (o as Obj).spec;
  if (!isObj(spec)) return o;
  if (o.kind === "Deployment" || o.kind === "StatefulSet")
    return {
      ...o,
      spec: { replicas: 1, ...spec, template: defaultTemplate(spec.template) },
    };
  if (o.kind === "Service") {
    const ports = Array.isArray(spec.ports)
      ? (spec.ports as Obj[]).map((p) => ({ protocol: "TCP", targetPort: p.port, ...p }))
      : spec.ports;
    return {
      ...o,
      spec: { type: "ClusterIP", sessionAffinity: "None", ...spec, ports },
    };
  }
  return o;
}

/** The runner's pod patch of Deployment `name`, as the StatefulSet the runner would create. */
function viaPodPatch(
  objects: KubeObject[],
  namespace: string,
  deployment: string,
  meta: Obj,
): Obj | undefined {
  const d = objects.find(
    (o) =>
      o.kind === "Deployment" &&
      o.metadata.name === deployment &&
      o.metadata.namespace === namespace,
  );
  const containers = (
    (d as Obj | undefined)?.spec as { template?: { spec?: { containers?: Obj[] } } } | undefined
  )?.template?.spec?.containers;
  const args = containers?.find((c) => c.name === "toolhive")?.args as string[] | undefined;
  const arg = args?.find((a) => a.startsWith("--k8s-pod-patch="));
  if (arg === undefined) return undefined;
  const template = JSON.parse(arg.slice("--k8s-pod-patch=".length)) as Obj;
  return { apiVersion: "apps/v1", kind: "StatefulSet", metadata: meta, spec: { template } };
}

/** The results of one expectation against the objects rendered for its case. */
export function matchExpectation(e: Expectation, objects: KubeObject[]): FieldResult[] {
  const meta = e.object.metadata as Obj;
  const name = meta.name as string;
  const namespace = meta.namespace as string;
  let actual: Json;
  if (e.via !== undefined) {
    actual = viaPodPatch(objects, namespace, e.via.runnerPodPatch, { name, namespace });
  } else {
    const found = objects.find(
      (o) =>
        o.kind === e.object.kind &&
        o.apiVersion === e.object.apiVersion &&
        o.metadata.name === name &&
        o.metadata.namespace === namespace,
    );
    actual = found === undefined ? undefined : withServerDefaults(found);
  }
  const results = compare(e.object, actual);
  if (results.length !== leafCount(e.object)) throw new Error(`field count of ${e.from}`);
  return results;
}

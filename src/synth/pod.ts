// Pod-level helpers shared by every construct that renders a workload: merging a user's
// `podTemplateSpec` into the rendered pod template, applying `resourceOverrides`, environment
// variables from Secrets, and probes. The merge rules are documented in docs/synth.md.
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IEnvVar } from "kubernetes-models/v1/EnvVar";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import type { IPodTemplateSpec } from "kubernetes-models/v1/PodTemplateSpec";
import type { IProbe } from "kubernetes-models/v1/Probe";
import type * as T from "../../generated/types.js";
import { stableStringify } from "./hash.js";
import { isObject, plainCopy } from "../json.js";

export type Container = IContainer;
export type EnvVar = IEnvVar;
export type PodSpec = IPodSpec;
export type PodTemplate = IPodTemplateSpec;
export type Probe = IProbe;

type Obj = Record<string, unknown>;

/** Map merge: every key of both, `over` winning. Undefined when both are empty. */
export function mergeMaps(
  base: Record<string, string | undefined> | undefined,
  over: Record<string, string | undefined> | undefined,
): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const m of [base, over]) {
    for (const [k, v] of Object.entries(m ?? {})) if (v !== undefined) out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Merges two lists keyed by `key`: items of `base` keep their place, an item of `over` with the
 * same key replaces it (or is merged with `merge`), other items of `over` are appended.
 */
export function mergeByKey<V>(
  base: readonly V[] | undefined,
  over: readonly V[] | undefined,
  key: (item: V) => string,
  merge: (a: V, b: V) => V = (_a, b) => b,
): V[] | undefined {
  if (base === undefined && over === undefined) return undefined;
  const out = [...(base ?? [])];
  const index = new Map(out.map((item, i) => [key(item), i]));
  for (const item of over ?? []) {
    const i = index.get(key(item));
    if (i === undefined) {
      index.set(key(item), out.length);
      out.push(item);
    } else {
      out[i] = merge(out[i] as V, item);
    }
  }
  return out;
}

/** Appends `over` to `base`, dropping items equal (as JSON) to one already present. */
export function appendUnique<V>(
  base: readonly V[] | undefined,
  over: readonly V[] | undefined,
): V[] | undefined {
  if (base === undefined && over === undefined) return undefined;
  return mergeByKey(base, over, (v) => stableStringify(v));
}

/** Environment variables merged by name; `over` wins. */
export function mergeEnv(
  base: readonly EnvVar[] | undefined,
  over: readonly EnvVar[] | undefined,
): EnvVar[] | undefined {
  return mergeByKey(base, over, (e) => e.name);
}

function mergeResources(
  base: Container["resources"],
  over: Container["resources"],
): Container["resources"] {
  if (over === undefined) return base;
  if (base === undefined) return over;
  const out: Obj = { ...base, ...over };
  for (const part of ["limits", "requests"] as const) {
    const merged = { ...(base[part] ?? {}), ...(over[part] ?? {}) };
    if (Object.keys(merged).length > 0) out[part] = merged;
  }
  return out;
}

/**
 * A rendered container with the user's container of the same name merged in: user scalars and
 * objects win (image, command, args, probes, lifecycle, ...), `resources` and `securityContext`
 * merge key by key with user values winning, `env` merges by name, `ports` by name (or port),
 * `volumeMounts` by mount path, `envFrom` is appended.
 */
export function mergeContainer(base: Container, over: Container): Container {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    switch (k) {
      case "name":
        break;
      case "env":
        out.env = mergeEnv(base.env, v as EnvVar[]);
        break;
      case "envFrom":
        out.envFrom = appendUnique(base.envFrom, v as Container["envFrom"]);
        break;
      case "ports":
        out.ports = mergeByKey(base.ports, v as Container["ports"], (p) =>
          p.name !== undefined ? `name:${p.name}` : `port:${String(p.containerPort)}`,
        );
        break;
      case "volumeMounts":
        out.volumeMounts = mergeByKey(
          base.volumeMounts,
          v as Container["volumeMounts"],
          (m) => m.mountPath,
        );
        break;
      case "resources":
        out.resources = mergeResources(base.resources, v as Container["resources"]);
        break;
      case "securityContext":
        out.securityContext = { ...(base.securityContext ?? {}), ...(v as Obj) };
        break;
      default:
        out[k] = v;
    }
  }
  return out as unknown as Container;
}

function mergeContainers(
  base: readonly Container[] | undefined,
  over: readonly Container[] | undefined,
): Container[] | undefined {
  return mergeByKey(base, over, (c) => c.name, mergeContainer);
}

/** Pod spec fields whose lists are appended (deduplicated), not replaced. */
const APPENDED = new Set([
  "tolerations",
  "topologySpreadConstraints",
  "hostAliases",
  "readinessGates",
  "resourceClaims",
]);

function mergePodSpec(base: PodSpec, over: Obj): PodSpec {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined || v === null) continue;
    if (k === "containers" || k === "initContainers" || k === "ephemeralContainers") {
      out[k] = mergeContainers(out[k] as Container[] | undefined, v as Container[]);
    } else if (k === "volumes") {
      out.volumes = mergeByKey(base.volumes, v as PodSpec["volumes"], (vol) => vol.name);
    } else if (k === "imagePullSecrets") {
      out.imagePullSecrets = mergeByKey(
        base.imagePullSecrets,
        v as PodSpec["imagePullSecrets"],
        (s) => s.name ?? "",
      );
    } else if (APPENDED.has(k)) {
      out[k] = appendUnique(out[k] as unknown[] | undefined, v as unknown[]);
    } else if (k === "nodeSelector") {
      out.nodeSelector = mergeMaps(base.nodeSelector, v as Record<string, string>);
    } else if ((k === "securityContext" || k === "affinity" || k === "dnsConfig") && isObject(v)) {
      out[k] = { ...(out[k] ?? {}), ...v };
    } else {
      out[k] = v;
    }
  }
  return out as unknown as PodSpec;
}

/**
 * Merges a user's pod template (`spec.podTemplateSpec`) into a rendered one. The container the
 * user customises is the one named `containerName` (`mcp`, `vmcp`, `registry-api`, `embedding`);
 * a user container of another name that the rendered template also has is merged the same way,
 * any other is added as a sidecar. Labels and annotations the renderer set win over the user's
 * (selectors and the config checksum depend on them); the user adds any others. Neither input is
 * modified.
 */
export function mergePodTemplate(
  base: PodTemplate,
  user: T.PodTemplateSpec | PodTemplate | undefined,
  containerName: string,
): PodTemplate {
  // Plain data (built here or parsed): plainCopy, ten times structuredClone's speed.
  const out = plainCopy(base);
  if (user === undefined || !isObject(user)) return out;
  const userMeta = isObject(user.metadata) ? user.metadata : {};
  const labels = mergeMaps(
    userMeta.labels as Record<string, string> | undefined,
    out.metadata?.labels,
  );
  const annotations = mergeMaps(
    userMeta.annotations as Record<string, string> | undefined,
    out.metadata?.annotations,
  );
  if (labels !== undefined || annotations !== undefined) {
    out.metadata = { ...(out.metadata ?? {}) };
    if (labels !== undefined) out.metadata.labels = labels;
    if (annotations !== undefined) out.metadata.annotations = annotations;
  }
  const userSpec = isObject(user.spec) ? plainCopy(user.spec) : undefined;
  if (userSpec !== undefined) {
    const spec = out.spec ?? { containers: [] };
    if (!spec.containers.some((c) => c.name === containerName)) {
      spec.containers = [{ name: containerName }, ...spec.containers];
    }
    out.spec = mergePodSpec(spec, userSpec);
  }
  return out;
}

/** The metadata of the three objects `resourceOverrides` reaches. */
export interface OverrideTargets {
  deployment: { labels?: Record<string, string>; annotations?: Record<string, string> };
  podTemplate: PodTemplate;
  service?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  /** Name of the container that receives `proxyDeployment.env` (the proxy process). */
  proxyContainer: string;
}

/**
 * Applies `resourceOverrides`: labels and annotations on the Deployment, its pod template and the
 * Service (rendered labels win, so selectors stay intact; overrides add the rest and win for
 * annotations), env of the proxy container (by name, override wins) and imagePullSecrets on the
 * pod (appended by name). Mutates `targets` and returns it.
 */
export function applyResourceOverrides(
  targets: OverrideTargets,
  overrides: T.ResourceOverrides | undefined,
): OverrideTargets {
  const dep = overrides?.proxyDeployment;
  const svc = overrides?.proxyService;
  if (dep !== undefined) {
    const labels = mergeMaps(dep.labels, targets.deployment.labels);
    if (labels !== undefined) targets.deployment.labels = labels;
    const annotations = mergeMaps(targets.deployment.annotations, dep.annotations);
    if (annotations !== undefined) targets.deployment.annotations = annotations;
    const pod = dep.podTemplateMetadataOverrides;
    if (pod !== undefined) {
      const meta = (targets.podTemplate.metadata ??= {});
      const podLabels = mergeMaps(pod.labels, meta.labels);
      if (podLabels !== undefined) meta.labels = podLabels;
      const podAnnotations = mergeMaps(meta.annotations, pod.annotations);
      if (podAnnotations !== undefined) meta.annotations = podAnnotations;
    }
    const spec = targets.podTemplate.spec;
    if (spec !== undefined && dep.env !== undefined) {
      const container = spec.containers.find((c) => c.name === targets.proxyContainer);
      if (container !== undefined) container.env = mergeEnv(container.env, dep.env);
    }
    if (spec !== undefined && dep.imagePullSecrets !== undefined) {
      spec.imagePullSecrets = mergeByKey(
        spec.imagePullSecrets,
        dep.imagePullSecrets.filter((s) => s.name !== undefined).map((s) => ({ name: s.name })),
        (s) => s.name ?? "",
      );
    }
  }
  if (svc !== undefined && targets.service !== undefined) {
    const labels = mergeMaps(svc.labels, targets.service.labels);
    if (labels !== undefined) targets.service.labels = labels;
    const annotations = mergeMaps(targets.service.annotations, svc.annotations);
    if (annotations !== undefined) targets.service.annotations = annotations;
  }
  return targets;
}

/** An environment variable read from a Secret key. */
export function secretEnv(name: string, ref: { name: string; key: string }): EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } };
}

/** Literal environment variables, in the given order. */
export function literalEnv(env: readonly { name: string; value: string }[] | undefined): EnvVar[] {
  return (env ?? []).map((e) => ({ name: e.name, value: e.value }));
}

/**
 * A deterministic environment variable name for a value taken from a Secret: PREFIX_ then the
 * secret name and key upper-cased with every other character as `_`.
 */
export function secretEnvName(prefix: string, ref: { name: string; key: string }): string {
  return `${prefix}_${ref.name}_${ref.key}`.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
}

/** Environment variables of `spec.secrets`: each Secret key as `targetEnvName` (default key). */
export function secretRefsEnv(secrets: readonly T.SecretRef[] | undefined): EnvVar[] {
  return (secrets ?? []).map((s) => secretEnv(s.targetEnvName ?? s.key, s));
}

export interface ProbeTiming {
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}

/** An HTTP GET probe on a named (or numbered) container port. */
export function httpProbe(path: string, port: string | number, timing: ProbeTiming = {}): Probe {
  return {
    httpGet: { path, port },
    initialDelaySeconds: timing.initialDelaySeconds ?? 5,
    periodSeconds: timing.periodSeconds ?? 10,
    timeoutSeconds: timing.timeoutSeconds ?? 3,
    failureThreshold: timing.failureThreshold ?? 3,
  };
}

/** Drops undefined fields (cdk8s and the YAML writer keep the rest as given). */
export function compact<V extends object>(value: V): V {
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v;
  return out as V;
}

/** Resource requirements as a Kubernetes container takes them. */
export function kubeResources(
  r: T.ResourceRequirements | undefined,
): Container["resources"] | undefined {
  return r === undefined ? undefined : sortKeysShallow(r);
}

function sortKeysShallow(r: T.ResourceRequirements): Obj {
  const out: Obj = {};
  for (const part of ["limits", "requests"] as const) {
    const list = r[part];
    if (list !== undefined) out[part] = compact(list as Obj);
  }
  return out;
}

// Core Kubernetes kinds validated against Kubernetes' published OpenAPI schemas, as compiled
// into the kubernetes-models package. A model class is imported only when a document of its
// kind is met, so a run without core kinds pays nothing for them.
import { kubeModelsTree } from "../assets.js";
import { escapeSegment } from "../json-pointer.js";

interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: unknown): { validate(): void };
}

interface AjvLikeError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

export interface KubeIssue {
  path: string;
  message: string;
}

const GROUP_VERSION =
  /^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?v[0-9]+((alpha|beta)[0-9]+)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The kubernetes-models package: one directory per group, then per version. */
const tree = kubeModelsTree;

/**
 * Whether `group` is one of Kubernetes' own API groups (the core group "", apps, batch,
 * rbac.authorization.k8s.io, ...): those kubernetes-models has schemas for. A kind of such a
 * group that it lacks is a misspelling (or newer than the package), not another project's CRD.
 */
export function isKubeGroup(group: string): boolean {
  return group === "" || (GROUP.test(group) && tree().exists(group));
}

/** The model names of an API version (kinds and the types inside them), for "did you mean". */
export function kubeKindsOf(apiVersion: string): string[] {
  if (!GROUP_VERSION.test(apiVersion)) return [];
  try {
    return tree()
      .readdir(apiVersion)
      .filter((f) => f.endsWith(".js") && f !== "index.js")
      .map((f) => f.slice(0, -3));
  } catch {
    return [];
  }
}

/** The API versions that have `kind` (`apps/v1` for a Deployment), in every group. */
export function kubeVersionsOf(kind: string): string[] {
  if (!KIND.test(kind)) return [];
  const pkg = tree();
  const version = /^v[0-9]+((alpha|beta)[0-9]+)?$/;
  const found: string[] = [];
  // `prefix`: the group's directory with its slash, "" for the core group at the root.
  const look = (prefix: string) => {
    for (const v of pkg.readdir(prefix || ".").filter((e) => version.test(e))) {
      if (pkg.exists(`${prefix}${v}/${kind}.js`)) found.push(prefix + v);
    }
  };
  try {
    look("");
    for (const group of pkg.readdir(".").filter((e) => e.includes(".") || GROUP.test(e))) {
      if (version.test(group) || group.startsWith("_") || group.includes(".js")) continue;
      if (pkg.exists(`${group}/index.js`)) look(`${group}/`);
    }
  } catch {
    // An unreadable package leaves the suggestion out, nothing more.
  }
  // The package keeps versions current clusters no longer serve (apps/v1beta1): the stable
  // ones, where there are, are the answer.
  const stable = found.filter((v) => /(^|\/)v[0-9]+$/.test(v));
  return stable.length > 0 ? stable : found;
}

const models = new Map<string, Promise<ModelClass | undefined>>();

/** The model of `apiVersion`/`kind`, or undefined when kubernetes-models has none. */
export function kubeModel(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  const key = `${apiVersion}/${kind}`;
  let model = models.get(key);
  if (model === undefined) {
    model = loadModel(apiVersion, kind);
    models.set(key, model);
  }
  return model;
}

async function loadModel(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  if (!GROUP_VERSION.test(apiVersion) || !KIND.test(kind) || kind.endsWith("List"))
    return undefined;
  try {
    const mod = (await tree().load(`${apiVersion}/${kind}`)) as Record<string, unknown>;
    const cls = mod[kind] as ModelClass | undefined;
    if (typeof cls !== "function" || cls.apiVersion !== apiVersion || cls.kind !== kind) {
      return undefined;
    }
    return cls;
  } catch {
    return undefined;
  }
}

function toIssue(e: AjvLikeError): KubeIssue {
  const at = e.instancePath ?? "";
  const params = e.params ?? {};
  switch (e.keyword) {
    case "required":
      return {
        path: `${at}/${escapeSegment(String(params.missingProperty))}`,
        message: `missing required field "${String(params.missingProperty)}"`,
      };
    case "enum":
      return {
        path: at,
        message: `must be one of: ${((params.allowedValues as unknown[] | undefined) ?? []).map((v) => JSON.stringify(v)).join(", ")}`,
      };
    case "type":
      return { path: at, message: `must be ${String(params.type)}` };
    default:
      return { path: at, message: e.message ?? e.keyword ?? "invalid" };
  }
}

/**
 * Issues of a core Kubernetes resource, or undefined when its kind is not one kubernetes-models
 * knows (the caller reports it as skipped).
 */
export async function validateKube(
  apiVersion: string,
  kind: string,
  value: unknown,
): Promise<KubeIssue[] | undefined> {
  const Model = await kubeModel(apiVersion, kind);
  if (Model === undefined) return undefined;
  try {
    new Model(value).validate();
    return [];
  } catch (err) {
    const errors = (err as { errors?: AjvLikeError[] }).errors;
    if (!Array.isArray(errors)) return [{ path: "", message: (err as Error).message }];
    const seen = new Set<string>();
    const issues: KubeIssue[] = [];
    for (const issue of errors.map(toIssue)) {
      const k = `${issue.path}\u0000${issue.message}`;
      if (seen.has(k)) continue;
      seen.add(k);
      issues.push(issue);
    }
    return issues;
  }
}

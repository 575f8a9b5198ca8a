// `--kube`: core Kubernetes kinds validated against Kubernetes' published OpenAPI schemas, as
// compiled into the kubernetes-models package. A model class is imported only when a document
// of its kind is met; kinds the package does not know (other CRDs) are skipped.
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
    const mod = (await import(`kubernetes-models/${apiVersion}/${kind}`)) as Record<
      string,
      unknown
    >;
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

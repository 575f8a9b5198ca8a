// A resource's podTemplateSpec against Kubernetes' PodTemplateSpec schema. The operator reads the
// template as a Go corev1.PodTemplateSpec and marks the resource failed when it cannot: a value
// of the wrong type anywhere in it (`containers: "x"`). It merges the template into the pod it
// builds, so fields Kubernetes requires of a whole pod (a container's image, the containers
// list) may be left out; a container is matched by name, so each needs one.
import { escapeSegment } from "../json-pointer.js";

export interface PodTemplateIssue {
  /** JSON pointer relative to the template. */
  path: string;
  message: string;
}

interface AjvLikeError {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

type Validate = (data: unknown) => boolean;
let validator: Promise<Validate & { errors?: AjvLikeError[] | null }> | undefined;

function loadValidator(): Promise<Validate & { errors?: AjvLikeError[] | null }> {
  return (validator ??= import("kubernetes-models/_schemas/IoK8sApiCoreV1PodTemplateSpec").then(
    (m: { validate: Validate & { errors?: AjvLikeError[] | null } }) => m.validate,
  ));
}

const CONTAINER_LISTS = /^\/spec\/(containers|initContainers|ephemeralContainers)\/[0-9]+$/;

/** The issues of `template`; `container` is the name of the container it is merged into. */
export async function podTemplateIssues(
  template: unknown,
  container: string,
): Promise<PodTemplateIssue[]> {
  if (template === null || typeof template !== "object" || Array.isArray(template)) {
    return [{ path: "", message: "must be an object (a Kubernetes PodTemplateSpec)" }];
  }
  const validate = await loadValidator();
  if (validate(template)) return [];
  const issues: PodTemplateIssue[] = [];
  const seen = new Set<string>();
  for (const e of validate.errors ?? []) {
    const at = e.instancePath ?? "";
    let issue: PodTemplateIssue | undefined;
    if (e.keyword === "type") {
      issue = { path: at, message: `must be ${String(e.params?.type)} (PodTemplateSpec)` };
    } else if (e.keyword === "required" && CONTAINER_LISTS.test(at)) {
      const field = String(e.params?.missingProperty);
      if (field !== "name") continue;
      issue = {
        path: `${at}/${escapeSegment(field)}`,
        message: `missing required field "name": containers are merged by name (the ${container} container is named "${container}")`,
      };
    }
    if (issue === undefined) continue;
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

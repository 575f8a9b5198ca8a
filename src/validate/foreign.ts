// Documents whose apiVersion is not of our API group. A group close to ours is a typo, and a
// kind of ours without a group a missing group: both errors, or such a resource would pass CI
// and deploy nothing. Core Kubernetes kinds are validated against kubernetes-models' schemas.
// Any other kind has no schema here: an error unless --ignore-missing-schemas, as kubeconform
// has it, so that nothing passes unchecked without being asked to.
import { API_GROUP, SERVED_VERSIONS, asKind } from "../schema/index.js";
import { closest, didYouMean } from "../suggest.js";
import { KUSTOMIZE_HINT } from "./hints.js";
import { isKubeGroup, kubeKindsOf, kubeVersionsOf, validateKube } from "./kube.js";

export interface ForeignIssue {
  path: string;
  message: string;
}

/** Issues of the document (none: valid), or "skipped" when it is not validated. */
export type ForeignVerdict = ForeignIssue[] | "skipped";

export interface ForeignOptions {
  kube: boolean;
  ignoreMissingSchemas: boolean;
}

const KUSTOMIZE_GROUP = "kustomize.config.k8s.io";

/** True for a group a person most likely meant as ours: `toolhive.stacklok.io`, `toolhive.dev`. */
export function nearOurGroup(group: string): boolean {
  return (
    group.split(".")[0] === "toolhive" ||
    group.includes("stacklok") ||
    closest(group, [API_GROUP]) !== undefined
  );
}

function ourVersions(): string {
  return SERVED_VERSIONS.map((v) => `${API_GROUP}/${v}`).join(" or ");
}

export function foreignVerdict(
  apiVersion: string,
  kind: string,
  value: unknown,
  options: ForeignOptions,
): ForeignVerdict | Promise<ForeignVerdict> {
  const slash = apiVersion.indexOf("/");
  const group = slash === -1 ? "" : apiVersion.slice(0, slash);
  if (group !== "" && nearOurGroup(group)) {
    return [
      {
        path: "/apiVersion",
        message: `unknown API group "${group}" (did you mean "${API_GROUP}"?); ${asKind(kind) ?? "a kind of ours"} is served as ${ourVersions()}`,
      },
    ];
  }
  if (group === "" && asKind(kind) !== undefined) {
    return [
      { path: "/apiVersion", message: `${kind} is served as ${ourVersions()}, not ${apiVersion}` },
    ];
  }
  const missing = (message: string): ForeignVerdict =>
    options.ignoreMissingSchemas ? "skipped" : [{ path: "/kind", message }];
  if (group === KUSTOMIZE_GROUP) return missing(KUSTOMIZE_HINT);
  if (isKubeGroup(group)) {
    if (!options.kube) return "skipped";
    return coreVerdict(apiVersion, kind, value, missing);
  }
  return missing(
    `no schema for ${kind} of ${apiVersion}: only ${API_GROUP} and core Kubernetes kinds are ` +
      "known; --ignore-missing-schemas skips other kinds",
  );
}

async function coreVerdict(
  apiVersion: string,
  kind: string,
  value: unknown,
  missing: (message: string) => ForeignVerdict,
): Promise<ForeignVerdict> {
  const issues = await validateKube(apiVersion, kind, value);
  if (issues !== undefined) return issues;
  const versions = kubeVersionsOf(kind);
  if (versions.length > 0) {
    return missing(`no ${kind} in ${apiVersion}; Kubernetes serves it as ${versions.join(", ")}`);
  }
  const suggestion = didYouMean(kind, kubeKindsOf(apiVersion));
  return missing(`unknown kind "${kind}" in ${apiVersion}${suggestion}`);
}

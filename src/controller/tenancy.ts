// Which namespaces a revision may write to. Whoever can push to the watched branch decides what
// the controller applies; these limits keep that from reaching past the namespaces the operator
// meant: by default nothing in the controller's own namespace (its Deployment, credentials,
// inventory and Lease live there) nor in `kube-*` (the cluster's own components), and with
// --namespace-allow or --target-namespace only what those name. Writing as a ServiceAccount
// (impersonation) adds the API server's RBAC on top: see docs/gitops.md.
import { McpfleetError } from "../errors.js";
import type { KubeObject } from "../synth/model.js";
import type { AdmissionCheck } from "./admission.js";

export interface NamespacePolicy {
  /** Globs (`*` any run of characters, `?` one) of the namespaces objects may live in. */
  allow?: readonly string[];
  /** The one namespace every resource must live in (and the default of those without one). */
  target?: string;
  /** The controller's own namespace when it is known (in a Pod, or given): refused by default. */
  own?: string;
  /**
   * Namespaces the operator named otherwise (`-n`, where resources without one go): allowed
   * even when protected, without confining anything to them.
   */
  named?: readonly string[];
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GLOB = /^[a-z0-9*?]([-a-z0-9*?]*[a-z0-9*?])?$/;

/** Checks --namespace-allow patterns (comma-separated lists, several flags); throws ERR_USAGE. */
export function parseNamespaceAllow(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    for (const raw of v.split(",")) {
      const p = raw.trim();
      if (p === "" || p.length > 63 || !GLOB.test(p)) {
        throw new McpfleetError(
          "ERR_USAGE",
          `--namespace-allow: "${raw}" is not a namespace name or a glob of one (lowercase letters, digits, '-', '*', '?')`,
        );
      }
      out.push(p);
    }
  }
  return out;
}

export function checkNamespaceName(name: string, flag: string): string {
  if (name.length > 63 || !NAMESPACE.test(name)) {
    throw new McpfleetError("ERR_USAGE", `${flag}: "${name}" is not a valid namespace name`);
  }
  return name;
}

function globRegExp(glob: string): RegExp {
  const body = glob.replace(/[?*]/g, (c) => (c === "*" ? ".*" : "."));
  return new RegExp(`^${body}$`);
}

/**
 * The admission check of a policy. A protected namespace (the controller's own, `kube-*`) is
 * allowed only by the target namespace, by a pattern that names it without a leading `*`
 * (`kube-system` or `kube-*` do, a catch-all `*` does not), or, without patterns, by `-n`.
 */
export function namespaceCheck(policy: NamespacePolicy): AdmissionCheck {
  const allow = (policy.allow ?? []).map((p) => ({ p, re: globRegExp(p) }));
  const isProtected = (ns: string) => ns.startsWith("kube-") || ns === policy.own;
  const why = (ns: string): string | undefined => {
    if (policy.target !== undefined) {
      return ns === policy.target
        ? undefined
        : `namespace ${ns} is outside the target namespace ${policy.target}`;
    }
    const matches = allow.filter((a) => a.re.test(ns));
    if (isProtected(ns)) {
      if (matches.some((a) => !a.p.startsWith("*"))) return undefined;
      if (allow.length === 0 && policy.named?.includes(ns) === true) return undefined;
      return ns === policy.own
        ? `namespace ${ns} is the controller's own; allow it by name with --namespace-allow`
        : `namespace ${ns} belongs to the cluster; allow it by name with --namespace-allow`;
    }
    if (allow.length > 0 && matches.length === 0) {
      return `namespace ${ns} is not allowed (--namespace-allow ${allow.map((a) => a.p).join(",")})`;
    }
    return undefined;
  };
  const confined = policy.target !== undefined || allow.length > 0;
  return (o: KubeObject) => {
    if (o.kind === "CustomResourceDefinition") return undefined; // ours, from the install
    if (o.kind === "Namespace" && o.apiVersion === "v1") return why(o.metadata.name);
    const ns = o.metadata.namespace;
    if (ns !== undefined && ns !== "") return why(ns);
    return confined ? `${o.kind} is cluster-scoped, outside the allowed namespaces` : undefined;
  };
}

// Writing a revision's objects as a ServiceAccount instead of as the controller: every request of
// that client carries `Impersonate-User: system:serviceaccount:NS:NAME`, so the API server
// authorizes it with the ServiceAccount's RBAC (and adds its groups), as `kubectl --as` does.
// The controller itself needs the `impersonate` verb on that ServiceAccount.
import { KubeConfig } from "@kubernetes/client-node";
import { McpfleetError } from "../errors.js";
import { checkNamespaceName } from "./tenancy.js";
import { KubeClient } from "../infra/kube/client.js";

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** `NS/NAME`, or `NAME` in `defaultNamespace` when there is one; throws ERR_USAGE. */
export function parseServiceAccount(text: string, defaultNamespace?: string): ServiceAccountRef {
  const parts = text.split("/");
  const [namespace, name] =
    parts.length === 2 ? parts : parts.length === 1 ? [defaultNamespace, parts[0]] : [];
  if (namespace === undefined || name === undefined || name === "") {
    throw new McpfleetError(
      "ERR_USAGE",
      `--service-account must be NAMESPACE/NAME${defaultNamespace === undefined ? " (or NAME with --target-namespace)" : ""}, not ${text}`,
    );
  }
  checkNamespaceName(namespace, "--service-account");
  if (!/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 253) {
    throw new McpfleetError("ERR_USAGE", `--service-account: "${name}" is not a valid name`);
  }
  return { namespace, name };
}

export function serviceAccountUser(sa: ServiceAccountRef): string {
  return `system:serviceaccount:${sa.namespace}:${sa.name}`;
}

/** A client of the same server and credentials that acts as `sa`. */
export function impersonating(base: KubeClient, sa: ServiceAccountRef): KubeClient {
  const kc = new KubeConfig();
  const current = base.kc.getCurrentContext();
  const user = base.kc.getCurrentUser();
  kc.loadFromOptions({
    clusters: base.kc.getClusters(),
    contexts: base.kc.getContexts(),
    users: base.kc
      .getUsers()
      .map((u) => (u.name === user?.name ? { ...u, impersonateUser: serviceAccountUser(sa) } : u)),
    currentContext: current,
  });
  return new KubeClient(kc, { requestTimeoutMs: base.requestTimeoutMs });
}

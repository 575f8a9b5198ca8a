// A failed Kubernetes API request, said the way a person at a terminal can act on it: which
// server and context, what went wrong, what to check. Used by every command that talks to a
// cluster, so `apply`, `diff` and `controller --once` word these failures alike.
import { McpfleetError } from "../../errors.js";
import { KubeApiError, type KubeClient } from "./client.js";

function where(client: KubeClient): string {
  const context = client.kc.getCurrentContext();
  return `the API server ${client.server.origin}${context !== "" ? ` (context ${context})` : ""}`;
}

const CONNECTION_HINTS: Record<string, string> = {
  ECONNREFUSED:
    "refused the connection; is the cluster running, and is --kubeconfig/--context the right one?",
  ENOTFOUND: "has a host name that does not resolve; check the kubeconfig's server",
  EAI_AGAIN: "has a host name that does not resolve; check the kubeconfig's server",
  ETIMEDOUT: "did not answer in time; check the network path to it",
  ECONNRESET: "closed the connection; check that the server address and port are the API server's",
  EHOSTUNREACH: "is unreachable from here; check the network path to it",
  DEPTH_ZERO_SELF_SIGNED_CERT:
    "has a certificate the kubeconfig does not trust; check its certificate-authority-data",
  SELF_SIGNED_CERT_IN_CHAIN:
    "has a certificate the kubeconfig does not trust; check its certificate-authority-data",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "has a certificate the kubeconfig does not trust; check its certificate-authority-data",
  ERR_TLS_CERT_ALTNAME_INVALID:
    "has a certificate for another host name; check the kubeconfig's server",
};

/**
 * The McpfleetError to report for `err` when it is an API failure, with the server named and a
 * hint; undefined for anything else (which the caller reports as it is).
 */
export function explainKubeError(err: unknown, client: KubeClient): McpfleetError | undefined {
  if (!(err instanceof KubeApiError)) return undefined;
  const cause = err.cause as NodeJS.ErrnoException | undefined;
  if (cause !== undefined && typeof cause.code === "string") {
    const hint = CONNECTION_HINTS[cause.code] ?? `failed: ${cause.message}`;
    return new McpfleetError("ERR_KUBE_API", `cannot reach ${where(client)}: it ${hint}`, {
      cause: err,
    });
  }
  if (cause !== undefined) {
    return new McpfleetError("ERR_KUBE_API", `${where(client)}: ${err.message}`, { cause: err });
  }
  if (err.status === 401) {
    return new McpfleetError(
      "ERR_KUBE_API",
      `${where(client)} refused the kubeconfig's credentials (401 Unauthorized); log in again or check the user of the context`,
      { cause: err },
    );
  }
  if (err.status === 403) {
    return new McpfleetError(
      "ERR_KUBE_API",
      `${where(client)} forbids it (403): ${err.message}; docs/gitops.md lists the permissions the user needs`,
      { cause: err },
    );
  }
  return new McpfleetError(
    "ERR_KUBE_API",
    `${where(client)} answered ${err.status}${err.reason !== undefined ? ` ${err.reason}` : ""}: ${err.message}`,
    { cause: err },
  );
}

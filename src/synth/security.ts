// Security contexts that pass the Kubernetes "restricted" Pod Security Standard: non-root, the
// runtime's default seccomp profile, no privilege escalation, no capabilities. The values are the
// reference operator's, so pods it created and ours do not differ in a way that rolls them.
import type { Container, PodSpec } from "./pod.js";

/** The pod-level part: every container runs as non-root under RuntimeDefault seccomp. */
export function restrictedPod(extra: PodSpec["securityContext"] = {}): PodSpec["securityContext"] {
  return { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" }, ...extra };
}

/**
 * The container-level part. `readOnlyRootFilesystem` is false only for a program that writes
 * outside the volumes it is given (docs/synth-workloads.md names which and why).
 */
export function restrictedContainer(
  options: { readOnlyRootFilesystem?: boolean; privileged?: boolean } = {},
): Container["securityContext"] {
  return {
    ...(options.privileged === false ? { privileged: false } : {}),
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: options.readOnlyRootFilesystem ?? true,
    capabilities: { drop: ["ALL"] },
    seccompProfile: { type: "RuntimeDefault" },
  };
}

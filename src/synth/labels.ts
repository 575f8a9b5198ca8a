import { labelValue } from "./names.js";

export const MANAGED_BY = "mcpfleet";

/**
 * Labels on every object rendered for a resource. The first five are the ones the reference
 * operator sets (selectors and tools depend on them); the last two are Kubernetes' recommended
 * labels, so `kubectl get -l app.kubernetes.io/managed-by=mcpfleet` finds everything we made.
 */
export function workloadLabels(app: string, instance: string): Record<string, string> {
  return {
    app,
    "app.kubernetes.io/name": app,
    "app.kubernetes.io/instance": labelValue(instance),
    toolhive: "true",
    "toolhive-name": labelValue(instance),
    "app.kubernetes.io/managed-by": MANAGED_BY,
  };
}

/** The subset used as a Deployment/StatefulSet selector and Service selector: never changes. */
export function selectorLabels(app: string, instance: string): Record<string, string> {
  return {
    app,
    "app.kubernetes.io/name": app,
    "app.kubernetes.io/instance": labelValue(instance),
  };
}

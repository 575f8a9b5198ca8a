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

/**
 * The Deployment and Service selector: the reference operator's five labels, exactly, because a
 * selector cannot change once created and objects that operator made are adopted as they are
 * (docs/synth.md, "Adopting objects of the reference operator").
 */
export function selectorLabels(app: string, instance: string): Record<string, string> {
  const { "app.kubernetes.io/managed-by": _managedBy, ...reference } = workloadLabels(
    app,
    instance,
  );
  void _managedBy;
  return reference;
}

/** The reference operator's labels on a run-config or vmcp ConfigMap (`kind` names the owner). */
export function configMapLabels(
  component: string,
  ownerKey: string,
  owner: string,
): Record<string, string> {
  return {
    "toolhive.stacklok.io/component": component,
    [`toolhive.stacklok.io/${ownerKey}`]: labelValue(owner),
    "toolhive.stacklok.io/managed-by": "toolhive-operator",
  };
}

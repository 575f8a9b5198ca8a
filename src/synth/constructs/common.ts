// Pieces every workload construct uses: one ApiObject per rendered object, with a construct id
// derived from the owning resource so ids never collide within a namespace's chart.
import { ApiObject } from "cdk8s";
import { Construct } from "constructs";
import type { KubeObject, Resource } from "../model.js";

/** Adds one rendered object to the chart of the resource's namespace. */
export function emit(scope: Construct, owner: Resource, obj: KubeObject): ApiObject | undefined {
  if (scope instanceof PlainScope) {
    const namespace = owner.metadata.namespace;
    scope.objects.push({ ...obj, metadata: { ...obj.metadata, namespace } });
    return undefined;
  }
  const id = `${owner.kind}.${owner.metadata.name}.${obj.kind}.${obj.metadata.name}`;
  return new ApiObject(scope, id, obj);
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

// In the reference operator's order, so a Role it created and ours compare equal (rules are lists).
export const ALL_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"];
export const READ_VERBS = ["get", "list", "watch"];

/** A ServiceAccount, a Role with `rules` and the RoleBinding between them, all named `name`. */
export function emitRbac(
  scope: Construct,
  owner: Resource,
  name: string,
  labels: Record<string, string>,
  rules: PolicyRule[],
  options: { serviceAccount?: string; imagePullSecrets?: { name: string }[] } = {},
): void {
  const subject = options.serviceAccount ?? name;
  if (options.serviceAccount === undefined) {
    emit(scope, owner, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name, labels },
      ...(options.imagePullSecrets !== undefined && options.imagePullSecrets.length > 0
        ? { imagePullSecrets: options.imagePullSecrets }
        : {}),
    });
  }
  emit(scope, owner, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name, labels },
    rules,
  });
  emit(scope, owner, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name, labels },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects: [{ kind: "ServiceAccount", name: subject, namespace: owner.metadata.namespace }],
  });
}

/** The in-cluster DNS name of a Service. */
export function serviceHost(service: string, namespace: string): string {
  return `${service}.${namespace}.svc.cluster.local`;
}

/**
 * A scope that collects plain objects instead of cdk8s ApiObjects: the same renderers, without
 * cdk8s. The benchmark uses it as the floor that synthesis is compared with.
 */
export class PlainScope extends Construct {
  readonly objects: KubeObject[] = [];
}

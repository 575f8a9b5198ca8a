// Pieces every workload construct uses: one ApiObject per rendered object, with a construct id
// derived from the owning resource so ids never collide within a namespace's chart, and the
// resource it was rendered for remembered so that synthesis can say which resource owns it.
import { ApiObject } from "cdk8s";
import type { Construct } from "constructs";
import type { KubeObject, Resource } from "../model.js";

const owners = new WeakMap<ApiObject, Resource>();

/** Adds one rendered object to the chart of the resource's namespace. */
export function emit(scope: Construct, owner: Resource, obj: KubeObject): ApiObject {
  const id = `${owner.kind}.${owner.metadata.name}.${obj.kind}.${obj.metadata.name}`;
  const o = new ApiObject(scope, id, obj);
  owners.set(o, owner);
  return o;
}

/** The resource an object was emitted for. */
export function ownerOf(o: ApiObject): Resource | undefined {
  return owners.get(o);
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

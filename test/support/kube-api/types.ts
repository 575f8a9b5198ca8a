// Shared shapes of the Kubernetes API server double.

/** A Kubernetes object as JSON. */
export type KObject = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
};

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  fieldsType: "FieldsV1";
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta extends Record<string, unknown> {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

/** The API verbs as the API server's audit log and RBAC name them. */
export type Verb =
  | "get"
  | "list"
  | "watch"
  | "create"
  | "update"
  | "patch"
  | "apply"
  | "delete"
  | "deletecollection"
  | "discovery"
  | "other";

/** One request the double received. */
export interface RecordedRequest {
  method: string;
  /** URL path without the query string. */
  path: string;
  contentType: string | undefined;
  query: Record<string, string>;
  verb: Verb;
  /** Status code of the response (set when the response starts; 0 when the connection was cut). */
  status?: number;
  /** Whether the response came from `failNext`. */
  injected?: boolean;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Deep copy of JSON data (objects, arrays, scalars). */
export function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clone) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = clone((value as Record<string, unknown>)[key]);
    return out as T;
  }
  return value;
}

/** Seconds-precision RFC 3339 time, as metav1.Time serializes. */
export function nowTime(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

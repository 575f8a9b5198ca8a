// Day-2 operations go through the controller's inventory ConfigMap, the one object every cluster
// controller keeps in its namespace. People set two annotations on it, as Flux users set
// `spec.suspend` and `reconcile.fluxcd.io/requestedAt` on a Kustomization:
//   mcpfleet.dev/suspend: "true"                  syncs are skipped until it is removed
//   reconcile.mcpfleet.dev/requestedAt: <time>    sync now (any new value is a new request)
// and the controller records its status there after each sync (data key `status.json`: applied
// and attempted revision, last error, lastHandledReconcileAt), under a field manager of its own,
// so that the inventory's writes and these never remove each other's fields.
import { McpfleetError } from "../errors.js";
import { applyInOwnNamespace, inventoryName } from "./inventory.js";
import {
  KubeApiError,
  type KubeClient,
  type KubeObjectRef,
  type LiveObject,
} from "../infra/kube/client.js";
import type { SyncError } from "./status.js";

export const SUSPEND_ANNOTATION = "mcpfleet.dev/suspend";
export const REQUESTED_AT_ANNOTATION = "reconcile.mcpfleet.dev/requestedAt";
export const STATUS_KEY = "status.json";

/** Field manager of the annotations the commands set. */
const COMMAND_FIELD_MANAGER = "mcpfleet-cli";
/** Only the object's metadata: a poll costs the same however large the inventory is. */
/** Accept header for an object's metadata only (PartialObjectMetadata), watches included. */
export const METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

/** Which controller: the inventory of `fieldManager` in `namespace`. */
export interface ControllerObject {
  client: KubeClient;
  namespace: string;
  fieldManager: string;
}

/** What the annotations ask of the controller. */
export interface Requests {
  suspended: boolean;
  requestedAt: string | undefined;
}

/** The status a controller records on its inventory (ControllerStatus.toJSON()). */
export interface RecordedStatus {
  ref: string;
  target: string;
  ready: boolean;
  lastAppliedRevision: string | null;
  lastAppliedAt: string | null;
  lastAttemptedRevision: string | null;
  lastError: SyncError | null;
  suspended: boolean;
  lastHandledReconcileAt: string | null;
}

export function inventoryRef(target: ControllerObject): KubeObjectRef {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: inventoryName(target.fieldManager), namespace: target.namespace },
  };
}

export function requestsOf(annotations: Record<string, string> | undefined): Requests {
  const requestedAt = annotations?.[REQUESTED_AT_ANNOTATION];
  return {
    suspended: annotations?.[SUSPEND_ANNOTATION] === "true",
    requestedAt: requestedAt !== undefined && requestedAt !== "" ? requestedAt : undefined,
  };
}

/** The error for a controller whose inventory is not there: nothing has run with these settings. */
export function noController(target: ControllerObject): McpfleetError {
  return new McpfleetError(
    "ERR_NO_CONTROLLER",
    `no controller inventory ConfigMap ${inventoryName(target.fieldManager)} in namespace ${target.namespace}: no controller with --field-manager ${target.fieldManager} has synced there (give its --controller-namespace and --field-manager)`,
  );
}

/** The inventory's annotations, without its data; undefined when there is no inventory. */
export async function readRequests(target: ControllerObject): Promise<Requests | undefined> {
  const { metadata } = inventoryRef(target);
  try {
    const path = await target.client.path("v1", "ConfigMap", metadata.namespace, metadata.name);
    const meta = await target.client.request<{
      metadata?: { annotations?: Record<string, string> };
    }>("GET", path, { accept: METADATA_ONLY });
    return requestsOf(meta.metadata?.annotations);
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) return undefined;
    throw err;
  }
}

/** The status recorded in an inventory ConfigMap; undefined when none is (or it is unreadable). */
export function recordedStatusOf(inventory: LiveObject): RecordedStatus | undefined {
  const text = (inventory as { data?: Record<string, string> }).data?.[STATUS_KEY];
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as RecordedStatus) : undefined;
  } catch {
    return undefined;
  }
}

/** Records the controller's status on its inventory (created, with its namespace, if missing). */
export async function recordStatus(target: ControllerObject, json: string): Promise<void> {
  await applyInOwnNamespace(
    target.client,
    { ...inventoryRef(target), data: { [STATUS_KEY]: json } },
    `${target.fieldManager}-status`,
  );
}

/** Sets (a string) or removes (null) annotations of an existing inventory. */
async function annotate(
  target: ControllerObject,
  annotations: Record<string, string | null>,
): Promise<void> {
  try {
    await target.client.mergePatch(
      inventoryRef(target),
      { metadata: { annotations } },
      { fieldManager: COMMAND_FIELD_MANAGER },
    );
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) throw noController(target);
    throw err;
  }
}

/** A new reconcile request's value: the time, as Flux writes requestedAt. */
export function requestTime(now = new Date()): string {
  return now.toISOString();
}

export async function suspend(target: ControllerObject): Promise<void> {
  await annotate(target, { [SUSPEND_ANNOTATION]: "true" });
}

/** Lifts the suspension and asks for a sync at once; returns the request's value. */
export async function resume(target: ControllerObject): Promise<string> {
  const at = requestTime();
  await annotate(target, { [SUSPEND_ANNOTATION]: null, [REQUESTED_AT_ANNOTATION]: at });
  return at;
}

/** Asks for a sync at once; refused while suspended. Returns the request's value. */
export async function requestReconcile(target: ControllerObject): Promise<string> {
  const requests = await readRequests(target);
  if (requests === undefined) throw noController(target);
  if (requests.suspended) {
    throw new McpfleetError(
      "ERR_SUSPENDED",
      `the controller of ${inventoryName(target.fieldManager)} in namespace ${target.namespace} is suspended; mcpfleet resume lifts the suspension and syncs`,
    );
  }
  const at = requestTime();
  await annotate(target, { [REQUESTED_AT_ANNOTATION]: at });
  return at;
}

/**
 * Waits until the controller records the request `at` as handled and returns the status it
 * recorded with it; undefined when `timeoutMs` passes first.
 */
export async function waitHandled(
  target: ControllerObject,
  at: string,
  timeoutMs: number,
  pollMs = 500,
): Promise<RecordedStatus | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const live = await target.client.get(inventoryRef(target));
    if (live === undefined) throw noController(target);
    const recorded = recordedStatusOf(live);
    if (recorded?.lastHandledReconcileAt === at) return recorded;
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, left)));
  }
}

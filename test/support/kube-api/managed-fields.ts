// managedFields: one entry per (manager, operation, subresource) with the FieldsV1 set it owns.
// Update operations (create, replace, merge/JSON patch) take ownership of the fields they change;
// apply is in apply.ts.
import { type FieldSet, type Shape, flatten, fromFieldsV1, toFieldsV1 } from "./fieldpath.js";
import { type KObject, type ManagedFieldsEntry, isRecord, nowTime } from "./types.js";

export interface Manager {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  subresource?: string;
  set: FieldSet;
}

/** Metadata fields the server owns: never tracked, never taken from an applied configuration. */
export const SYSTEM_METADATA = [
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "selfLink",
  "generateName",
] as const;

export type Scope = "main" | "status";

export function readManagers(obj: KObject | undefined): Manager[] {
  const entries = obj?.metadata?.managedFields;
  if (!Array.isArray(entries)) return [];
  return entries
    .filter((e): e is ManagedFieldsEntry => isRecord(e) && typeof e.manager === "string")
    .map((e) => {
      const manager: Manager = {
        manager: e.manager,
        operation: e.operation === "Apply" ? "Apply" : "Update",
        apiVersion: e.apiVersion,
        time: e.time,
        set: fromFieldsV1(e.fieldsV1),
      };
      if (e.subresource) manager.subresource = e.subresource;
      return manager;
    });
}

export function writeManagers(managers: Manager[]): ManagedFieldsEntry[] {
  return managers
    .filter((m) => m.set.size > 0)
    .map((m) => {
      const entry: ManagedFieldsEntry = {
        manager: m.manager,
        operation: m.operation,
        apiVersion: m.apiVersion,
        time: m.time,
        fieldsType: "FieldsV1",
        fieldsV1: toFieldsV1(m.set),
      };
      if (m.subresource !== undefined) entry.subresource = m.subresource;
      return entry;
    });
}

/**
 * The part of `obj` whose fields are tracked for a scope: no apiVersion/kind, no server-owned
 * metadata; for kinds with a status subresource, the main resource excludes status and the status
 * subresource covers only status.
 */
export function managedView(obj: KObject | undefined, scope: Scope, hasStatus: boolean): KObject {
  if (obj === undefined) return {};
  if (scope === "status") return obj.status === undefined ? {} : { status: obj.status };
  const view: KObject = { ...obj };
  delete view.apiVersion;
  delete view.kind;
  if (hasStatus) delete view.status;
  if (isRecord(obj.metadata)) {
    const metadata = { ...obj.metadata };
    for (const key of SYSTEM_METADATA) delete metadata[key];
    if (Object.keys(metadata).length > 0) view.metadata = metadata;
    else delete view.metadata;
  }
  return view;
}

export function findManager(
  managers: Manager[],
  name: string,
  operation: "Apply" | "Update",
  subresource: string | undefined,
): Manager | undefined {
  return managers.find(
    (m) => m.manager === name && m.operation === operation && m.subresource === subresource,
  );
}

/**
 * Ownership after an Update by `name`: it gains the fields it added or changed, every other
 * entry loses them, and removed fields leave every set.
 */
export function trackUpdate(
  managers: Manager[],
  name: string,
  apiVersion: string,
  subresource: string | undefined,
  oldView: KObject,
  newView: KObject,
  shape: Shape,
): Manager[] {
  const before = flatten(oldView, shape);
  const after = flatten(newView, shape);
  const changed: string[] = [];
  for (const [path, value] of after) if (before.get(path) !== value) changed.push(path);
  const removed = [...before.keys()].filter((path) => !after.has(path));
  if (changed.length === 0 && removed.length === 0) return managers;
  const next = managers.map((m) => ({ ...m, set: new Set(m.set) }));
  let own = findManager(next, name, "Update", subresource);
  if (own === undefined) {
    own = { manager: name, operation: "Update", apiVersion, time: nowTime(), set: new Set() };
    if (subresource !== undefined) own.subresource = subresource;
    next.push(own);
  }
  for (const m of next) {
    if (m === own) continue;
    for (const path of changed) m.set.delete(path);
    for (const path of removed) m.set.delete(path);
  }
  for (const path of changed) own.set.add(path);
  for (const path of removed) own.set.delete(path);
  own.time = nowTime();
  own.apiVersion = apiVersion;
  return next.filter((m) => m.set.size > 0);
}

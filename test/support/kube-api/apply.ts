// Server-side apply: merge an applied configuration into the live object, find conflicts with
// the fields other managers own, remove fields the manager stopped applying (when nobody else
// owns them), and record the manager's new field set.
import { ApiError } from "./errors.js";
import {
  type FieldSet,
  type Shape,
  canonical,
  describePath,
  dropEmptyAncestors,
  fieldSetOf,
  flatten,
  isAncestor,
  itemKey,
  removePath,
} from "./fieldpath.js";
import { type Manager, type Scope, findManager, managedView } from "./managed-fields.js";
import { type KObject, clone, isRecord, nowTime } from "./types.js";

export function mergeValues(live: unknown, config: unknown, shape: Shape): unknown {
  if (isRecord(config) && isRecord(live) && !shape.atomicMap) {
    const out: Record<string, unknown> = { ...live };
    for (const [key, value] of Object.entries(config)) {
      out[key] = mergeValues(live[key], value, shape.field(key));
    }
    return out;
  }
  if (Array.isArray(config) && Array.isArray(live) && shape.listType !== "atomic") {
    const out = [...(live as unknown[])];
    for (const item of config as unknown[]) {
      if (shape.listType === "set") {
        if (!out.some((x) => canonical(x) === canonical(item))) out.push(clone(item));
        continue;
      }
      const key = itemKey(item, shape.listKeys);
      const index = out.findIndex((x) => itemKey(x, shape.listKeys) === key);
      if (index >= 0) out[index] = mergeValues(out[index], item, shape.items());
      else out.push(clone(item));
    }
    return out;
  }
  return clone(config);
}

/** Drops nulls: an applied `null` is treated as an absent field. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = withoutNulls(v);
  return out;
}

export interface ApplyRequest {
  /** The live object, or undefined to create. */
  live: KObject | undefined;
  /** The object to merge into when there is no live one (apiVersion, kind, name, namespace). */
  base: KObject;
  /** Applied configuration with server-owned metadata and reset fields already removed. */
  config: KObject;
  manager: string;
  apiVersion: string;
  subresource: string | undefined;
  force: boolean;
  shape: Shape;
  scope: Scope;
  hasStatus: boolean;
}

export interface ApplyResult {
  object: KObject;
  managers: Manager[];
}

interface Conflict {
  manager: Manager;
  path: string;
}

function conflictError(conflicts: Conflict[]): ApiError {
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const who = `conflict with "${c.manager.manager}"${c.manager.subresource ? ` with subresource "${c.manager.subresource}"` : ""} using ${c.manager.apiVersion}`;
    byManager.set(who, [...(byManager.get(who) ?? []), describePath(c.path)]);
  }
  const n = conflicts.length;
  const lines = [...byManager].map(([who, paths]) =>
    paths.length === 1
      ? `${who}: ${paths[0]}`
      : `${who.replace(/^conflict/, "conflicts")}:\n${paths.map((p) => `- ${p}`).join("\n")}`,
  );
  const message = `Apply failed with ${n} conflict${n === 1 ? "" : "s"}: ${lines.join("\n")}`;
  const causes = conflicts.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with "${c.manager.manager}" using ${c.manager.apiVersion}`,
    field: describePath(c.path),
  }));
  return new ApiError(409, "Conflict", message, { causes });
}

export function serverSideApply(request: ApplyRequest, managers: Manager[]): ApplyResult {
  const { shape, scope, hasStatus, manager, subresource } = request;
  const config = withoutNulls(request.config) as KObject;
  const configView = managedView(config, scope, hasStatus);
  const newSet: FieldSet = fieldSetOf(configView, shape);
  const base = request.live ?? request.base;
  const merged = mergeValues(base, config, shape) as KObject;

  const own = findManager(managers, manager, "Apply", subresource);
  const others = managers.filter((m) => m.manager !== manager);
  const othersOwned: FieldSet = new Set();
  for (const m of managers) if (m !== own) for (const p of m.set) othersOwned.add(p);

  // Fields the manager applied before and not now: removed unless someone else owns them.
  const keep = new Set([...newSet, ...othersOwned]);
  const dropped = [...(own?.set ?? [])]
    .filter((p) => !keep.has(p) && ![...keep].some((k) => isAncestor(p, k)))
    .sort((a, b) => a.length - b.length);
  const removed: string[] = [];
  for (const path of dropped) {
    if (removed.some((r) => isAncestor(r, path))) continue;
    if (removePath(merged, path, shape)) {
      removed.push(path);
      dropEmptyAncestors(merged, path, keep, shape);
    }
  }

  // Conflicts: fields this configuration changes that another manager owns.
  const before = flatten(managedView(request.live, scope, hasStatus), shape);
  const after = flatten(managedView(merged, scope, hasStatus), shape);
  const conflicts: Conflict[] = [];
  for (const m of others) {
    for (const path of m.set) {
      if (newSet.has(path) && before.has(path) && before.get(path) !== after.get(path)) {
        conflicts.push({ manager: m, path });
      }
    }
  }
  if (conflicts.length > 0 && !request.force) throw conflictError(conflicts);

  const next = managers.map((m) => ({ ...m, set: new Set(m.set) }));
  for (const c of conflicts) {
    next
      .find(
        (m) =>
          m.manager === c.manager.manager &&
          m.operation === c.manager.operation &&
          m.subresource === c.manager.subresource,
      )
      ?.set.delete(c.path);
  }
  const mine = findManager(next, manager, "Apply", subresource);
  const sameSet =
    mine !== undefined &&
    mine.set.size === newSet.size &&
    [...newSet].every((p) => mine.set.has(p));
  if (mine === undefined) {
    const entry: Manager = {
      manager,
      operation: "Apply",
      apiVersion: request.apiVersion,
      time: nowTime(),
      set: newSet,
    };
    if (subresource !== undefined) entry.subresource = subresource;
    next.push(entry);
  } else if (!sameSet || mine.apiVersion !== request.apiVersion) {
    mine.set = newSet;
    mine.apiVersion = request.apiVersion;
    mine.time = nowTime();
  }
  return { object: merged, managers: next.filter((m) => m.set.size > 0) };
}

// The verbs on resources: get, list, create, update (PUT), patch (apply, merge, JSON,
// strategic), delete and deletecollection; watch is in watch.ts.
import { parse as parseYaml } from "yaml";
import { serverSideApply } from "./apply.js";
import { type Cluster, type PropagationPolicy, preconditionFailed } from "./cluster.js";
import {
  ApiError,
  MODIFIED,
  alreadyExists,
  badRequest,
  conflict,
  methodNotAllowed,
  notFound,
  unsupportedMediaType,
} from "./errors.js";
import { SYSTEM_METADATA, readManagers } from "./managed-fields.js";
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.js";
import { type ResourceType, groupVersion, storageKey } from "./resource-type.js";
import type { ResourceRequest } from "./router.js";
import { type Selector, parseFieldSelector, parseLabelSelector } from "./selectors.js";
import { type KObject, isRecord } from "./types.js";

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface Call {
  method: string;
  request: ResourceRequest;
  query: Record<string, string>;
  contentType: string;
  body: Buffer;
  userAgent: string | undefined;
}

function parseBody(call: Call): unknown {
  const text = call.body.toString("utf8");
  if (text.trim() === "") throw badRequest("the request body is empty");
  try {
    if (!call.contentType.includes("yaml")) return JSON.parse(text) as unknown;
    // YAML is a superset of JSON; clients mostly send JSON even for apply.
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return parseYaml(text) as unknown;
    }
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
  }
}

function parseObject(call: Call): KObject {
  const body = parseBody(call);
  if (!isRecord(body)) throw badRequest("the body of the request is not an object");
  return body;
}

/** The endpoint's apiVersion/kind must match the body's, as the API server's decoder requires. */
function checkTypeMeta(obj: KObject, req: ResourceRequest): void {
  const gv = groupVersion(req.type.group, req.version);
  if (obj.apiVersion !== undefined && obj.apiVersion !== gv) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${gv})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== req.type.kind) {
    throw badRequest(
      `the kind in the data (${String(obj.kind)}) does not match the expected kind (${req.type.kind})`,
    );
  }
}

function checkNamespaceAndName(obj: KObject, req: ResourceRequest): void {
  const meta = (obj.metadata ??= {});
  if (!isRecord(meta)) throw badRequest("metadata must be an object");
  if (req.type.namespaced) {
    if (meta.namespace !== undefined && meta.namespace !== "" && meta.namespace !== req.namespace) {
      throw badRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
    if (req.namespace !== undefined) meta.namespace = req.namespace;
  } else delete meta.namespace;
  if (req.name !== undefined) {
    if (meta.name !== undefined && meta.name !== req.name) {
      throw badRequest(
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${req.name})`,
      );
    }
    meta.name = req.name;
  }
}

function defaultManager(call: Call): string {
  const agent = call.userAgent?.split("/")[0]?.trim();
  return agent && agent.length > 0 ? agent.slice(0, 128) : "unknown";
}

function fieldManager(call: Call): string {
  const manager = call.query.fieldManager;
  if (manager !== undefined && manager.length > 128)
    throw badRequest("fieldManager: Too long: may not be more than 128 bytes");
  return manager ?? defaultManager(call);
}

function dryRun(call: Call): boolean {
  const value = call.query.dryRun;
  if (value === undefined || value === "") return false;
  if (value !== "All")
    throw badRequest(`dryRun: Unsupported value: "${value}": supported values: "All"`);
  return true;
}

function strictValidation(call: Call): boolean {
  const value = call.query.fieldValidation;
  if (value === undefined || value === "" || value === "Warn" || value === "Ignore") return false;
  if (value === "Strict") return true;
  throw badRequest(
    `fieldValidation: Unsupported value: "${value}": supported values: "Ignore", "Strict", "Warn"`,
  );
}

function warningHeaders(warnings: string[], call: Call): Record<string, string> {
  if (warnings.length === 0 || call.query.fieldValidation === "Ignore") return {};
  return { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(", ") };
}

function requireNamespace(req: ResourceRequest): void {
  if (req.type.namespaced && req.namespace === undefined) throw methodNotAllowed();
}

function existing(cluster: Cluster, req: ResourceRequest): KObject {
  const obj = cluster.get(req.type, req.namespace, req.name!);
  if (!obj) throw notFound(req.type, req.name!);
  return obj;
}

// --- reads -------------------------------------------------------------------------------------

export function handleGet(cluster: Cluster, call: Call): Reply {
  const req = call.request;
  if (req.type.namespaced && req.namespace === undefined) throw notFound(req.type, req.name!);
  return { status: 200, body: cluster.view(req.type, req.version, existing(cluster, req)) };
}

export function selectors(type: ResourceType, query: Record<string, string>): Selector[] {
  return [
    parseLabelSelector(query.labelSelector),
    parseFieldSelector(query.fieldSelector, type.fieldSelectors),
  ].filter((s): s is Selector => s !== undefined);
}

/** A list item: built-in lists omit apiVersion and kind on items, custom resource lists keep them. */
function listItem(cluster: Cluster, type: ResourceType, version: string, obj: KObject): KObject {
  const item = cluster.view(type, version, obj);
  if (type.builtin) {
    delete item.apiVersion;
    delete item.kind;
  }
  return item;
}

interface ContinueToken {
  after: string;
  rv: string;
}

export function handleList(cluster: Cluster, call: Call): Reply {
  const req = call.request;
  const filters = selectors(req.type, call.query);
  let items = cluster.store
    .list(storageKey(req.type), req.namespace)
    .filter((o) => filters.every((f) => f(o)));
  const rv = cluster.store.resourceVersion;
  const metadata: Record<string, unknown> = { resourceVersion: rv };
  if (call.query.continue) {
    let token: ContinueToken;
    try {
      token = JSON.parse(Buffer.from(call.query.continue, "base64url").toString()) as ContinueToken;
    } catch {
      throw badRequest("continue key is not valid: illegal base64 data");
    }
    items = items.filter((o) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name}` > token.after);
  }
  const limit = Number(call.query.limit ?? 0);
  if (limit > 0 && items.length > limit) {
    const remaining = items.length - limit;
    items = items.slice(0, limit);
    const last = items[items.length - 1]!;
    const token: ContinueToken = {
      after: `${last.metadata?.namespace ?? ""}/${last.metadata?.name}`,
      rv,
    };
    metadata.continue = Buffer.from(JSON.stringify(token)).toString("base64url");
    metadata.remainingItemCount = remaining;
  }
  return {
    status: 200,
    body: {
      kind: req.type.listKind,
      apiVersion: groupVersion(req.type.group, req.version),
      metadata,
      items: items.map((o) => listItem(cluster, req.type, req.version, o)),
    },
  };
}

// --- writes ------------------------------------------------------------------------------------

let generated = 0;
function generateSuffix(): string {
  const chars = "bcdfghjklmnpqrstvwxz2456789";
  let n = ++generated * 7919 + Date.now();
  let out = "";
  for (let i = 0; i < 5; i++) {
    out += chars[n % chars.length];
    n = Math.floor(n / chars.length);
  }
  return out;
}

export function handleCreate(cluster: Cluster, call: Call): Reply {
  const req = call.request;
  if (req.name !== undefined) throw methodNotAllowed();
  requireNamespace(req);
  const obj = parseObject(call);
  checkTypeMeta(obj, req);
  checkNamespaceAndName(obj, req);
  const meta = obj.metadata!;
  if ((meta.name === undefined || meta.name === "") && typeof meta.generateName === "string") {
    meta.name = `${meta.generateName}${generateSuffix()}`;
  }
  const name = String(meta.name ?? "");
  if (name !== "" && cluster.get(req.type, req.namespace, name))
    throw alreadyExists(req.type, name);
  cluster.checkNamespace(req.type, req.namespace, name);
  const result = cluster.write({
    type: req.type,
    version: req.version,
    old: undefined,
    next: obj,
    subresource: undefined,
    manager: fieldManager(call),
    dryRun: dryRun(call),
    strict: strictValidation(call),
  });
  return {
    status: 201,
    body: cluster.view(req.type, req.version, result.object),
    headers: warningHeaders(result.warnings, call),
  };
}

function checkResourceVersion(obj: KObject, old: KObject, type: ResourceType): void {
  const rv = obj.metadata?.resourceVersion;
  if (rv !== undefined && rv !== "" && rv !== old.metadata?.resourceVersion) {
    throw conflict(type, String(old.metadata?.name), MODIFIED);
  }
}

export function handleUpdate(cluster: Cluster, call: Call): Reply {
  const req = call.request;
  requireNamespace(req);
  const obj = parseObject(call);
  checkTypeMeta(obj, req);
  checkNamespaceAndName(obj, req);
  const old = existing(cluster, req);
  checkResourceVersion(obj, old, req.type);
  const result = cluster.write({
    type: req.type,
    version: req.version,
    old,
    next: obj,
    subresource: req.subresource,
    manager: fieldManager(call),
    dryRun: dryRun(call),
    strict: strictValidation(call),
  });
  return {
    status: 200,
    body: cluster.view(req.type, req.version, result.object),
    headers: warningHeaders(result.warnings, call),
  };
}

export function handlePatch(cluster: Cluster, call: Call): Reply {
  const req = call.request;
  requireNamespace(req);
  const contentType = call.contentType.split(";")[0]!.trim();
  if (
    contentType === "application/apply-patch+yaml" ||
    contentType === "application/apply-patch+json"
  ) {
    return apply(cluster, call);
  }
  if (call.query.force !== undefined)
    throw badRequest("force: Invalid value: true: may not be specified for non-apply patch");
  const old = existing(cluster, req);
  const current = cluster.present(req.type, req.version, old);
  let patched: unknown;
  switch (contentType) {
    case "application/merge-patch+json":
      patched = mergePatch(current, parseBody(call));
      break;
    case "application/json-patch+json":
      patched = jsonPatch(current, parseBody(call));
      break;
    case "application/strategic-merge-patch+json":
      if (!req.type.builtin) throw unsupportedMediaType(contentType);
      patched = strategicMergePatch(current, parseBody(call), req.type.shape(req.version));
      break;
    default:
      throw unsupportedMediaType(contentType);
  }
  if (!isRecord(patched)) throw badRequest("the patch result is not an object");
  const next = patched as KObject;
  checkTypeMeta(next, req);
  checkNamespaceAndName(next, req);
  checkResourceVersion(next, old, req.type);
  const result = cluster.write({
    type: req.type,
    version: req.version,
    old,
    next,
    subresource: req.subresource,
    manager: fieldManager(call),
    dryRun: dryRun(call),
    strict: strictValidation(call),
  });
  return {
    status: 200,
    body: cluster.view(req.type, req.version, result.object),
    headers: warningHeaders(result.warnings, call),
  };
}

function apply(cluster: Cluster, call: Call): Reply {
  const req = call.request;
  const manager = call.query.fieldManager;
  if (manager === undefined || manager === "") {
    throw badRequest("PATCH /apply: fieldManager is required for apply requests");
  }
  const force = call.query.force === "true";
  const config = parseObject(call);
  if (config.apiVersion === undefined || config.kind === undefined) {
    throw badRequest("apiVersion and kind must be set in an applied configuration");
  }
  checkTypeMeta(config, req);
  checkNamespaceAndName(config, req);
  const meta = config.metadata!;
  if (meta.managedFields !== undefined) throw badRequest("metadata.managedFields must be nil");
  const old = cluster.get(req.type, req.namespace, req.name!);
  if (old) {
    if (meta.uid !== undefined && meta.uid !== old.metadata?.uid) {
      throw preconditionFailed(
        req.type,
        req.name!,
        "UID",
        String(meta.uid),
        String(old.metadata?.uid),
      );
    }
    checkResourceVersion(config, old, req.type);
  } else {
    if (req.subresource !== undefined) throw notFound(req.type, req.name!);
    cluster.checkNamespace(req.type, req.namespace, req.name!);
  }
  for (const key of SYSTEM_METADATA) if (key !== "name" && key !== "namespace") delete meta[key];

  const scope = req.subresource === "status" ? "status" : "main";
  let applied: KObject = config;
  if (scope === "status") {
    applied = {
      apiVersion: config.apiVersion,
      kind: config.kind,
      metadata: { name: meta.name, namespace: meta.namespace },
    };
    if (config.status !== undefined) applied.status = config.status;
  } else if (req.type.status) delete applied.status;
  const warnings: string[] = [];
  const schema = req.type.crd?.schemas.get(req.version);
  if (schema) {
    const pruned = schema.prune(applied);
    if (pruned.length > 0 && strictValidation(call)) {
      throw badRequest(
        `strict decoding error: ${pruned.map((p) => `unknown field "${p}"`).join(", ")}`,
      );
    }
    for (const path of pruned) warnings.push(`unknown field "${path}"`);
  }
  const base: KObject = {
    apiVersion: groupVersion(req.type.group, req.version),
    kind: req.type.kind,
    metadata: req.type.namespaced
      ? { name: req.name, namespace: req.namespace }
      : { name: req.name },
  };
  const live = old ? cluster.present(req.type, req.version, old) : undefined;
  const { object, managers } = serverSideApply(
    {
      live,
      base,
      config: applied,
      manager,
      apiVersion: groupVersion(req.type.group, req.version),
      subresource: req.subresource,
      force,
      shape: req.type.shape(req.version),
      scope,
      hasStatus: req.type.status,
    },
    readManagers(old),
  );
  const result = cluster.write({
    type: req.type,
    version: req.version,
    old,
    next: object,
    subresource: req.subresource,
    manager,
    managers,
    dryRun: dryRun(call),
  });
  warnings.push(...result.warnings.filter((w) => !warnings.includes(w)));
  return {
    status: old ? 200 : 201,
    body: cluster.view(req.type, req.version, result.object),
    headers: warningHeaders(warnings, call),
  };
}

// --- deletes -----------------------------------------------------------------------------------

interface DeleteOptions {
  propagationPolicy?: string;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
}

function deleteOptions(call: Call): DeleteOptions {
  const text = call.body.toString("utf8").trim();
  if (text === "") return {};
  const body = parseBody(call);
  return isRecord(body) ? body : {};
}

function policyOf(call: Call, options: DeleteOptions): PropagationPolicy {
  const policy = call.query.propagationPolicy ?? options.propagationPolicy;
  if (policy === undefined || policy === "") {
    return call.query.orphanDependents === "true" || options.orphanDependents === true
      ? "Orphan"
      : "Background";
  }
  if (policy !== "Background" && policy !== "Foreground" && policy !== "Orphan") {
    throw badRequest(
      `propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  return policy;
}

function deletedReply(
  cluster: Cluster,
  req: ResourceRequest,
  object: KObject,
  gone: boolean,
): Reply {
  if (!gone || !req.type.builtin) {
    return { status: 200, body: cluster.view(req.type, req.version, object) };
  }
  const details: Record<string, unknown> = {
    name: object.metadata?.name,
    kind: req.type.plural,
    uid: object.metadata?.uid,
  };
  if (req.type.group !== "") details.group = req.type.group;
  return {
    status: 200,
    body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details },
  };
}

export function handleDelete(cluster: Cluster, call: Call): Reply {
  const req = call.request;
  requireNamespace(req);
  if (req.subresource !== undefined) throw methodNotAllowed();
  const old = existing(cluster, req);
  const options = deleteOptions(call);
  const pre = options.preconditions;
  if (pre?.uid && pre.uid !== old.metadata?.uid) {
    throw preconditionFailed(req.type, req.name!, "UID", pre.uid, String(old.metadata?.uid));
  }
  if (pre?.resourceVersion && pre.resourceVersion !== old.metadata?.resourceVersion) {
    throw preconditionFailed(
      req.type,
      req.name!,
      "ResourceVersion",
      pre.resourceVersion,
      String(old.metadata?.resourceVersion),
    );
  }
  const isDry = dryRun(call) || (options.dryRun ?? []).includes("All");
  const { object, gone } = cluster.delete(req.type, old, policyOf(call, options), isDry);
  return deletedReply(cluster, req, object, gone);
}

export function handleDeleteCollection(cluster: Cluster, call: Call): Reply {
  const req = call.request;
  if (req.type.plural === "namespaces" && req.type.group === "") throw methodNotAllowed();
  const options = deleteOptions(call);
  const policy = policyOf(call, options);
  const isDry = dryRun(call);
  const filters = selectors(req.type, call.query);
  const items = cluster.store
    .list(storageKey(req.type), req.namespace)
    .filter((o) => filters.every((f) => f(o)));
  const deleted = items.map((o) => cluster.delete(req.type, o, policy, isDry).object);
  if (req.type.builtin) {
    return {
      status: 200,
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { kind: req.type.plural },
      },
    };
  }
  return {
    status: 200,
    body: {
      kind: req.type.listKind,
      apiVersion: groupVersion(req.type.group, req.version),
      metadata: { resourceVersion: cluster.store.resourceVersion },
      items: deleted.map((o) => cluster.view(req.type, req.version, o)),
    },
  };
}

export { ApiError };

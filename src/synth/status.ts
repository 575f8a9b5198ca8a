// Computed status of every kind, as the controller writes it after applying a revision: phase,
// conditions (one `<Ref>RefValidated` per reference that is set, and `Ready`), group membership,
// config hashes and the workloads that reference each config, the copied hash fields on
// workloads, in-cluster URLs and observedGeneration. Pure and deterministic: time comes in as a
// parameter, and what only the cluster knows (ready replicas) comes in as observations.
import type * as T from "../../generated/types.js";
import { KINDS, type Kind } from "../schema/kinds.js";
import { type Resolution, resolvedKey } from "./context.js";
import { embeddingServerUrl } from "./constructs/embeddingserver.js";
import { registryUrl } from "./constructs/mcpregistry.js";
import { mcpServerUrl } from "./constructs/mcpserver.js";
import { remoteProxyUrl } from "./constructs/mcpremoteproxy.js";
import { runnerNotRendered } from "./constructs/runner-workload.js";
import { resolveVmcpMembers, vmcpGroup } from "./constructs/vmcp/backends.js";
import { vmcpUrl } from "./constructs/vmcp/names.js";
import { contentHash } from "./hash.js";
import { type Resource, type ResourceSet, groupName } from "./model.js";

/** lastTransitionTime when none is given: a fixed instant, so output stays deterministic. */
export const EPOCH = "1970-01-01T00:00:00Z";

/** What the cluster reports about a workload; absent until the controller has observed it. */
export interface Observation {
  readyReplicas?: number;
}

export interface StatusOptions {
  /** lastTransitionTime of every condition (the controller keeps earlier times unchanged). */
  now?: string;
  /** Ready replicas per workload, by `<kind>/<namespace>/<name>`. */
  observe?: (kind: Kind, namespace: string, name: string) => Observation | undefined;
  /**
   * What synthesis resolved (SynthResult.resolved) for the same set: status reports it as is.
   * Without it, status resolves what it needs itself.
   */
  resolved?: Resolution;
}

export type Status = Record<string, unknown>;

export interface ResourceStatus {
  apiVersion: string;
  kind: Kind;
  metadata: { name: string; namespace: string };
  status: Status;
}

/** The hash config kinds publish as `status.configHash` and workloads copy. */
export function configHash(resource: Resource): string {
  return contentHash((resource as { spec?: unknown }).spec ?? {});
}

/** One reference a resource makes, for a condition and (on workloads) a copied hash. */
interface Reference {
  /** Condition type, e.g. GroupRefValidated. */
  condition: string;
  /** Reason stem: `<stem>Found` / `<stem>NotFound`. */
  stem: string;
  kind: Kind;
  names: string[];
  /** A missing target fails the resource; otherwise the condition is advisory. */
  fatal: boolean;
  /** Status field the target's configHash is copied into. */
  hashField?: string;
}

function ref(
  condition: string,
  kind: Kind,
  name: string | undefined,
  fatal: boolean,
  hashField?: string,
): Reference[] {
  if (name === undefined || name === "") return [];
  const stem = condition.replace(/Refs?Validated$/, "");
  return [{ condition, stem, kind, names: [name], fatal, ...(hashField ? { hashField } : {}) }];
}

function refList(condition: string, kind: Kind, names: (string | undefined)[]): Reference[] {
  const unique = [...new Set(names.filter((n): n is string => n !== undefined && n !== ""))].sort();
  if (unique.length === 0) return [];
  const stem = condition.replace(/Refs?Validated$/, "");
  return [{ condition, stem, kind, names: unique, fatal: true }];
}

/** The references MCPServer and MCPRemoteProxy share, in a fixed order. */
function proxyReferences(s: Resource<"MCPServer" | "MCPRemoteProxy">["spec"]): Reference[] {
  return [
    ...ref("GroupRefValidated", "MCPGroup", groupName(s.groupRef), false),
    ...ref(
      "ToolConfigRefValidated",
      "MCPToolConfig",
      s.toolConfigRef?.name,
      true,
      "toolConfigHash",
    ),
    ...ref(
      "ExternalAuthConfigRefValidated",
      "MCPExternalAuthConfig",
      s.externalAuthConfigRef?.name,
      true,
      "externalAuthConfigHash",
    ),
    ...ref(
      "AuthServerRefValidated",
      "MCPExternalAuthConfig",
      s.authServerRef?.name,
      true,
      "authServerConfigHash",
    ),
    ...ref(
      "OIDCConfigRefValidated",
      "MCPOIDCConfig",
      s.oidcConfigRef?.name,
      true,
      "oidcConfigHash",
    ),
  ];
}

/** Every reference of a resource, in a fixed order. */
export function referencesOf(r: Resource): Reference[] {
  switch (r.kind) {
    case "MCPServer": {
      const s = (r as Resource<"MCPServer">).spec;
      return [
        ...proxyReferences(s),
        ...ref(
          "TelemetryConfigRefValidated",
          "MCPTelemetryConfig",
          s.telemetryConfigRef?.name,
          true,
          "telemetryConfigHash",
        ),
      ];
    }
    case "MCPRemoteProxy":
      return proxyReferences((r as Resource<"MCPRemoteProxy">).spec);
    case "MCPServerEntry": {
      const s = (r as Resource<"MCPServerEntry">).spec;
      return [
        ...ref("GroupRefValidated", "MCPGroup", groupName(s.groupRef), true),
        ...ref(
          "ExternalAuthConfigRefValidated",
          "MCPExternalAuthConfig",
          s.externalAuthConfigRef?.name,
          true,
        ),
      ];
    }
    case "VirtualMCPServer": {
      const v = r as Resource<"VirtualMCPServer">;
      const s = v.spec;
      const outgoing = [
        s.outgoingAuth?.default?.externalAuthConfigRef?.name,
        ...Object.values(s.outgoingAuth?.backends ?? {}).map((b) => b?.externalAuthConfigRef?.name),
      ];
      return [
        ...ref("GroupRefValidated", "MCPGroup", vmcpGroup(v), true),
        ...ref("OIDCConfigRefValidated", "MCPOIDCConfig", s.incomingAuth.oidcConfigRef?.name, true),
        ...ref(
          "TelemetryConfigRefValidated",
          "MCPTelemetryConfig",
          s.telemetryConfigRef?.name,
          true,
        ),
        ...ref("EmbeddingServerRefValidated", "EmbeddingServer", s.embeddingServerRef?.name, true),
        ...refList(
          "CompositeToolRefsValidated",
          "VirtualMCPCompositeToolDefinition",
          (s.config?.compositeToolRefs ?? []).map((c) => c.name),
        ),
        ...refList(
          "ToolConfigRefsValidated",
          "MCPToolConfig",
          (s.config?.aggregation?.tools ?? []).map((t) => t.toolConfigRef?.name),
        ),
        ...refList("ExternalAuthConfigRefsValidated", "MCPExternalAuthConfig", outgoing),
      ];
    }
    default:
      return [];
  }
}

interface Ctx {
  set: ResourceSet;
  now: string;
  observe: NonNullable<StatusOptions["observe"]>;
  resolved: Resolution | undefined;
}

function condition(
  type: string,
  ok: boolean,
  reason: string,
  message: string,
  generation: number,
  now: string,
): T.Condition {
  return {
    type,
    status: ok ? "True" : "False",
    observedGeneration: generation,
    lastTransitionTime: now,
    reason,
    message,
  };
}

/** generation of the resource; a resource read from files has none, as if just created. */
function generationOf(r: Resource): number {
  return r.metadata.generation ?? 1;
}

interface RefOutcome {
  conditions: T.Condition[];
  /** Messages of missing fatal references. */
  fatal: string[];
  /** Messages of missing advisory references. */
  advisory: string[];
  hashes: Record<string, string>;
}

function checkRefs(r: Resource, ctx: Ctx): RefOutcome {
  const out: RefOutcome = { conditions: [], fatal: [], advisory: [], hashes: {} };
  const ns = r.metadata.namespace;
  const gen = generationOf(r);
  for (const reference of referencesOf(r)) {
    const missing = reference.names.filter((n) => ctx.set.get(reference.kind, ns, n) === undefined);
    if (missing.length === 0) {
      out.conditions.push(
        condition(
          reference.condition,
          true,
          `${reference.stem}Found`,
          `${reference.kind} ${reference.names.map((n) => `"${n}"`).join(", ")} found`,
          gen,
          ctx.now,
        ),
      );
      if (reference.hashField !== undefined) {
        const target = ctx.set.get(reference.kind, ns, reference.names[0]);
        if (target !== undefined) out.hashes[reference.hashField] = configHash(target);
      }
    } else {
      const message = `${reference.kind} ${missing.map((n) => `"${n}"`).join(", ")} not found in namespace "${ns}"`;
      out.conditions.push(
        condition(reference.condition, false, `${reference.stem}NotFound`, message, gen, ctx.now),
      );
      (reference.fatal ? out.fatal : out.advisory).push(message);
    }
  }
  return out;
}

/** Phase and Ready of a workload from its references and what the cluster reports. */
function workloadState(
  r: Resource,
  refs: RefOutcome,
  ctx: Ctx,
  options: { replicas?: number; stopped?: boolean },
): { phase: string; message: string; ready: T.Condition; readyReplicas?: number } {
  const gen = generationOf(r);
  const observed = ctx.observe(r.kind, r.metadata.namespace, r.metadata.name);
  if (refs.fatal.length > 0) {
    const message = refs.fatal.join("; ");
    return {
      phase: "Failed",
      message,
      ready: condition("Ready", false, "ReferenceNotFound", message, gen, ctx.now),
    };
  }
  if (options.stopped === true && options.replicas === 0) {
    return {
      phase: "Stopped",
      message: "scaled to zero",
      ready: condition("Ready", false, "Stopped", "scaled to zero", gen, ctx.now),
      readyReplicas: 0,
    };
  }
  const readyReplicas = observed?.readyReplicas;
  if (readyReplicas !== undefined && readyReplicas > 0) {
    return {
      phase: "Ready",
      message: `${readyReplicas} replica(s) ready`,
      ready: condition("Ready", true, "Ready", `${readyReplicas} replica(s) ready`, gen, ctx.now),
      readyReplicas,
    };
  }
  const message =
    refs.advisory.length > 0
      ? `waiting for ready replicas; ${refs.advisory.join("; ")}`
      : "waiting for ready replicas";
  return {
    phase: "Pending",
    message,
    ready: condition("Ready", false, "Pending", message, gen, ctx.now),
    ...(readyReplicas !== undefined ? { readyReplicas } : {}),
  };
}

/** Why synthesis renders nothing for a workload it could otherwise render. */
function unrenderable(r: Resource): string | undefined {
  return r.kind === "MCPServer" || r.kind === "MCPRemoteProxy" ? runnerNotRendered(r) : undefined;
}

/**
 * The kinds whose status schema has `readyReplicas`: the API server prunes it from the others'
 * (MCPRemoteProxy, VirtualMCPServer), and a status written with it never compares equal to the
 * one read back.
 */
const REPORTS_READY_REPLICAS: ReadonlySet<string> = new Set([
  "MCPServer",
  "MCPRegistry",
  "EmbeddingServer",
]);

function workloadStatus(r: Resource, ctx: Ctx, url: string, extra: Status = {}): Status {
  const refs = checkRefs(r, ctx);
  const why = unrenderable(r);
  if (why !== undefined) {
    const gen = generationOf(r);
    return {
      phase: "Failed",
      message: why,
      url,
      observedGeneration: gen,
      ...refs.hashes,
      ...extra,
      conditions: [...refs.conditions, condition("Ready", false, "NotRendered", why, gen, ctx.now)],
    };
  }
  const spec = (r as { spec?: { replicas?: number } }).spec;
  const state = workloadState(r, refs, ctx, {
    replicas: spec?.replicas,
    stopped: r.kind === "MCPServer",
  });
  return {
    phase: state.phase,
    message: state.message,
    url,
    observedGeneration: generationOf(r),
    ...(state.readyReplicas !== undefined && REPORTS_READY_REPLICAS.has(r.kind)
      ? { readyReplicas: state.readyReplicas }
      : {}),
    ...refs.hashes,
    ...extra,
    conditions: [...refs.conditions, state.ready],
  };
}

/** Workloads that reference a config resource, sorted by kind then name. */
function referencingWorkloads(target: Resource, ctx: Ctx): { kind: string; name: string }[] {
  const out: { kind: string; name: string }[] = [];
  for (const kind of [
    "MCPServer",
    "MCPRemoteProxy",
    "MCPServerEntry",
    "VirtualMCPServer",
  ] as const) {
    for (const r of ctx.set.list(kind, target.metadata.namespace)) {
      const hit = referencesOf(r).some(
        (x) => x.kind === target.kind && x.names.includes(target.metadata.name),
      );
      if (hit) out.push({ kind, name: r.metadata.name });
    }
  }
  return out;
}

function configStatus(r: Resource, ctx: Ctx): Status {
  const gen = generationOf(r);
  return {
    observedGeneration: gen,
    configHash: configHash(r),
    referencingWorkloads: referencingWorkloads(r, ctx),
    conditions: [condition("Ready", true, "Valid", "configuration is valid", gen, ctx.now)],
  };
}

function groupStatus(r: Resource<"MCPGroup">, ctx: Ctx): Status {
  const ns = r.metadata.namespace;
  const name = r.metadata.name;
  const members = (kind: "MCPServer" | "MCPRemoteProxy" | "MCPServerEntry"): string[] =>
    ctx.set
      .list(kind, ns)
      .filter((m) => groupName(m.spec.groupRef) === name)
      .map((m) => m.metadata.name)
      .sort();
  const servers = members("MCPServer");
  const remoteProxies = members("MCPRemoteProxy");
  const entries = members("MCPServerEntry");
  const gen = generationOf(r);
  const total = servers.length + remoteProxies.length + entries.length;
  return {
    observedGeneration: gen,
    phase: "Ready",
    servers,
    serverCount: servers.length,
    remoteProxies,
    remoteProxyCount: remoteProxies.length,
    entries,
    entryCount: entries.length,
    conditions: [condition("Ready", true, "Ready", `${total} member(s)`, gen, ctx.now)],
  };
}

function entryStatus(r: Resource<"MCPServerEntry">, ctx: Ctx): Status {
  const refs = checkRefs(r, ctx);
  const gen = generationOf(r);
  const ok = refs.fatal.length === 0;
  const message = ok ? "all references resolved" : refs.fatal.join("; ");
  return {
    observedGeneration: gen,
    phase: ok ? "Valid" : "Failed",
    conditions: [
      ...refs.conditions,
      condition("Ready", ok, ok ? "Valid" : "ReferenceNotFound", message, gen, ctx.now),
    ],
  };
}

function compositeStatus(r: Resource<"VirtualMCPCompositeToolDefinition">, ctx: Ctx): Status {
  const gen = generationOf(r);
  const users = ctx.set
    .list("VirtualMCPServer", r.metadata.namespace)
    .filter((v) => (v.spec.config?.compositeToolRefs ?? []).some((c) => c.name === r.metadata.name))
    .map((v) => v.metadata.name)
    .sort();
  return {
    observedGeneration: gen,
    phase: "Valid",
    referencingVirtualServers: users,
    conditions: [condition("Ready", true, "Valid", "workflow is valid", gen, ctx.now)],
  };
}

function vmcpStatus(r: Resource<"VirtualMCPServer">, ctx: Ctx): Status {
  const { backends } =
    ctx.resolved?.vmcpMembers.get(resolvedKey(r)) ?? resolveVmcpMembers(r, ctx.set);
  return workloadStatus(r, ctx, vmcpUrl(r.metadata.name, r.metadata.namespace), {
    backendCount: backends.length,
    discoveredBackends: backends.map((b) => ({
      name: b.name,
      kind: b.kind,
      url: b.url,
      ...(b.externalAuthConfigRef !== undefined ? { authConfigRef: b.externalAuthConfigRef } : {}),
      status: "unknown",
    })),
  });
}

/** The status of one resource. */
export function computeStatus(r: Resource, set: ResourceSet, options: StatusOptions = {}): Status {
  const ctx: Ctx = {
    set,
    now: options.now ?? EPOCH,
    observe: options.observe ?? (() => undefined),
    resolved: options.resolved,
  };
  switch (r.kind) {
    case "MCPToolConfig":
    case "MCPTelemetryConfig":
    case "MCPOIDCConfig":
    case "MCPExternalAuthConfig":
      return configStatus(r, ctx);
    case "MCPGroup":
      return groupStatus(r, ctx);
    case "MCPServer":
      return workloadStatus(r, ctx, mcpServerUrl(r));
    case "MCPRemoteProxy":
      return workloadStatus(r, ctx, remoteProxyUrl(r));
    case "MCPServerEntry":
      return entryStatus(r, ctx);
    case "VirtualMCPCompositeToolDefinition":
      return compositeStatus(r, ctx);
    case "VirtualMCPServer":
      return vmcpStatus(r, ctx);
    case "EmbeddingServer":
      return workloadStatus(r, ctx, embeddingServerUrl(r));
    case "MCPRegistry":
      return workloadStatus(r, ctx, registryUrl(r.metadata.name, r.metadata.namespace));
  }
}

/** Status of every resource of the set, in kind order then namespace and name. */
export function computeStatuses(set: ResourceSet, options: StatusOptions = {}): ResourceStatus[] {
  const out: ResourceStatus[] = [];
  for (const kind of KINDS) {
    for (const r of set.list(kind)) {
      out.push({
        apiVersion: r.apiVersion,
        kind,
        metadata: { name: r.metadata.name, namespace: r.metadata.namespace },
        status: computeStatus(r, set, options),
      });
    }
  }
  return out;
}

import type { Construct } from "constructs";
import type { Kind } from "../schema/kinds.js";
import type { VmcpMembers } from "./constructs/vmcp/members.js";
import type { SynthIssues } from "./issues.js";
import type { Resource, ResourceSet } from "./model.js";
import type { SynthOptions } from "./options.js";

/**
 * What renderers resolved from the whole set that status reports too, so that status reads it
 * instead of resolving it again. Keyed by `resolvedKey`.
 */
export interface Resolution {
  /** The group and backends of each VirtualMCPServer. */
  vmcpMembers: Map<string, VmcpMembers>;
}

export function emptyResolution(): Resolution {
  return { vmcpMembers: new Map() };
}

/** `<namespace>/<name>`: a resource's key in a Resolution (each map holds one kind). */
export function resolvedKey(resource: Resource): string {
  return `${resource.metadata.namespace}/${resource.metadata.name}`;
}

/** What a kind's construct may consult while rendering, and where it reports. */
export interface SynthContext {
  resources: ResourceSet;
  options: SynthOptions;
  /** Where renderers report what they render differently from what the resource asks, or not at all. */
  issues: SynthIssues;
  resolved: Resolution;
}

/** Renders one resource of kind K into Kubernetes objects under `scope` (its namespace chart). */
export type KindRenderer<K extends Kind> = (
  scope: Construct,
  resource: Resource<K>,
  context: SynthContext,
) => void;

/** The renderer of every kind that creates workloads; kinds absent here render only status. */
export type RendererTable = { [K in Kind]?: KindRenderer<K> };

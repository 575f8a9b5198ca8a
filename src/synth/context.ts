import type { Construct } from "constructs";
import type { Kind } from "../schema/kinds.js";
import type { Resource, ResourceSet } from "./model.js";
import type { SynthOptions } from "./options.js";

/** What a kind's construct may consult while rendering: the whole set, and the run's options. */
export interface SynthContext {
  resources: ResourceSet;
  options: SynthOptions;
}

/** Renders one resource of kind K into Kubernetes objects under `scope` (its namespace chart). */
export type KindRenderer<K extends Kind> = (
  scope: Construct,
  resource: Resource<K>,
  context: SynthContext,
) => void;

/** The renderer of every kind that creates workloads; kinds absent here render only status. */
export type RendererTable = { [K in Kind]?: KindRenderer<K> };

import { projectVersion } from "../project.js";

/** Which registry server program an MCPRegistry deploys (docs/synth-workloads.md). */
export const REGISTRY_SERVERS = ["mcpfleet", "toolhive"] as const;
export type RegistryServerKind = (typeof REGISTRY_SERVERS)[number];

/** Images and other settings of a synthesis run; the CLI exposes each as a flag. */
export interface SynthOptions {
  runnerImage: string;
  vmcpImage: string;
  /**
   * `mcpfleet`: this project's `registry serve` (the default); `toolhive`: the reference's
   * registry server, with its arguments, ports and probes.
   */
  registryServer: RegistryServerKind;
  registryImage: string;
  embeddingImage: string;
}

/**
 * The ToolHive release whose proxy runner and virtual server the tests build and run against
 * what synth renders (tools/runtime/go.mod pins the same version; a test checks the two agree).
 */
export const TOOLHIVE_VERSION = "v0.47.0";
/** The registry server release the reference operator's chart deploys (docs/synth-workloads.md). */
export const REGISTRY_SERVER_VERSION = "v1.5.2";
/** This project's image: `registry serve` is one of its commands (docs/image.md). */
export const MCPFLEET_IMAGE_REPOSITORY = "ghcr.io/mcpfleet/mcpfleet";
/** The text-embeddings-inference CPU release. */
export const EMBEDDING_VERSION = "cpu-1.8";

/**
 * The reference operator's images (reference-notes), pinned: a floating tag would run a program
 * other than the one the rendered configuration was tested with.
 */
export const DEFAULT_SYNTH_OPTIONS: SynthOptions = {
  runnerImage: `ghcr.io/stacklok/toolhive/proxyrunner:${TOOLHIVE_VERSION}`,
  vmcpImage: `ghcr.io/stacklok/toolhive/vmcp:${TOOLHIVE_VERSION}`,
  registryServer: "mcpfleet",
  registryImage: defaultRegistryImage("mcpfleet"),
  embeddingImage: `ghcr.io/huggingface/text-embeddings-inference:${EMBEDDING_VERSION}`,
};

/** `options` deploying `server` for MCPRegistry, at that server's pinned image. */
export function withRegistryServer(
  options: SynthOptions,
  server: RegistryServerKind,
): SynthOptions {
  return { ...options, registryServer: server, registryImage: defaultRegistryImage(server) };
}

/** The pinned image of each registry server: ours at this package's version, or the reference's. */
export function defaultRegistryImage(server: RegistryServerKind): string {
  return server === "mcpfleet"
    ? `${MCPFLEET_IMAGE_REPOSITORY}:${projectVersion()}`
    : `ghcr.io/stacklok/thv-registry-api:${REGISTRY_SERVER_VERSION}`;
}

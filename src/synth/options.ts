/** Images and other settings of a synthesis run; the CLI exposes each as a flag. */
export interface SynthOptions {
  runnerImage: string;
  vmcpImage: string;
  registryImage: string;
  embeddingImage: string;
}

/** The images the reference operator deploys by default (reference-notes), as our defaults. */
export const DEFAULT_SYNTH_OPTIONS: SynthOptions = {
  runnerImage: "ghcr.io/stacklok/toolhive/proxyrunner:latest",
  vmcpImage: "ghcr.io/stacklok/toolhive/vmcp:latest",
  registryImage: "ghcr.io/stacklok/thv-registry-api:latest",
  embeddingImage: "ghcr.io/huggingface/text-embeddings-inference:cpu-latest",
};

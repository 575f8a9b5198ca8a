// The name of the manifest synth leaves in an output directory. Kept apart from the writer
// (synth/output-dir.ts) because input discovery (validate/sources.ts) must recognise the file
// too, and validation sits below synthesis.

/** The file in an output directory listing the files mcpfleet wrote there (JSON). */
export const OUTPUT_MANIFEST = ".mcpfleet-output.json";

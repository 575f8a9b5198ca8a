// The messages between the calling thread and the validation pool's workers (pool.ts,
// worker.ts): a file to validate, and what comes back for it.
import type { EnforceNotes } from "./enforce-servers.js";
import type { ResourceFacts } from "./reference-facts.js";
import type { ResourceResult, ValidateOptions } from "./types.js";
import type { Position } from "../yaml/documents.js";

/** A file for a worker thread of the pool: validated with the default schema set. */
export interface PoolTask {
  name: string;
  path: string;
  options: Omit<ValidateOptions, "stdin" | "onProgress">;
}

/** A resource of ours validated in a worker: its facts for the reference level, and its place. */
export interface PooledResource {
  /** Index of its result among the file's results. */
  result: number;
  facts: ResourceFacts;
  prefix: string;
  doc: { index: number; range: readonly [number, number]; start: Position };
}

/** What a worker sends back for one file: its results, and its text for later positions. */
export interface PooledFile {
  results: ResourceResult[];
  own: PooledResource[];
  enforce: EnforceNotes;
  text: string;
}
/** A worker's answer to one task. */
export type PoolReply = { ok: true; done: PooledFile } | { ok: false; error: string };

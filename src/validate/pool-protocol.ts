// The messages between the calling thread and the validation pool's workers (pool.ts,
// worker.ts): a file to validate, and what comes back for it.
import type { FileVerdict } from "./file-verdict.js";
import type { ValidateOptions } from "./types.js";

/** A file for a worker thread of the pool: validated with the default schema set. */
export interface PoolTask {
  name: string;
  path: string;
  options: Omit<ValidateOptions, "stdin" | "onProgress" | "onSkippedDir">;
}

/** A worker's answer to one task. */
export type PoolReply = { ok: true; done: FileVerdict } | { ok: false; error: string };

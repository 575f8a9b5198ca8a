// Validation on the pool's worker threads (pool.ts): in a worker, one file through the schema
// and CEL levels; in the calling thread, the choice to use the pool (what the workers send back
// is adopted into the run as a file verdict: file-verdict.ts).
import { type SchemaSet, defaultSchemaSet } from "../schema/index.js";
import { newContext } from "./context.js";
import { EnforceServersLevel } from "./enforce-servers.js";
import { type FileVerdict, fileVerdict } from "./file-verdict.js";
import type { PoolTask } from "./pool-protocol.js";
import { type Input, STDIN_PATH, isInputError, readFileCapped } from "./sources.js";
import type { ValidateOptions } from "./types.js";
import { fileResult } from "./validate-text.js";

/** In a worker thread: reads and validates one file at the schema and CEL levels. */
export async function validatePooledFile(task: PoolTask): Promise<FileVerdict> {
  const read = readFileCapped(task.path, task.options.maxFileBytes);
  if (!read.ok) {
    const level = read.kind === "io" ? "io" : "parse";
    const results = [fileResult(task.name, read.message, level)];
    return { results, own: [], enforce: new EnforceServersLevel().export(results), text: "" };
  }
  return fileVerdict(task.name, read.text, newContext(task.options, defaultSchemaSet()));
}

/**
 * The files validated on worker threads (see pool.ts), by input index; or undefined when the
 * run stays in this thread: no `threads` asked for, a schema set other than the default one
 * (workers load their own), or a worker that failed.
 */
export async function validateInPool(
  inputs: readonly Input[],
  opts: ValidateOptions,
  set: SchemaSet,
): Promise<Map<number, FileVerdict> | undefined> {
  if (opts.threads === undefined || opts.threads < 2 || set !== defaultSchemaSet())
    return undefined;
  const files: { index: number; task: PoolTask }[] = [];
  const { stdin: _stdin, onProgress: _onProgress, onSkippedDir: _onSkipped, ...options } = opts;
  inputs.forEach((input, index) => {
    if (isInputError(input) || input.path === STDIN_PATH) return;
    files.push({ index, task: { name: input.name, path: input.path, options } });
  });
  // Loaded only here: worker_threads and the pool were a part of every run's start-up.
  const { poolSize, runPool } = await import("./pool.js");
  const threads = poolSize(files.length, opts.threads);
  if (threads < 2) return undefined;
  try {
    const done = await runPool(
      files.map((f) => f.task),
      threads,
    );
    return new Map(files.map((f, i) => [f.index, done[i]!]));
  } catch {
    return undefined;
  }
}

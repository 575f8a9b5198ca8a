// Validation on the pool's worker threads (pool.ts): in a worker, one file through the schema
// and CEL levels; in the calling thread, the choice to use the pool and the adoption of what the
// workers send back into the run's reference level.
import { type SchemaSet, defaultSchemaSet } from "../schema/index.js";
import { type Context, newContext } from "./context.js";
import { EnforceServersLevel } from "./enforce-servers.js";
import type { PoolTask, PooledFile } from "./pool-protocol.js";
import { type Input, STDIN_PATH, isInputError, readFileCapped } from "./sources.js";
import type { ResourceResult, ValidateOptions } from "./types.js";
import { fileResult, validateText } from "./validate-text.js";
import { type ParsedDocument, reparsedDocument } from "../yaml/documents.js";

/** In a worker thread: reads and validates one file at the schema and CEL levels. */
export async function validatePooledFile(task: PoolTask): Promise<PooledFile> {
  const read = readFileCapped(task.path, task.options.maxFileBytes);
  if (!read.ok) {
    const level = read.kind === "io" ? "io" : "parse";
    const results = [fileResult(task.name, read.message, level)];
    return { results, own: [], enforce: new EnforceServersLevel().export(results), text: "" };
  }
  const ctx = newContext(task.options, defaultSchemaSet());
  const results = await validateText(task.name, read.text, ctx);
  const own = ctx.references.resources.map(({ result, prefix, doc, ...facts }) => ({
    result: results.indexOf(result),
    facts,
    prefix,
    doc: { index: doc.index, range: doc.range, start: doc.start },
  }));
  return { results, own, enforce: ctx.enforce.export(results), text: read.text };
}

/** Takes a worker's results for a file into this run, its resources into the reference level. */
export function adoptPooledFile(done: PooledFile, ctx: Context): ResourceResult[] {
  const docs = new Map<number, ParsedDocument>();
  for (const r of done.own) {
    const result = done.results[r.result];
    if (result === undefined) continue;
    let doc = docs.get(r.doc.index);
    if (doc === undefined) {
      doc = reparsedDocument(done.text, r.doc.index, r.doc.range, r.doc.start);
      docs.set(r.doc.index, doc);
    }
    ctx.references.add(r.facts, { result, prefix: r.prefix, doc });
  }
  ctx.enforce.adopt(done.enforce, done.results);
  return done.results;
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
): Promise<Map<number, PooledFile> | undefined> {
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

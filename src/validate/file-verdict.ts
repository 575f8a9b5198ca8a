// One file's verdict at the schema and CEL levels, made apart from the run it belongs to, with
// what the run's reference and enforceServers levels need from it: the form in which a worker
// thread sends a file back (pool.ts), and in which the validate server keeps it between runs
// (kept-by-text.ts). Adopting it into a run gives the results validating it there would have.
import type { Context } from "./context.js";
import type { EnforceNotes } from "./enforce-servers.js";
import type { ResourceFacts } from "./reference-facts.js";
import type { ResourceResult, ValidateOptions } from "./types.js";
import { validateText } from "./validate-text.js";
import { type ParsedDocument, type Position, reparsedDocument } from "../yaml/documents.js";

/** A resource of ours in a verdict: its facts for the reference level, and its place. */
export interface VerdictResource {
  /** Index of its result among the file's results. */
  result: number;
  facts: ResourceFacts;
  prefix: string;
  doc: { index: number; range: readonly [number, number]; start: Position };
}

/** A file's results, what the run-wide levels need of it, and its text for later positions. */
export interface FileVerdict {
  results: ResourceResult[];
  own: VerdictResource[];
  enforce: EnforceNotes;
  text: string;
}

/** Validates `text` (the file `name`) in `ctx`, a context of its own (see fileContext). */
export async function fileVerdict(
  name: string,
  text: string,
  ctx: Context,
  again?: () => string | undefined,
): Promise<FileVerdict> {
  const results = await validateText(name, text, ctx, again);
  const own = ctx.references.resources.map(({ result, prefix, doc, ...facts }) => ({
    result: results.indexOf(result),
    facts,
    prefix,
    doc: { index: doc.index, range: doc.range, start: doc.start },
  }));
  return { results, own, enforce: ctx.enforce.export(results), text };
}

/** Takes a verdict into the run of `ctx`, its resources into the reference level. */
export function adoptVerdict(verdict: FileVerdict, ctx: Context): ResourceResult[] {
  const docs = new Map<number, ParsedDocument>();
  for (const r of verdict.own) {
    const result = verdict.results[r.result];
    if (result === undefined) continue;
    let doc = docs.get(r.doc.index);
    if (doc === undefined) {
      doc = reparsedDocument(verdict.text, r.doc.index, r.doc.range, r.doc.start);
      docs.set(r.doc.index, doc);
    }
    ctx.references.add(r.facts, { result, prefix: r.prefix, doc });
  }
  ctx.enforce.adopt(verdict.enforce, verdict.results);
  return verdict.results;
}

/**
 * The settings a verdict depends on, as a key: a verdict kept under other settings is not the
 * one this run would reach. Every option counts but those that only feed or watch the run, so
 * that an option added later counts too. Undefined where verdicts are not kept: with CRDs given
 * (`--crd`), whose files may change between runs as the inputs may.
 */
export function verdictSettings(options: ValidateOptions): string | undefined {
  if (options.crdPaths.length > 0) return undefined;
  const {
    stdin: _stdin,
    onProgress: _onProgress,
    onSkippedDir: _onSkippedDir,
    threads: _threads,
    ...settings
  } = options;
  return JSON.stringify(settings);
}

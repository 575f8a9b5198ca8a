// `mcpfleet validate` as a library: reads the inputs, classifies every document, runs the schema
// and CEL levels on each and the reference level across all of them, and returns one result per
// resource. Nothing here throws for bad input: every problem is a reported issue.
import { McpfleetError } from "../errors.js";
import { type SchemaSet, defaultSchemaSet } from "../schema/index.js";
import { type Context, fileContext, newContext } from "./context.js";
import { type FileVerdict, adoptVerdict, fileVerdict, verdictSettings } from "./file-verdict.js";
import { issueLine } from "./format.js";
import { validateInPool } from "./pooled.js";
import {
  STDIN_PATH,
  collectInputs,
  isInputError,
  readFileCapped,
  readProcessStdin,
  readStdinCapped,
  type ReadOutcome,
} from "./sources.js";
import {
  DEFAULT_OPTIONS,
  EXIT_INVALID,
  EXIT_USAGE_OR_IO,
  EXIT_VALID,
  type Issue,
  type Report,
  type ResourceResult,
  type Summary,
  type ValidateOptions,
} from "./types.js";
import { fileResult, validateText } from "./validate-text.js";
import type { KeptByText } from "./kept-by-text.js";

/**
 * Validates the files and directories named by `paths` (`-` for stdin; none means `.`).
 * `verdicts`: verdicts on files from earlier runs of this process (the validate server): a file
 * read with the text and settings of one is not validated again, and each verdict is kept for
 * the runs after (see KeptByText).
 */
export async function validatePaths(
  paths: readonly string[],
  options: Partial<ValidateOptions> = {},
  set: SchemaSet = defaultSchemaSet(),
  verdicts?: KeptByText<FileVerdict>,
): Promise<Report> {
  return (await validateInputs(paths, options, set, false, verdicts)).report;
}

/** A report, and the text of each file it was made from, in input order. */
export interface ValidatedTexts {
  report: Report;
  /** Empty when the report has errors: nothing is rendered from an invalid set. */
  files: { name: string; text: string }[];
}

/**
 * Validates as validatePaths does and keeps the text each file had when it was read, so that a
 * caller (synth, apply, diff) renders exactly the bytes that were validated, without a second
 * read that could see a file changed in between.
 */
export function validateReadPaths(
  paths: readonly string[],
  options: Partial<ValidateOptions> = {},
  set: SchemaSet = defaultSchemaSet(),
  verdicts?: KeptByText<FileVerdict>,
): Promise<ValidatedTexts> {
  return validateInputs(paths, options, set, true, verdicts);
}

/**
 * The run of validatePaths and validateReadPaths. The texts, when kept, are let go at the first
 * error: a run over a large repository with mistakes holds none of its files to the end.
 */
async function validateInputs(
  paths: readonly string[],
  options: Partial<ValidateOptions>,
  set: SchemaSet,
  keepTexts: boolean,
  verdicts: KeptByText<FileVerdict> | undefined,
): Promise<ValidatedTexts> {
  const opts: ValidateOptions = { ...DEFAULT_OPTIONS, ...options };
  const ctx = newContext(opts, set);
  const results: ResourceResult[] = [];
  const files: { name: string; text: string }[] = [];
  // Verdicts are kept for the default schema set only: another set is not part of their key.
  const settings =
    verdicts === undefined || set !== defaultSchemaSet() ? undefined : verdictSettings(opts);
  const inputs = collectInputs(paths.length > 0 ? paths : ["."], opts.onSkippedDir);
  const pooled = await validateInPool(inputs, opts, set);
  let checked = 0;
  for (const [i, input] of inputs.entries()) {
    opts.onProgress?.(i, inputs.length);
    // The previous file's results, looked at once: an error ends the keeping of texts.
    for (; checked < results.length && keepTexts; checked++) {
      if (results[checked]!.errors.length > 0) keepTexts = false;
    }
    if (!keepTexts) files.length = 0;
    if (isInputError(input)) {
      results.push(fileResult(input.name, input.error, "io"));
      continue;
    }
    const done = pooled?.get(i);
    if (done !== undefined) {
      results.push(...adoptVerdict(done, ctx));
      if (keepTexts) files.push({ name: input.name, text: done.text });
      continue;
    }
    let read: ReadOutcome;
    if (input.path === STDIN_PATH) {
      const stdin = opts.stdin ?? (() => readProcessStdin(opts.maxFileBytes));
      read = await readStdinCapped(stdin, opts.maxFileBytes);
    } else {
      read = readFileCapped(input.path, opts.maxFileBytes);
    }
    if (!read.ok) {
      results.push(fileResult(input.name, read.message, read.kind === "io" ? "io" : "parse"));
      continue;
    }
    if (settings !== undefined && verdicts !== undefined) {
      const verdict = await keptVerdict(verdicts, settings, input.name, read, ctx);
      results.push(...adoptVerdict(verdict, ctx));
    } else {
      results.push(...(await validateText(input.name, read.text, ctx, read.again)));
    }
    if (keepTexts) files.push({ name: input.name, text: read.text });
  }
  await finish(ctx, results);
  const report = { resources: results, summary: summarise(results) };
  return { report, files: report.summary.errors > 0 ? [] : files };
}

/**
 * The verdict on a file read, from an earlier run of this process when it had this text under
 * these settings; else made now, and kept.
 */
async function keptVerdict(
  verdicts: KeptByText<FileVerdict>,
  settings: string,
  name: string,
  read: { text: string; again?: () => string | undefined },
  ctx: Context,
): Promise<FileVerdict> {
  const kept = verdicts.find(name, read.text, settings);
  if (kept !== undefined) return kept;
  const verdict = await fileVerdict(name, read.text, fileContext(ctx), read.again);
  verdicts.keep(name, read.text, settings, verdict);
  return verdict;
}

/** Validates documents given as text (one "file"); the reference level sees only these. */
export async function validateTexts(
  files: readonly { name: string; text: string }[],
  options: Partial<ValidateOptions> = {},
  set: SchemaSet = defaultSchemaSet(),
): Promise<Report> {
  const opts: ValidateOptions = { ...DEFAULT_OPTIONS, ...options };
  const ctx = newContext(opts, set);
  const results: ResourceResult[] = [];
  for (const f of files) results.push(...(await validateText(f.name, f.text, ctx)));
  await finish(ctx, results);
  return { resources: results, summary: summarise(results) };
}

async function finish(ctx: Context, results: readonly ResourceResult[]): Promise<void> {
  ctx.references.finish();
  await ctx.enforce.finish();
  // Issues in the order of their position in the file, whatever level found them.
  const byPosition = (a: Issue, b: Issue) => a.line - b.line || a.column - b.column;
  for (const r of results) {
    if (r.errors.length > 1) r.errors = r.errors.toSorted(byPosition);
    if (r.warnings.length > 1) r.warnings = r.warnings.toSorted(byPosition);
  }
}

export function summarise(results: readonly ResourceResult[]): Summary {
  const summary: Summary = {
    resources: results.length,
    valid: 0,
    invalid: 0,
    skipped: 0,
    errors: 0,
    warnings: 0,
  };
  for (const r of results) {
    if (r.skipped) summary.skipped++;
    else if (r.valid) summary.valid++;
    else summary.invalid++;
    summary.errors += r.errors.length;
    summary.warnings += r.warnings.length;
  }
  return summary;
}

/**
 * 2 when a path could not be read, else 1 when anything is invalid or nothing was found (unless
 * `allowEmpty`: an empty input in CI is most often a pipeline that rendered nothing), else 0.
 */
export function exitCode(report: Report, { allowEmpty = false } = {}): number {
  if (report.resources.some((r) => r.errors.some((e) => e.level === "io"))) return EXIT_USAGE_OR_IO;
  if (report.resources.length === 0 && !allowEmpty) return EXIT_INVALID;
  return report.summary.invalid > 0 ? EXIT_INVALID : EXIT_VALID;
}

/**
 * For commands that must not act on invalid input (synth, the controller): throws
 * ERR_INVALID_RESOURCES naming the first errors, or returns when the report has none.
 */
export function assertValid(report: Report, shown = 20): void {
  const lines: string[] = [];
  for (const r of report.resources) {
    for (const e of r.errors) lines.push(issueLine(r, e, "error"));
  }
  if (lines.length === 0) return;
  const more = lines.length > shown ? `\n... and ${lines.length - shown} more` : "";
  throw new McpfleetError(
    "ERR_INVALID_RESOURCES",
    `${lines.length} validation error(s):\n${lines.slice(0, shown).join("\n")}${more}`,
  );
}

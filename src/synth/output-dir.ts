// Writing rendered files into an output directory without ever destroying what we did not write.
// As cdk8s, helm and kustomize do, a run writes into the directory; it removes only files that an
// earlier run wrote there itself, which a small manifest in the directory lists. A directory that
// would hold or be an input, the current directory, a file or a device is refused before anything
// is written, and so is a non-empty directory without our manifest unless the caller forces it.
import {
  type Stats,
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { McpfleetError } from "../errors.js";
import { OUTPUT_MANIFEST } from "../output-manifest.js";

export { OUTPUT_MANIFEST };

interface Manifest {
  generator: string;
  files: string[];
}

export interface OutputGuard {
  /** How the directory was named on the command line, for messages (`--output-dir`, `--target`). */
  flag: string;
  /** Paths the run reads (files or directories); the output may not be one of them or hold one. */
  inputs?: readonly string[];
  /** Write into a non-empty directory mcpfleet did not create (never deletes its files). */
  force?: boolean;
  /** Recorded in the manifest: which command wrote the directory. */
  generator: string;
  /** The layout this command wrote before output directories had a manifest (adopted). */
  legacy?: LegacyLayout;
}

/** See legacyLayout. */
export interface LegacyLayout {
  signature: string;
  extraFiles?: readonly string[];
  subdirs?: readonly string[];
}

export interface WriteOutcome {
  written: string[];
  unchanged: string[];
  removed: string[];
}

const refuse = (message: string) => new McpfleetError("ERR_USAGE", message);

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

function isWithin(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** The files an earlier run listed, or undefined when the directory has no manifest of ours. */
export function readOutputManifest(dir: string): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, OUTPUT_MANIFEST), "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as Partial<Manifest>;
    if (!Array.isArray(parsed.files)) return undefined;
    // Only plain relative paths inside the directory: a hand-edited manifest must not be able to
    // point the removal step anywhere else.
    return parsed.files.filter(
      (f): f is string =>
        typeof f === "string" &&
        f !== "" &&
        !isAbsolute(f) &&
        !f.split(/[\\/]/).some((part) => part === ".." || part === "." || part === ""),
    );
  } catch {
    return undefined;
  }
}

function describe(stats: Stats): string {
  if (stats.isFile()) return "an existing file";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  if (stats.isFIFO()) return "a pipe";
  if (stats.isSocket()) return "a socket";
  return "not a directory";
}

/**
 * Refuses an output directory that a run must not write into; returns its absolute path and the
 * files an earlier run listed (undefined: none, the directory is new or empty or forced).
 */
export function checkOutputDir(
  dir: string,
  guard: OutputGuard,
): { target: string; previous: string[] | undefined } {
  const { flag } = guard;
  if (dir === "") throw refuse(`${flag} must not be empty`);
  const target = canonical(dir);
  if (target === canonical(".")) {
    throw refuse(
      `${flag} ${dir}: refusing to write into the current directory; name a directory of its own, such as dist`,
    );
  }
  for (const input of guard.inputs ?? []) {
    if (input === "-") continue;
    const path = canonical(input);
    if (isWithin(path, target)) {
      throw refuse(
        `${flag} ${dir}: ${path === target ? "is" : "holds"} the input ${input}; name a directory of its own, such as dist`,
      );
    }
  }
  // The type of what is there is judged on the path as given: a link to a directory is a directory
  // to write into (/dev/stdout is a link to a pipe, a terminal or a file, never one).
  const given = resolve(dir);
  const own = lstatOrUndefined(given);
  if (own === undefined) return { target: given, previous: undefined };
  const stats = own.isSymbolicLink() ? statOrUndefined(given) : own;
  if (stats === undefined || !stats.isDirectory()) {
    throw refuse(
      `${flag} ${dir}: is ${stats === undefined ? "a broken link" : describe(stats)}; name a directory`,
    );
  }
  if (guard.legacy !== undefined) adoptLegacyOutput(given, guard.generator, guard.legacy);
  const previous = readOutputManifest(given);
  if (previous !== undefined) return { target: given, previous };
  if (readdirSync(given).length > 0 && guard.force !== true) {
    throw refuse(
      `${flag} ${dir}: is a non-empty directory that mcpfleet did not write; empty it, choose another, or pass --force (nothing in it is ever deleted)`,
    );
  }
  return { target: given, previous: undefined };
}

/** The absolute path with symbolic links resolved as far as the path exists. */
function canonical(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(canonical(parent), basename(absolute));
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

let tempCounter = 0;

/** Writes `text` to `path` through a temporary file in the same directory and a rename. */
function writeFileAtomically(path: string, text: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}-${++tempCounter}.tmp`);
  const fd = openSync(temp, "wx", 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, path);
  } catch (err) {
    unlinkSync(temp);
    throw err;
  }
}

function sameContent(path: string, text: string): boolean {
  try {
    return readFileSync(path, "utf8") === text;
  } catch {
    return false;
  }
}

/**
 * Writes `files` (relative path -> text) into `dir` after checkOutputDir's checks. Files the
 * directory's manifest lists and this run does not produce are removed, with the directories
 * that held only them; nothing else is ever removed. A file of the same name that mcpfleet did
 * not write is refused unless forced, before anything is written.
 */
export function writeOutputDir(
  dir: string,
  files: ReadonlyMap<string, string>,
  guard: OutputGuard,
): WriteOutcome {
  const { target, previous } = checkOutputDir(dir, guard);
  const ours = new Set(previous ?? []);
  const outcome: WriteOutcome = { written: [], unchanged: [], removed: [] };
  if (guard.force !== true) {
    for (const name of files.keys()) {
      const path = join(target, name);
      if (!ours.has(name) && lstatOrUndefined(path) !== undefined) {
        throw refuse(
          `${guard.flag} ${dir}: ${name} exists and was not written by mcpfleet; move it or pass --force`,
        );
      }
    }
  }
  try {
    mkdirSync(target, { recursive: true });
    for (const [name, text] of files) {
      const path = join(target, name);
      if (sameContent(path, text)) {
        outcome.unchanged.push(name);
        continue;
      }
      mkdirSync(dirname(path), { recursive: true });
      writeFileAtomically(path, text);
      outcome.written.push(name);
    }
    for (const name of ours) {
      if (files.has(name)) continue;
      const path = join(target, name);
      const stats = lstatOrUndefined(path);
      if (stats === undefined || !stats.isFile()) continue;
      unlinkSync(path);
      outcome.removed.push(name);
      removeEmptyParents(dirname(path), target);
    }
    const manifest: Manifest = { generator: guard.generator, files: [...files.keys()] };
    writeFileAtomically(join(target, OUTPUT_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  } catch (err) {
    if (err instanceof McpfleetError) throw err;
    throw new McpfleetError("ERR_IO", `cannot write ${dir}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return outcome;
}

/**
 * The files of `dir` when it holds exactly the layout an earlier mcpfleet wrote before output
 * directories had a manifest: `signature` names a file that layout always has, and every file
 * must be `*.yaml` or one of `extraFiles`, in `dir` or in one of `subdirs`. Undefined otherwise.
 */
function legacyLayout(dir: string, layout: LegacyLayout): string[] | undefined {
  const files: string[] = [];
  const walk = (rel: string): boolean => {
    let entries;
    try {
      entries = readdirSync(join(dir, rel), { withFileTypes: true });
    } catch {
      return false;
    }
    for (const e of entries) {
      const name = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory() && rel === "" && (layout.subdirs ?? []).includes(e.name)) {
        if (!walk(name)) return false;
      } else if (e.isFile() && (e.name.endsWith(".yaml") || layout.extraFiles?.includes(name))) {
        files.push(name);
      } else {
        return false;
      }
    }
    return true;
  };
  if (!walk("") || !files.includes(layout.signature)) return undefined;
  return files.sort();
}

/**
 * Takes over the output of an earlier mcpfleet that wrote no manifest (see legacyLayout): lists
 * its files in a manifest, so that they are managed from now on instead of refused.
 */
function adoptLegacyOutput(dir: string, generator: string, layout: LegacyLayout): void {
  if (readOutputManifest(dir) !== undefined) return;
  const files = legacyLayout(dir, layout);
  if (files === undefined) return;
  const manifest: Manifest = { generator, files };
  writeFileAtomically(join(dir, OUTPUT_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

function removeEmptyParents(from: string, root: string): void {
  for (let dir = from; dir !== root && isWithin(dir, root); dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty (or already gone): stop climbing
    }
  }
}

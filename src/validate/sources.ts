// Finding and reading the input files: paths, recursive directories and stdin, with the checks
// that keep hostile input from reaching the parser (size cap, binary content, non-UTF-8 bytes).
import {
  type Dirent,
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  realpathSync,
  statSync,
} from "node:fs";
import { join } from "node:path";
import { OUTPUT_MANIFEST } from "../output-manifest.js";
import {
  type ReadOutcome,
  decodeText,
  hasResourceExtension,
  isSkippedEntry,
  tooLarge,
} from "../resource-files.js";

// Their home is below every layer now; validate and its tests still import them from here.
export { type ReadOutcome, decodeText, firstInvalidUtf8 } from "../resource-files.js";

export const STDIN_PATH = "-";
export const STDIN_NAME = "<stdin>";
/** A file to read, in the order given on the command line (directories sorted by name). */
export interface InputFile {
  /** As shown in results: the path as given, or joined below a given directory. */
  name: string;
  /** Path to read, or STDIN_PATH. */
  path: string;
}

/** A path that could not be listed (missing, unreadable directory). */
export interface InputError {
  name: string;
  error: string;
}

export type Input = InputFile | InputError;

export function isInputError(input: Input): input is InputError {
  return "error" in input;
}

function errnoMessage(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case "ENOENT":
      return "no such file or directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "ELOOP":
      return "too many levels of symbolic links";
    case "ENOTDIR":
      return "not a directory";
    default:
      return e.message ?? String(err);
  }
}

type EntryKind = "dir" | "file" | "other";

/** What a directory entry is, a symbolic link followed (throws for a broken link). */
function entryKind(full: string, entry: Dirent): EntryKind {
  const st = entry.isSymbolicLink() ? statSync(full) : entry;
  return st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
}

/**
 * The files named by `paths`. A directory is walked recursively for `.yaml`, `.yml` and `.json`
 * files (hidden entries and node_modules skipped, symbolic-link loops broken); a file given by
 * name is read whatever its extension.
 */
export function collectInputs(
  paths: readonly string[],
  onSkippedDir?: (dir: string) => void,
): Input[] {
  const inputs: Input[] = [];
  const seenDirs = new Set<string>();
  const seenFiles = new Set<string>();
  // A file named twice (directly and inside a directory given too) is read once: twice would
  // make every resource in it a duplicate of itself.
  // `real`: its real path when known (a plain entry of a directory whose real path is known).
  const addFile = (name: string, real?: string): void => {
    if (real === undefined) {
      try {
        real = realpathSync.native(name);
      } catch {
        real = name; // Unreadable: reported when it is read.
      }
    }
    if (seenFiles.has(real)) return;
    seenFiles.add(real);
    inputs.push({ name, path: name });
  };

  const walk = (dir: string, given: boolean): void => {
    let real: string;
    try {
      real = realpathSync.native(dir);
    } catch (err) {
      inputs.push({ name: dir, error: errnoMessage(err) });
      return;
    }
    if (seenDirs.has(real)) return;
    seenDirs.add(real);
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      inputs.push({ name: dir, error: errnoMessage(err) });
      return;
    }
    // A directory synth (or the controller's dir target) wrote is its output, not input: `validate
    // .` after `synth . -d dist` would read dist's objects again. Named itself, it is read.
    if (!given && entries.some((e) => e.name === OUTPUT_MANIFEST)) {
      onSkippedDir?.(dir);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (isSkippedEntry(entry.name)) continue;
      const full = join(dir, entry.name);
      let kind: EntryKind;
      try {
        kind = entryKind(full, entry);
      } catch (err) {
        if (hasResourceExtension(entry.name)) inputs.push({ name: full, error: errnoMessage(err) });
        continue;
      }
      if (kind === "dir") walk(full, false);
      else if (kind === "file" && hasResourceExtension(entry.name)) {
        addFile(full, entry.isSymbolicLink() ? undefined : join(real, entry.name));
      }
    }
  };

  for (const path of paths) {
    if (path === STDIN_PATH) {
      inputs.push({ name: STDIN_NAME, path: STDIN_PATH });
      continue;
    }
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (err) {
      inputs.push({ name: path, error: errnoMessage(err) });
      continue;
    }
    if (isDir) walk(path, true);
    else addFile(path);
  }
  return inputs;
}

/** Reads a whole file, refusing anything larger than `maxBytes` before reading it. */
export function readFileCapped(path: string, maxBytes: number): ReadOutcome {
  const read = readPlainTextFile(path, maxBytes);
  if (read === undefined) return readBytesCapped(path, maxBytes);
  const { text, size, mtimeMs } = read;
  const length = text.length;
  // Closes over the file's identity, not its text: the text is what need not be kept.
  const again = () => {
    const now = readPlainTextFile(path, maxBytes);
    const same = now?.size === size && now.mtimeMs === mtimeMs && now.text.length === length;
    return same ? now.text : undefined;
  };
  return { ok: true, text, again };
}

/**
 * The text of a regular file within the cap, read and decoded by Node in one call (the cheapest
 * way through a repository of small files); undefined for anything else, and for a text that
 * may not be what it looks like (a NUL, a replaced invalid byte, a byte order mark, grown past
 * the cap since its size was read), which readBytesCapped() then reads and judges byte by byte.
 */
function readPlainTextFile(
  path: string,
  maxBytes: number,
): { text: string; size: number; mtimeMs: number } | undefined {
  try {
    const st = statSync(path);
    if (!st.isFile() || st.size > maxBytes) return undefined;
    const text = readFileSync(path, "utf8");
    if (text.charCodeAt(0) === 0xfeff) return undefined;
    // A UTF-8 character takes at most three bytes per UTF-16 unit: count them only when that
    // leaves the cap in doubt.
    if (text.length * 3 > maxBytes && Buffer.byteLength(text, "utf8") > maxBytes) return undefined;
    if (text.includes("\0") || text.includes("\ufffd")) return undefined;
    return { text, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}

/** readFileCapped() on the bytes: pipes, devices, and files with doubtful content. */
function readBytesCapped(path: string, maxBytes: number): ReadOutcome {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    return { ok: false, kind: "io", message: errnoMessage(err) };
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) return { ok: false, kind: "io", message: "is a directory" };
    if (st.size > maxBytes) return { ok: false, kind: "content", message: tooLarge(maxBytes) };
    // Whole file in the first read when its size is known; pipes and devices in chunks. The
    // cap is checked on every read, so a file that grows while being read is still cut off.
    const chunks: Buffer[] = [];
    let total = 0;
    // A regular file's buffer is its size and one byte (to see it grew), not a 64 KiB minimum:
    // buffers live outside the JavaScript heap and their total drives its collections too.
    const regular = st.isFile();
    let size = Math.min(regular ? st.size + 1 : 64 * 1024, maxBytes + 1);
    for (;;) {
      const buf = Buffer.allocUnsafe(size);
      const n = readSync(fd, buf, 0, size, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) return { ok: false, kind: "content", message: tooLarge(maxBytes) };
      chunks.push(n === size ? buf : buf.subarray(0, n));
      // A short read of a regular file is its end: no second read (and buffer) to learn it.
      if (regular && n < size) break;
      size = Math.min(64 * 1024, maxBytes + 1);
    }
    return decodeText(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
  } catch (err) {
    return { ok: false, kind: "io", message: errnoMessage(err) };
  } finally {
    closeSync(fd);
  }
}

export async function readStdinCapped(
  read: () => Promise<Buffer>,
  maxBytes: number,
): Promise<ReadOutcome> {
  let buf: Buffer;
  try {
    buf = await read();
  } catch (err) {
    return { ok: false, kind: "io", message: errnoMessage(err) };
  }
  if (buf.length > maxBytes) return { ok: false, kind: "content", message: tooLarge(maxBytes) };
  return decodeText(buf);
}

/** Reads all of the process's standard input, stopping once past `maxBytes`. */
export async function readProcessStdin(maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buf);
    total += buf.length;
    if (total > maxBytes) {
      process.stdin.destroy();
      break;
    }
  }
  return Buffer.concat(chunks, total);
}

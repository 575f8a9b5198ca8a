// The watched directory of a commit, read straight from the object store into memory: the
// commit's tree is walked down to the watched path and only what the pipeline reads is inflated,
// namely the resource files (.yaml, .yml, .json) outside hidden directories and node_modules, the
// files a recursive `mcpfleet validate` reads. Any other file is never inflated, a resource file
// over the size limit is refused from its header alone, and nothing the tree names can lead
// outside the repository: symbolic links and submodules are not followed, and a name git does
// not allow (`..`, one with a slash) refuses the revision.
import { McpfleetError } from "../../errors.js";
import {
  decodeText,
  hasResourceExtension,
  isSkippedEntry,
  tooLarge,
} from "../../resource-files.js";
import { ObjectTooLargeError, type ObjectStore } from "./objects.js";

export interface TreeEntry {
  mode: string;
  name: string;
  oid: string;
}

const MODE_TREE = "40000";
const MODE_LINK = "120000";
const MODE_SUBMODULE = "160000";

/** Parses a tree object: `<mode> <name>\0<20-byte id>` repeated. */
export function parseTree(data: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    const nul = data.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 21 > data.length) {
      throw new McpfleetError("ERR_GIT_FAILED", "corrupt git object store: malformed tree");
    }
    entries.push({
      mode: data.toString("latin1", i, space),
      name: data.toString("utf8", space + 1, nul),
      oid: data.toString("hex", nul + 1, nul + 21),
    });
    i = nul + 21;
  }
  return entries;
}

/** The root tree of a commit. */
export function commitTree(store: ObjectStore, commit: string): string {
  const text = store.read(commit, "commit").toString("utf8");
  const m = /^tree ([0-9a-f]{40})$/m.exec(text);
  if (m === null) throw new McpfleetError("ERR_GIT_FAILED", `commit ${commit} names no tree`);
  return m[1]!;
}

/** The tree at `path` ("" for the root) below `tree`, or undefined when there is none. */
export function subtree(store: ObjectStore, tree: string, path: string): string | undefined {
  let oid = tree;
  for (const part of path === "" ? [] : path.split("/")) {
    const entry = parseTree(store.read(oid, "tree")).find((e) => e.name === part);
    if (entry?.mode !== MODE_TREE) return undefined;
    oid = entry.oid;
  }
  return oid;
}

function unsafeName(name: string): boolean {
  return name === "" || name === "." || name === ".." || /[/\\\0]/.test(name);
}

export interface ReadTreeOptions {
  /** The tree's path in the repository: files are named below it. */
  path: string;
  /** Largest resource file read; a larger one refuses the revision without being inflated. */
  maxFileBytes: number;
}

/** A resource file of the watched path: its path in the repository and its text. */
export interface TreeFile {
  name: string;
  text: string;
}

export interface ReadTreeResult {
  /** The resource files, in the order a recursive `mcpfleet validate` reads them. */
  files: TreeFile[];
  /** One line for each entry left out that a reader could expect to be read. */
  warnings: string[];
}

function refuse(message: string): McpfleetError {
  return new McpfleetError("ERR_INVALID_RESOURCES", `${message}; the revision is refused`);
}

/**
 * The resource files of `tree`, read into memory: nothing is written to disk, and the walk keeps
 * a stack of its own, so a tree's depth costs nothing but its entries.
 */
export function readResourceTree(
  store: ObjectStore,
  tree: string,
  opts: ReadTreeOptions,
): ReadTreeResult {
  const result: ReadTreeResult = { files: [], warnings: [] };
  // Entries in name order, each directory entered where it sorts, as the directory walk does.
  const stack = [{ entries: sortedEntries(store, tree), next: 0, path: opts.path }];
  while (stack.length > 0) {
    const dir = stack[stack.length - 1]!;
    const entry = dir.entries[dir.next++];
    if (entry === undefined) {
      stack.pop();
      continue;
    }
    const at = dir.path === "" ? entry.name : `${dir.path}/${entry.name}`;
    if (unsafeName(entry.name)) {
      const where = dir.path === "" ? "the repository root" : dir.path;
      throw refuse(`${where}: tree entry ${JSON.stringify(entry.name)} is not a name git allows`);
    }
    if (isSkippedEntry(entry.name)) continue;
    if (entry.mode === MODE_TREE) {
      stack.push({ entries: sortedEntries(store, entry.oid), next: 0, path: at });
    } else if (entry.mode === MODE_LINK) {
      if (hasResourceExtension(entry.name)) {
        result.warnings.push(`${at}: symbolic link not followed (only files are read)`);
      }
    } else if (entry.mode === MODE_SUBMODULE) {
      result.warnings.push(`${at}: submodule not checked out`);
    } else if (hasResourceExtension(entry.name)) {
      result.files.push({ name: at, text: readText(store, entry.oid, at, opts.maxFileBytes) });
    }
  }
  return result;
}

/** A tree's entries sorted by name as the directory walk sorts them (git puts "a/" after "a.b"). */
function sortedEntries(store: ObjectStore, tree: string): TreeEntry[] {
  return parseTree(store.read(tree, "tree")).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
}

/** A resource file's text, judged as `mcpfleet validate` judges a file it reads. */
function readText(store: ObjectStore, oid: string, at: string, maxBytes: number): string {
  let blob: Buffer;
  try {
    blob = store.read(oid, "blob", maxBytes);
  } catch (err) {
    if (!(err instanceof ObjectTooLargeError)) throw err;
    throw refuse(`${at}: ${tooLarge(maxBytes)} (it is ${err.size} bytes and was not read)`);
  }
  const decoded = decodeText(blob);
  if (!decoded.ok) throw refuse(`${at}: ${decoded.message}`);
  return decoded.text;
}

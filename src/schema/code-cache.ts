// A CommonJS file loaded with a V8 code cache made after it ran. Node's compile cache
// (module.enableCompileCache) keeps a module's code as compiled when it loads, and V8 compiles
// a function only when it is first called: for the modules of generated/validators/, hundreds
// of kilobytes of validate functions each, that left every run compiling the same functions again. A cache made at
// the end of a run holds every function that run called, so the next run with the same kinds
// compiles none of them. Beside the cache, the names of what it covers (for the validators,
// the schemas whose validators were used): a run that uses something more writes the cache
// again, so that a first run over one kind does not leave the others compiled every time.
import { hash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import nodeModule, { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import { withCodeCacheFlags } from "../young-generation-growth.js";

/** Wraps the file as Node's CommonJS loader does; on one line, so that line numbers hold. */
const WRAPPER = ["(function (exports, require, module, __filename, __dirname) {", "\n})"] as const;

/**
 * Where the cache of `text`, the file at `path`, is kept: in Node's compile cache directory (so
 * NODE_COMPILE_CACHE moves it and NODE_DISABLE_COMPILE_CACHE turns it off), named after the
 * file, a hash of its text and this Node. V8 checks a cache only against the source's length
 * (and its own version): a cache of another text of the same length is taken, and its functions
 * then compiled from the wrong places of the new text. Size and time do not tell texts apart
 * either: an npm package's files all carry the same fixed time, and the generated validators
 * of two schema versions can have the same size.
 */
function cacheFileOf(path: string, text: string, dir: string): string {
  const key = `${process.version}-${process.arch}-${hash("sha1", text).slice(0, 20)}`;
  return join(dir, `mcpfleet-${basename(path, ".cjs")}-${key}.v8cache`);
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined; // first run, or a cache directory since cleaned
  }
}

/** Written beside and renamed, so that a run reading it at the same time sees all or nothing. */
function writeAtomically(file: string, data: string | Uint8Array): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, data);
  renameSync(temporary, file);
}

/** The names a cache covers, as its sidecar lists them; none when it is missing or unreadable. */
function readCovered(file: string): Set<string> {
  try {
    const names: unknown = JSON.parse(readFileSync(`${file}.json`, "utf8"));
    return new Set(Array.isArray(names) ? names.filter((n) => typeof n === "string") : []);
  } catch {
    return new Set();
  }
}

export interface CodeCachedModule {
  exports: unknown;
  /** Whether V8 took the cache found (false: none, or one it refused). */
  cacheAccepted: boolean;
  /** What the cache taken covers (see saveCache); empty when none was taken. */
  covered: ReadonlySet<string>;
  /** Writes the cache of everything compiled in the file so far, noting the names it covers. */
  saveCache: (covered: Iterable<string>) => void;
}

/**
 * The file's script, compiled with the cache when there is one. A function of its own: a
 * closure would keep the file's text and the cache's buffer (megabytes each) for the life of
 * the process, where V8 needs only the script's own copy of the source.
 */
function compile(path: string, cacheFile: string, text: string): Script {
  const cachedData = readCache(cacheFile);
  // Taken and made with the same V8 flags, whatever the run set since (see the module).
  return withCodeCacheFlags(
    () =>
      new Script(WRAPPER[0] + text + WRAPPER[1], {
        filename: path,
        ...(cachedData === undefined ? {} : { cachedData }),
      }),
  );
}

/** The CommonJS file at `path`, compiled with the cache kept for it in `dir` when there is one. */
export function loadWithCodeCache(path: string, dir: string): CodeCachedModule {
  const text = readFileSync(path, "utf8");
  const cacheFile = cacheFileOf(path, text, dir);
  const script = compile(path, cacheFile, text);
  const module = { exports: {} as unknown };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run(module.exports, createRequire(path), module, path, dirname(path));
  const cacheAccepted = script.cachedDataRejected === false;
  return {
    exports: module.exports,
    cacheAccepted,
    covered: cacheAccepted ? readCovered(cacheFile) : new Set(),
    saveCache: (covered) => {
      try {
        writeAtomically(
          cacheFile,
          withCodeCacheFlags(() => script.createCachedData()),
        );
        writeAtomically(`${cacheFile}.json`, JSON.stringify([...new Set(covered)].sort()));
      } catch {
        // A cache that cannot be written costs the next run time, nothing else.
      }
    },
  };
}

/** Files loaded by requireWithCodeCache, once each as require does, with who asked. */
interface Required {
  loaded: CodeCachedModule;
  users: (() => Iterable<string>)[];
}
const required = new Map<string, Required>();

/** Writes the caches that miss something this run used; one exit listener for every file. */
function saveCachesOnExit(): void {
  for (const { loaded, users } of required.values()) {
    const names = users.flatMap((u) => [...u()]);
    if (loaded.cacheAccepted && names.every((n) => loaded.covered.has(n))) continue;
    loaded.saveCache([...loaded.covered, ...names]);
  }
}

/**
 * The exports of the CommonJS file at `path`, compiled with the code cache of an earlier run when
 * there is one. The cache is written as the process exits, when it holds every function the run
 * called, if there was none (or V8 refused it) or if `used()` names something the cache does not
 * cover: the functions compiled from the old cache are kept in the new one. Making a cache takes
 * several milliseconds, so a run that adds nothing leaves it. Without a compile cache directory
 * the file is required as usual.
 */
export function requireWithCodeCache(
  path: string,
  used: () => Iterable<string> = () => [],
): unknown {
  const known = required.get(path);
  if (known !== undefined) {
    known.users.push(used);
    return known.loaded.exports;
  }
  const dir = nodeModule.getCompileCacheDir?.();
  if (dir === undefined) return createRequire(path)(path);
  const loaded = loadWithCodeCache(path, dir);
  if (required.size === 0) process.once("exit", saveCachesOnExit);
  required.set(path, { loaded, users: [used] });
  return loaded.exports;
}

// A CommonJS file loaded with a V8 code cache made after it ran. Node's compile cache
// (module.enableCompileCache) keeps a module's code as compiled when it loads, and V8 compiles
// a function only when it is first called: for generated/validators.cjs, three megabytes of
// validate functions, that left every run compiling the same functions again. A cache made at
// the end of a run holds every function that run called, so the next run with the same kinds
// compiles none of them.
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import nodeModule, { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";

/** Wraps the file as Node's CommonJS loader does; on one line, so that line numbers hold. */
const WRAPPER = ["(function (exports, require, module, __filename, __dirname) {", "\n})"] as const;

/**
 * Where the cache of `path` is kept: in Node's compile cache directory (so NODE_COMPILE_CACHE
 * moves it and NODE_DISABLE_COMPILE_CACHE turns it off), named after the file, its size and
 * time and this Node. V8 checks the cache against the source and its own version anyway and
 * rejects one that does not fit; the name only keeps installations from overwriting each other.
 */
function cacheFileOf(path: string, dir: string): string {
  const { size, mtimeMs } = statSync(path);
  const key = `${process.version}-${process.arch}-${size}-${Math.trunc(mtimeMs)}`;
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
function writeCache(file: string, script: Script): void {
  try {
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, file);
  } catch {
    // A cache that cannot be written costs the next run time, nothing else.
  }
}

export interface CodeCachedModule {
  exports: unknown;
  /** Whether V8 took the cache found (false: none, or one it refused). */
  cacheAccepted: boolean;
  /** Writes the cache of everything compiled in the file so far. */
  saveCache: () => void;
}

/** The CommonJS file at `path`, compiled with the cache kept for it in `dir` when there is one. */
export function loadWithCodeCache(path: string, dir: string): CodeCachedModule {
  const cacheFile = cacheFileOf(path, dir);
  const cachedData = readCache(cacheFile);
  const script = new Script(WRAPPER[0] + readFileSync(path, "utf8") + WRAPPER[1], {
    filename: path,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const module = { exports: {} as unknown };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run(module.exports, createRequire(path), module, path, dirname(path));
  return {
    exports: module.exports,
    cacheAccepted: cachedData !== undefined && script.cachedDataRejected !== true,
    saveCache: () => writeCache(cacheFile, script),
  };
}

/**
 * The exports of the CommonJS file at `path`, compiled with the code cache of an earlier run when
 * there is one; when there is none (or V8 refused it), this run's is written as the process
 * exits, when it holds every function the run called. Without a compile cache directory the
 * file is required as usual.
 */
export function requireWithCodeCache(path: string): unknown {
  const dir = nodeModule.getCompileCacheDir?.();
  if (dir === undefined) return createRequire(path)(path);
  const loaded = loadWithCodeCache(path, dir);
  if (!loaded.cacheAccepted) process.once("exit", loaded.saveCache);
  return loaded.exports;
}

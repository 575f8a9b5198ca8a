// What bin/mcpfleet.js does before the CLI loads, for `mcpfleet validate` only: a large input is
// validated in a process started again with glibc's malloc tuned, and the young generation is
// held small while the modules load (young-generation.ts). V8 compiles hot functions on helper
// threads; glibc gives each thread an arena of its own, which keeps what the compiler freed, and
// raises the point above which it returns freed memory to the system after the first large
// block is freed (a validator module's text). On 10,000 resources that was about 16 MB of the
// peak, for the same CPU time in one arena with the default threshold fixed. glibc reads these variables only as a process starts, so the process replaces itself (execve: the
// same process, its memory not doubled) once it knows the input is large; a small input, where
// a second start would cost more time than the memory is worth, runs as it is. Not in the single
// executable, whose start does not go through bin/.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { holdYoungGeneration } from "../infra/young-generation.js";

/** Input above which a run is started again: about 2,500 resources, 0.2 s or more. */
export const LARGE_INPUT_BYTES = 2 * 1024 * 1024;

/** Directory entries looked at before giving up on an estimate (a home directory given). */
const MAX_ENTRIES = 20_000;

/** What collectInputs reads in a directory: YAML and JSON, no hidden entries or node_modules. */
const INPUT_FILE = /\.(ya?ml|json)$/i;

function sizeOf(path: string): { size: number; directory: boolean } | undefined {
  try {
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat === undefined ? undefined : { size: stat.size, directory: stat.isDirectory() };
  } catch {
    return undefined; // unreadable: validate reports it
  }
}

function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir).filter((e) => !e.startsWith(".") && e !== "node_modules");
  } catch {
    return [];
  }
}

/**
 * Whether the paths among validate's arguments hold `limit` bytes of input or more: an estimate
 * (an option's value is taken for a path too, and counts if it names one), stopped as soon as
 * it is reached. Standard input, whose size is not known beforehand, counts for nothing.
 */
export function inputReaches(args: readonly string[], limit: number): boolean {
  let total = 0;
  let visited = 0;
  const pending = args.filter((a) => !a.startsWith("-")).map((path) => ({ path, named: true }));
  while (pending.length > 0 && visited++ < MAX_ENTRIES) {
    const { path, named } = pending.pop()!;
    const found = sizeOf(path);
    if (found === undefined) continue;
    if (found.directory) {
      for (const e of entriesOf(path)) pending.push({ path: join(path, e), named: false });
    } else if (named || INPUT_FILE.test(path)) {
      total += found.size;
      if (total >= limit) return true;
    }
  }
  return false;
}

/**
 * glibc's malloc for a large run: one arena, and its default trim threshold (128 KiB) fixed, so
 * that freed memory goes back to the system; blocks of 32 KiB and more (the optimizing
 * compiler's working memory, among others) each mapped on their own and unmapped when freed.
 * Without the last, what the compiler held when the run peaked varied from run to run: peaks of
 * 94 to 114 MB on 10,000 resources, 93 to 95 MB with it, for about 5% more time. Ignored by
 * other C libraries.
 */
export const LARGE_RUN_MALLOC = {
  MALLOC_ARENA_MAX: "1",
  MALLOC_TRIM_THRESHOLD_: "131072",
  MALLOC_MMAP_THRESHOLD_: "32768",
};

/** Whether this process can be started again with them (Linux, Node >= 22.15, not set yet). */
function canRestart(): boolean {
  return (
    process.platform === "linux" &&
    typeof process.execve === "function" &&
    Object.keys(LARGE_RUN_MALLOC).every((name) => process.env[name] === undefined)
  );
}

/**
 * For `validate` (argv without node and script): starts the process again for a large input,
 * else holds the young generation small before the modules load. Other commands: nothing.
 */
export function prepareValidate(argv: readonly string[]): void {
  if (argv[0] !== "validate") return;
  if (canRestart() && inputReaches(argv.slice(1), LARGE_INPUT_BYTES)) {
    const args = [process.execPath, ...process.execArgv, ...process.argv.slice(1)];
    try {
      process.execve!(process.execPath, args, { ...process.env, ...LARGE_RUN_MALLOC });
    } catch {
      // Not replaced (a system that refuses it): the run goes on here, with more memory.
    }
  }
  holdYoungGeneration();
}

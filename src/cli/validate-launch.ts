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
import { holdYoungGeneration } from "../infra/young-generation.js";
import { LARGE_INPUT_BYTES, inputReaches } from "./input-size.js";

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

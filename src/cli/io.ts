// Where a command writes its lines: standard output and standard error by default, and a pair of
// collecting functions in tests.

/** A command's output, one line per call (the newline is added by the writer). */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Lines to the process's standard output and standard error. */
export const stdio: Io = {
  out: (l) => void process.stdout.write(`${l}\n`),
  err: (l) => void process.stderr.write(`${l}\n`),
};

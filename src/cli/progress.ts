// Progress of long work (synth of many files, apply), on standard error and only when it is a
// terminal: pipes, files and CI logs get the final summary line and nothing else.

export interface Progress {
  /** Replaces the progress line (throttled; nothing happens off a terminal). */
  update(text: string): void;
  /** Clears the progress line, so that the next output starts on a clean line. */
  done(): void;
}

const NO_PROGRESS: Progress = { update: () => undefined, done: () => undefined };

/** A progress line on `stream` when it is a terminal; a no-op otherwise. */
export function progressLine(
  stream: NodeJS.WriteStream = process.stderr,
  { intervalMs = 100 }: { intervalMs?: number } = {},
): Progress {
  if (stream.isTTY !== true) return NO_PROGRESS;
  let shown = false;
  let last = 0;
  return {
    update(text) {
      const now = Date.now();
      if (shown && now - last < intervalMs) return;
      last = now;
      shown = true;
      // A pseudo-terminal with no size reports 0 columns: assume 80.
      const width = Math.max(20, (stream.columns || 80) - 1);
      stream.write(`\r\u001b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    },
    done() {
      if (shown) stream.write("\r\u001b[2K");
      shown = false;
    },
  };
}

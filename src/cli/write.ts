// Writing a command's output and waiting until it is flushed. A reader that goes away before the
// end (`| head`, EPIPE) takes nothing from the command's exit code. No imports: the validate
// server's client uses it before anything else of the CLI loads.

/**
 * A reader that goes away before the output ends (`mcpfleet validate . | head`) is not an error
 * of ours: the rest of the output is dropped and the command's exit code stands. Any other
 * error of standard output or standard error still ends the process.
 */
export function dropOutputReaderGone(
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
    });
  }
}

export function writeText(stream: NodeJS.WriteStream, text: string): Promise<void> {
  if (text === "") return Promise.resolve();
  return new Promise((resolve, reject) =>
    stream.write(text, (err) =>
      err && (err as NodeJS.ErrnoException).code !== "EPIPE" ? reject(err) : resolve(),
    ),
  );
}

// Writing a command's output and waiting until it is flushed. A reader that goes away before the
// end (`| head`, EPIPE; see main.ts) takes nothing from the command's exit code.

export function writeText(stream: NodeJS.WriteStream, text: string): Promise<void> {
  if (text === "") return Promise.resolve();
  return new Promise((resolve, reject) =>
    stream.write(text, (err) =>
      err && (err as NodeJS.ErrnoException).code !== "EPIPE" ? reject(err) : resolve(),
    ),
  );
}

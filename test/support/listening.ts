// The URL a server started as a child process listens on, read from its JSON log on standard
// output (`"url":"http://..."`, as the registry server and the benchmarks' bare server log it).
import type { ChildProcess } from "node:child_process";

const URL_IN_LOG = /"url":"(http:[^"]+)"/;

/** Resolves with the first URL the child logs; rejects if it exits before it logs one. */
export function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = URL_IN_LOG.exec(out);
      if (m?.[1] !== undefined) resolve(m[1]);
    });
    child.once("exit", (code) =>
      reject(new Error(`the server exited with ${String(code)} before it listened`)),
    );
  });
}

// Files spread over a few worker threads of this process, when asked for (`threads`). Each
// worker parses and validates whole files at the schema and CEL levels (the YAML parse is most
// of the cost); the reference level, which needs every resource, stays in the calling thread.
// Not the default: each worker pays its own start (modules, compiled validators, a cold JIT),
// and on the two-core development machine, shared with other work, two workers took about 1.45
// times the CPU time of one thread and were no faster (docs/validate.md).
import { Worker } from "node:worker_threads";
import type { FileVerdict } from "./file-verdict.js";
import type { PoolReply, PoolTask } from "./pool-protocol.js";

/** Threads to use: the number asked for, at most one per file; 1 means no pool. */
export function poolSize(files: number, requested: number | undefined): number {
  if (requested === undefined || requested < 2) return 1;
  return Math.max(1, Math.min(requested, files));
}

function startWorker(): Worker {
  // From the TypeScript sources (tests, benchmarks) the worker needs the same loader.
  const here = import.meta.url;
  if (here.endsWith(".ts")) {
    return new Worker(new URL("./worker.ts", here), { execArgv: ["--import", "tsx"] });
  }
  return new Worker(new URL("./worker.js", here));
}

/**
 * Runs the tasks on `threads` workers, each taking the next file when it is done with one;
 * results come back in task order. Rejects when a worker fails (the caller then validates in
 * its own thread): that error never escapes the run, so it carries no catalogue code.
 */
export async function runPool(tasks: readonly PoolTask[], threads: number): Promise<FileVerdict[]> {
  const out = new Array<FileVerdict>(tasks.length);
  const workers: Worker[] = [];
  let next = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      let pending = tasks.length;
      if (pending === 0) resolve();
      const feed = (worker: Worker): void => {
        const i = next++;
        const task = tasks[i];
        if (task === undefined) return;
        worker.once("message", (reply: PoolReply) => {
          if (!reply.ok) {
            reject(new Error(reply.error));
            return;
          }
          out[i] = reply.done;
          if (--pending === 0) resolve();
          else feed(worker);
        });
        worker.postMessage(task);
      };
      for (let t = 0; t < threads; t++) {
        const worker = startWorker();
        workers.push(worker);
        worker.on("error", reject);
        worker.on("exit", (code) => {
          if (pending > 0) reject(new Error(`validation worker exited with code ${code}`));
        });
        feed(worker);
      }
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return out;
}

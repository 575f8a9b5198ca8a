// A worker thread of the validation pool (see pool.ts): validates the files it is sent at the
// schema and CEL levels and sends back their results and what the reference level needs.
import { parentPort } from "node:worker_threads";
import type { PoolTask } from "./pool-protocol.js";
import { validatePooledFile } from "./pooled.js";

const port = parentPort;
if (port !== null) {
  port.on("message", (task: PoolTask) => {
    validatePooledFile(task).then(
      (done) => port.postMessage({ ok: true, done }),
      (err: unknown) => port.postMessage({ ok: false, error: String(err) }),
    );
  });
}

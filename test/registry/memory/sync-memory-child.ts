// The registry server alone in a process started with --expose-gc, so that the test measures
// only the server's memory. argv[2]: the configuration file. Sends the server's URL, then answers
// each "measure" message with process.memoryUsage() taken after full collections.
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { pino } from "pino";
import { parseConfig } from "../../../src/registry/config/load.js";
import { RegistryServer } from "../../../src/registry/server.js";

const gc = (globalThis as { gc?: (options?: { type: string; flavor: string }) => void }).gc;
if (gc === undefined) throw new Error("start this script with --expose-gc");
const path = process.argv[2] ?? "";
const server = await RegistryServer.start(
  { ...parseConfig(readFileSync(path, "utf8"), path), path, baseDir: dirname(path) },
  { port: 0, log: pino({ level: "silent" }), requestTimeoutMs: 0 },
);

process.on("message", (m) => {
  if (m === "measure") {
    void (async () => {
      // Several rounds, yielding between them: finalizers and weak references let go of what
      // they hold only on the next cycle. The last one as under memory pressure, which also
      // hands V8's pooled free pages back, so that RSS shows what the process could return.
      for (let i = 0; i < 4; i++) {
        gc(i < 3 ? undefined : { type: "major", flavor: "last-resort" });
        await new Promise((r) => setImmediate(r));
      }
      process.send?.(process.memoryUsage());
    })();
  } else if (m === "stop") {
    void server.close().then(() => process.exit(0));
  }
});
process.send?.(server.url);

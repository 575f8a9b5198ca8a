// `mcpfleet registry serve --config FILE [--address HOST] [--port N]`: runs the registry
// server until SIGTERM or SIGINT, then shuts down gracefully.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Logger } from "pino";
import { didYouMean } from "../suggest.js";
import { parseCommandArgs, usageError } from "./args.js";
import { parseDuration } from "../duration.js";
import { holdYoungGeneration, youngGenerationCap } from "../infra/young-generation.js";
import { nodeFlagGiven } from "../young-generation-growth.js";

const USAGE = `Usage: mcpfleet registry serve --config FILE [options]
       mcpfleet registry publish FILE | status NAME[@VERSION] --set STATUS | list [options]
                               a registry's API from the command line (--url, --token-file;
                               mcpfleet help registry publish|status|list for their options)

Options:
  --config FILE            registry server configuration (YAML)
  --address HOST           address to listen on (default 127.0.0.1; 0.0.0.0 for all)
  --port N                 port to listen on (default 8080; 0 picks a free one)
  --body-limit BYTES       largest request body (default 1048576)
  --request-timeout DUR    time limit of one request, Go-style duration (default 30s; 0 none)
  --first-sync-deadline DUR
                           /readiness waits for the first sync of every source at most this
                           long after start (default 2m)
  --check                  validate the configuration as \`mcpfleet validate --registry-config\`
                           does (unknown fields warned about, as serve ignores them), check
                           that file sources' files exist, and exit (1 on an error)
  -h, --help               show this help`;

export async function main(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    console.log(USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub === "publish" || sub === "status" || sub === "list") {
    return (await import("./registry-client.js")).runClient(sub, rest);
  }
  if (sub !== "serve") {
    throw usageError(
      "registry",
      `unknown command "${sub}"${didYouMean(sub, ["serve", "publish", "status", "list"])} (registry serve, publish, status, list)`,
    );
  }
  const { values } = parseCommandArgs("registry", {
    args: rest,
    options: {
      config: { type: "string" },
      address: { type: "string" },
      port: { type: "string" },
      "body-limit": { type: "string" },
      "request-timeout": { type: "string" },
      "first-sync-deadline": { type: "string" },
      check: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  if (values.config === undefined || values.config === "") {
    throw usageError("registry", "--config FILE is required");
  }
  const port = values.port === undefined ? 8080 : Number(values.port);
  if (values.port === "" || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw usageError("registry", `--port must be 0 to 65535, not "${values.port}"`);
  }
  const bodyLimit = values["body-limit"] === undefined ? undefined : Number(values["body-limit"]);
  if (bodyLimit !== undefined && (!Number.isInteger(bodyLimit) || bodyLimit < 1)) {
    throw usageError("registry", "--body-limit must be a positive number of bytes");
  }
  const duration = (flag: "request-timeout" | "first-sync-deadline"): number | undefined => {
    const text = values[flag];
    if (text === undefined) return undefined;
    try {
      return parseDuration(text);
    } catch (err) {
      throw usageError("registry", `--${flag}: ${(err as Error).message}`);
    }
  };
  const requestTimeoutMs = duration("request-timeout");
  const firstSyncDeadlineMs = duration("first-sync-deadline");
  if (values.check === true) return check(values.config);
  sizeHeapForServing();
  // Loaded once that is set, so that loading them does not grow it either.
  const { loadConfigFile } = await import("../registry/config/load.js");
  const { RegistryServer } = await import("../registry/server.js");
  const loaded = loadConfigFile(values.config);
  const server = await RegistryServer.start(loaded, {
    ...(values.address !== undefined ? { address: values.address } : {}),
    port,
    ...(bodyLimit !== undefined ? { bodyLimit } : {}),
    ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
    ...(firstSyncDeadlineMs !== undefined ? { firstSyncDeadlineMs } : {}),
  });
  void server.scheduler.whenAllAttempted().then(() => {
    setTimeout(() => {
      compactHeapOnce();
      capYoungGenerationWhileServing();
    }, COMPACT_AFTER_SYNC_MS).unref();
  });
  await untilStopped(server);
  return 0;
}

/** Serves until SIGTERM or SIGINT, then shuts the server down gracefully. */
function untilStopped(server: { log: Logger; close(): Promise<void> }): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      server.log.info({ signal }, "shutting down");
      server.close().then(resolve, (err: unknown) => {
        server.log.error({ err }, "shutdown failed");
        resolve();
      });
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
}

/**
 * V8's heap sized for a server whose live data is small (the catalog is in the store, answers
 * are cached as bytes) and whose garbage is mostly each request's rows and text:
 * - the young generation stays at its initial size while the modules load and the first syncs
 *   run (V8 would grow it to 32 MB under their burst of allocation and keep it), then may grow
 *   to SERVING_YOUNG_GENERATION_MB and no further: under load, a young generation of 1 MB
 *   scavenged 150 times a second and cost a version lookup about a sixth more CPU;
 * - the old generation is collected when it has grown by a fifth over what the last collection
 *   kept, not by V8's default of up to four times (objects that outlive a few scavenges under
 *   concurrent requests are garbage soon after): at 10,000 entries under the benchmark's
 *   request mix, about 35 MB less at peak for more frequent collections of a heap of 30 MB.
 * A flag of the same family given to Node is left to decide (docs/registry.md, "Footprint").
 */
function sizeHeapForServing(): void {
  holdYoungGeneration();
  if (!nodeFlagGiven("heap-growing")) setFlagsFromString("--heap-growing-percent=20");
}

/** The young generation's cap while serving (both semi-spaces, MB). */
const SERVING_YOUNG_GENERATION_MB = 8;

/** Lets the young generation grow to its serving cap, checked every second. */
function capYoungGenerationWhileServing(): void {
  const cap = youngGenerationCap(SERVING_YOUNG_GENERATION_MB);
  setInterval(cap, 1000).unref();
}

/**
 * How long after the first syncs the heap is compacted: the compaction takes some 50 ms, and
 * the server turns ready as the syncs end, so its first readiness answers come before it.
 */
const COMPACT_AFTER_SYNC_MS = 1000;

/**
 * One full, compacting garbage collection soon after the first syncs: what they read and
 * staged is garbage by then, and V8 would otherwise keep those pages until its memory reducer
 * runs some 20 s later, so that a new pod's memory is at its resting level within a second of
 * turning ready (at 10,000 entries, about 11 MB less than one ordinary full collection leaves,
 * 25 MB less than none). The collector is taken from a context of its own, so `gc` is not
 * exposed to the server's code.
 */
function compactHeapOnce(): void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as (options: object) => void;
  setFlagsFromString("--no-expose-gc");
  gc({ type: "major", flavor: "last-resort" });
}

/**
 * `--check`: the diagnostics of `mcpfleet validate --registry-config` on the file (positions,
 * each undefined source named), then what only the server can see: whether file sources exist.
 */
async function check(path: string): Promise<number> {
  // Loaded here: serving never validates resource files, so the server does not hold this code.
  const { DEFAULT_OPTIONS, exitCode, formatReport, validatePaths } =
    await import("../validate/index.js");
  const report = await validatePaths([path], {
    ...DEFAULT_OPTIONS,
    registryConfig: true,
    unknownFields: "warn",
  });
  const text = formatReport(report, "text", { summary: false, color: false });
  if (text !== "") process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  const code = exitCode(report);
  if (code !== 0) return code;
  const { loadConfigFile, missingFiles } = await import("../registry/config/load.js");
  const missing = missingFiles(loadConfigFile(path), path);
  for (const m of missing) console.log(m);
  if (missing.length > 0) return 1;
  console.log(`${path}: valid`);
  return 0;
}

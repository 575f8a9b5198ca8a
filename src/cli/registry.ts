// `mcpfleet registry serve --config FILE [--address HOST] [--port N]`: runs the registry
// server until SIGTERM or SIGINT, then shuts down gracefully.
import { parseArgs } from "node:util";
import { McpfleetError } from "../errors.js";
import { parseDuration } from "../registry/config/duration.js";
import { loadConfigFile } from "../registry/config/load.js";
import { RegistryServer } from "../registry/server.js";

const USAGE = `Usage: mcpfleet registry serve --config FILE [options]

Options:
  --config FILE            registry server configuration (YAML)
  --address HOST           address to listen on (default 127.0.0.1; 0.0.0.0 for all)
  --port N                 port to listen on (default 8080; 0 picks a free one)
  --body-limit BYTES       largest request body (default 1048576)
  --request-timeout DUR    time limit of one request, Go-style duration (default 30s; 0 none)
  --check                  validate the configuration and exit`;

export async function main(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    console.log(USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== "serve")
    throw new McpfleetError("ERR_USAGE", `unknown registry command "${sub}"\n\n${USAGE}`);
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        config: { type: "string" },
        address: { type: "string" },
        port: { type: "string" },
        "body-limit": { type: "string" },
        "request-timeout": { type: "string" },
        check: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    throw new McpfleetError("ERR_USAGE", `${(err as Error).message}\n\n${USAGE}`);
  }
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  if (values.config === undefined)
    throw new McpfleetError("ERR_USAGE", `--config is required\n\n${USAGE}`);
  const port = values.port === undefined ? 8080 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new McpfleetError("ERR_USAGE", `--port must be 0 to 65535, got "${values.port}"`);
  }
  const bodyLimit = values["body-limit"] === undefined ? undefined : Number(values["body-limit"]);
  if (bodyLimit !== undefined && (!Number.isInteger(bodyLimit) || bodyLimit < 1)) {
    throw new McpfleetError("ERR_USAGE", `--body-limit must be a positive number of bytes`);
  }
  const loaded = loadConfigFile(values.config);
  if (values.check === true) {
    for (const w of loaded.warnings) console.error(`warning: ${w}`);
    console.log(`${values.config}: valid`);
    return 0;
  }
  const server = await RegistryServer.start(loaded, {
    ...(values.address !== undefined ? { address: values.address } : {}),
    port,
    ...(bodyLimit !== undefined ? { bodyLimit } : {}),
    ...(values["request-timeout"] !== undefined
      ? { requestTimeoutMs: parseDuration(values["request-timeout"]) }
      : {}),
  });
  await new Promise<void>((resolve) => {
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
  return 0;
}

import { type ParseArgsConfig, parseArgs } from "node:util";
import { McpfleetError } from "../errors.js";

/**
 * Node's argument parser, with its errors turned into one usage error form for every command:
 * `COMMAND: what is wrong; see mcpfleet COMMAND --help` (exit code 2).
 */
export function parseCommandArgs<T extends ParseArgsConfig>(
  command: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    const reason = (err as Error).message.split(". ")[0] ?? "bad arguments";
    throw new McpfleetError("ERR_USAGE", `${command}: ${reason}; see mcpfleet ${command} --help`);
  }
}

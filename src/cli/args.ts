import { type ParseArgsConfig, parseArgs } from "node:util";
import { McpfleetError } from "../errors.js";
import { didYouMean } from "../suggest.js";

/** The one form of a usage error in every command (exit code 2). */
export function usageError(command: string, reason: string): McpfleetError {
  return new McpfleetError("ERR_USAGE", `${command}: ${reason}; see mcpfleet help ${command}`);
}

/**
 * `-o=json` as kubectl and most CLIs accept it: Node's parser would take "=json" as the value of
 * a short option, so the `=` is split off for short options that take a value.
 */
function splitShortEquals(args: readonly string[], config: ParseArgsConfig): string[] {
  const valued = new Set(
    Object.values(config.options ?? {})
      .filter((o) => o.type === "string" && o.short !== undefined)
      .map((o) => o.short),
  );
  const out: string[] = [];
  for (const [index, arg] of args.entries()) {
    if (arg === "--") {
      out.push(...args.slice(index));
      break;
    }
    const match = /^-([A-Za-z])=(.*)$/s.exec(arg);
    if (match !== null && valued.has(match[1])) out.push(`-${match[1]}`, match[2]!);
    else out.push(arg);
  }
  return out;
}

/** Node's parser message for an unknown option, with the closest known option suggested. */
function reasonOf(err: Error, config: ParseArgsConfig): string {
  const first = err.message.split(". ")[0] ?? "bad arguments";
  const unknown = /^Unknown option '(-{1,2})([^']*)'/.exec(first);
  if (unknown !== null) {
    const names = Object.keys(config.options ?? {});
    const typed = unknown[2]!;
    return `unknown option ${unknown[1]}${typed}${unknown[1] === "--" ? didYouMean(typed, names).replace(/"(.*)"/, '"--$1"') : ""}`;
  }
  const missing = /^Option '([^']*)' argument missing/.exec(first);
  if (missing !== null) return `${missing[1]!.replace(/ <value>$/, "")} needs a value`;
  const positional = /^Unexpected argument '([^']*)'/.exec(first);
  if (positional !== null) return `unexpected argument ${positional[1]}`;
  return first.charAt(0).toLowerCase() + first.slice(1);
}

/**
 * Node's argument parser, with its errors turned into one usage error form for every command:
 * `COMMAND: what is wrong; see mcpfleet help COMMAND` (exit code 2).
 */
export function parseCommandArgs<T extends ParseArgsConfig>(
  command: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  const args = config.args ?? process.argv.slice(2);
  try {
    const withArgs: T = { ...config, args: splitShortEquals(args, config) };
    return parseArgs(withArgs);
  } catch (err) {
    throw usageError(command, reasonOf(err as Error, config));
  }
}

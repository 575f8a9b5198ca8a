// How much resource YAML a validate run's arguments name, estimated before anything is loaded:
// a large input is validated in a process of its own, started again with other memory settings
// (validate-launch.ts), never on the validate server (validate-client.ts). Node's file system
// module only.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Input above which a run is started again: about 2,500 resources, 0.2 s or more. */
export const LARGE_INPUT_BYTES = 2 * 1024 * 1024;

/** Directory entries looked at before giving up on an estimate (a home directory given). */
const MAX_ENTRIES = 20_000;

/** What collectInputs reads in a directory: YAML and JSON, no hidden entries or node_modules. */
const INPUT_FILE = /\.(ya?ml|json)$/i;

function sizeOf(path: string): { size: number; directory: boolean } | undefined {
  try {
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat === undefined ? undefined : { size: stat.size, directory: stat.isDirectory() };
  } catch {
    return undefined; // unreadable: validate reports it
  }
}

function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir).filter((e) => !e.startsWith(".") && e !== "node_modules");
  } catch {
    return [];
  }
}

/**
 * Whether the paths among validate's arguments hold `limit` bytes of input or more: an estimate
 * (an option's value is taken for a path too, and counts if it names one), stopped as soon as
 * it is reached. Standard input, whose size is not known beforehand, counts for nothing.
 */
export function inputReaches(args: readonly string[], limit: number): boolean {
  let total = 0;
  let visited = 0;
  const pending = args.filter((a) => !a.startsWith("-")).map((path) => ({ path, named: true }));
  while (pending.length > 0 && visited++ < MAX_ENTRIES) {
    const { path, named } = pending.pop()!;
    const found = sizeOf(path);
    if (found === undefined) continue;
    if (found.directory) {
      for (const e of entriesOf(path)) pending.push({ path: join(path, e), named: false });
    } else if (named || INPUT_FILE.test(path)) {
      total += found.size;
      if (total >= limit) return true;
    }
  }
  return false;
}

// Go-style durations ("300ms", "1.5h", "2h45m"), the one syntax of every duration in the
// project: command-line flags (controller and registry server) and configuration fields. The
// language is the schemas' Duration pattern (schemas/common/types.yaml); flags also take "0".
import { McpfleetError } from "./errors.js";

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/y;

/** Milliseconds of a Go-style duration; throws ERR_INVALID_PARAMETER on anything else. */
export function parseDuration(text: string): number {
  if (text === "0") return 0;
  let pos = 0;
  let total = 0;
  let parts = 0;
  while (pos < text.length) {
    PART.lastIndex = pos;
    const m = PART.exec(text);
    if (m === null) break;
    total += Number(m[1]) * (UNIT_MS[m[2] as string] ?? 0);
    pos = PART.lastIndex;
    parts++;
  }
  if (parts === 0 || pos !== text.length) {
    throw new McpfleetError(
      "ERR_INVALID_PARAMETER",
      `"${text}" is not a duration (use a number and a unit, e.g. 30s, 5m, 1h30m)`,
    );
  }
  return total;
}

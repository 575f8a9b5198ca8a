// The controller's one logger: pino, created where the controller is composed and handed to its
// components (or a child of it). JSON lines on stderr for a running controller; for people and
// --once, the same records as plain `level message key=value` lines.
import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger };

/** A logger that writes nothing (components built without one, tests). */
export const silentLogger: Logger = pino({ level: "silent" });

/** JSON lines on stderr, as the registry server logs. */
export function jsonLogger(): Logger {
  return pino({ name: "mcpfleet-controller" }, pino.destination(2));
}

/** One record as a `level message key=value` line: strings as they are, other values as JSON. */
export function textLine(record: Record<string, unknown>): string {
  const { level, msg, ...fields } = record;
  const shown = Object.entries(fields)
    .filter(([, val]) => val !== undefined)
    .map(([k, val]) => `${k}=${typeof val === "string" ? val : JSON.stringify(val)}`)
    .join(" ");
  return `${String(level)} ${String(msg)}${shown !== "" ? ` ${shown}` : ""}`;
}

/** Plain lines through `write`, one per record (no time, pid or host: a person reads them). */
export function textLogger(write: (line: string) => void): Logger {
  const stream: DestinationStream = {
    write: (chunk: string) => write(textLine(JSON.parse(chunk) as Record<string, unknown>)),
  };
  return pino(
    { base: undefined, timestamp: false, formatters: { level: (label) => ({ level: label }) } },
    stream,
  );
}

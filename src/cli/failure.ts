// How a command that failed tells the user: one line naming the thing and what to do, exit 1 for
// a failure and 2 for a usage error, in every command. A stack trace only with MCPFLEET_DEBUG=1.
import { isMcpfleetError } from "../errors.js";

/** True when MCPFLEET_DEBUG asks for stack traces and retry details. */
export function debugEnabled(): boolean {
  const v = process.env.MCPFLEET_DEBUG;
  return v !== undefined && v !== "" && v !== "0";
}

/** What a system error means for the person at the terminal, keyed by its errno code. */
const SYSTEM_HINTS: Record<string, (e: NodeJS.ErrnoException) => string> = {
  EADDRINUSE: (e) =>
    `${address(e)} is already in use by another process; stop it or choose another port (--port)`,
  EADDRNOTAVAIL: (e) => `${address(e)} is not an address of this machine; check --address`,
  EACCES: (e) =>
    e.syscall === "listen" || e.syscall === "bind"
      ? `${address(e)}: permission denied (ports below 1024 need privileges; choose another port)`
      : `${e.path ?? "file"}: permission denied`,
  EPERM: (e) => `${e.path ?? "operation"}: not permitted`,
  ENOENT: (e) => `${e.path ?? "file"}: no such file or directory`,
  EISDIR: (e) => `${e.path ?? "path"}: is a directory, not a file`,
  ENOTDIR: (e) => `${e.path ?? "path"}: a part of the path is not a directory`,
  ECONNREFUSED: (e) => `${address(e)} refused the connection; is the server running?`,
  ENOSPC: (e) => `${e.path ?? "disk"}: no space left on the device`,
};

function address(e: NodeJS.ErrnoException): string {
  const { address: host, port } = e as NodeJS.ErrnoException & { address?: string; port?: number };
  if (host === undefined) return "the address";
  return port === undefined ? host : `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** The one line printed for `err`, and the exit code. */
export function describeFailure(err: unknown): { line: string; exitCode: number } {
  if (isMcpfleetError(err)) {
    return { line: `mcpfleet: ${err.message}`, exitCode: err.code === "ERR_USAGE" ? 2 : 1 };
  }
  const e = err as NodeJS.ErrnoException;
  const hint = typeof e?.code === "string" ? SYSTEM_HINTS[e.code] : undefined;
  if (hint !== undefined) return { line: `mcpfleet: ${hint(e)}`, exitCode: 1 };
  const message = err instanceof Error ? err.message : String(err);
  const first = message.split("\n")[0] ?? message;
  return {
    line: `mcpfleet: ${first} (unexpected error; MCPFLEET_DEBUG=1 shows where)`,
    exitCode: 1,
  };
}

/** Prints the failure's line (and its stack with MCPFLEET_DEBUG=1); returns the exit code. */
export function reportFailure(err: unknown): number {
  const { line, exitCode } = describeFailure(err);
  process.stderr.write(`${line}\n`);
  if (debugEnabled() && err instanceof Error && err.stack !== undefined) {
    process.stderr.write(`${err.stack}\n`);
  }
  return exitCode;
}

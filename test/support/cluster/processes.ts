// Child processes of a test control plane: started with their output kept in a log file (read
// back when one fails to start), stopped with SIGTERM then SIGKILL, and a watchdog that kills them
// and deletes their data when the process that started them is gone, even after a SIGKILL.
import { type ChildProcess, spawn } from "node:child_process";
import { openSync, readFileSync } from "node:fs";

export interface Proc {
  name: string;
  child: ChildProcess;
  log: string;
  exited: Promise<number | null>;
}

export function startProcess(name: string, bin: string, args: string[], log: string): Proc {
  const out = openSync(log, "a");
  const child = spawn(bin, args, { stdio: ["ignore", out, out] });
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? (signal === null ? null : -1)));
    child.once("error", () => resolve(-1));
  });
  return { name, child, log, exited };
}

/** The last lines of a process's log, for error messages. */
export function logTail(proc: Proc, lines = 15): string {
  try {
    return readFileSync(proc.log, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

export async function stopProcess(proc: Proc, graceMs = 10_000): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill("SIGTERM");
  const timer = setTimeout(() => proc.child.kill("SIGKILL"), graceMs);
  await proc.exited;
  clearTimeout(timer);
}

/**
 * A detached shell that waits for `parent` to exit, then kills `pids` and removes `dir`. Normal
 * shutdown stops the processes itself and then the watchdog; this only matters when the test
 * runner dies without running its teardown.
 */
export function startWatchdog(parent: number, pids: number[], dir: string): ChildProcess {
  const list = pids.join(" ");
  const script =
    `while kill -0 ${parent} 2>/dev/null; do sleep 1; done; ` +
    `kill -TERM ${list} 2>/dev/null; sleep 3; kill -KILL ${list} 2>/dev/null; rm -rf '${dir}'`;
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
  child.unref();
  return child;
}

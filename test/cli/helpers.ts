// The real command line as a user runs it: a process, its exit code, its two streams.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "../../src/project.js";

export const root = projectRoot();
export const examples = join(root, "examples");

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `mcpfleet ARGS` in `cwd` (asynchronously, so servers in the test process keep serving). */
export function runCli(
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        join(root, "node_modules/tsx/dist/loader.mjs"),
        join(root, "src/cli/main.ts"),
        ...args,
      ],
      {
        cwd: opts.cwd ?? root,
        env: { ...process.env, NO_COLOR: "1", MCPFLEET_DEBUG: "", ...opts.env },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", reject);
    child.on("close", (status) =>
      resolve({
        status,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
    child.stdin.end(opts.input ?? "");
  });
}

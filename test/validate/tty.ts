// Runs a command under a pseudo-terminal, as a person at a terminal runs it: util-linux's
// `script`, else python3's pty module. Standard input, output and error are the terminal
// (the output read back has the terminal's \r\n line ends) unless the command redirects them.
import { spawnSync } from "node:child_process";

export interface TtyRun {
  code: number | null;
  /** What the terminal showed, line ends normalised to \n. */
  output: string;
}

export type TtyRunner = (
  argv: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; stdoutTo?: string },
) => TtyRun;

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function works(cmd: string, args: string[]): boolean {
  const r = spawnSync(cmd, args, { stdio: "ignore" });
  return r.error === undefined && r.status === 0;
}

/** A runner, or a one-line reason why there is none here. */
export function ttyRunner(): TtyRunner | string {
  const viaScript = works("script", ["-qec", "true", "/dev/null"]);
  const viaPython = !viaScript && works("python3", ["-c", "import pty"]);
  if (!viaScript && !viaPython) return "neither script (util-linux) nor python3's pty module";
  return (argv, { cwd, env, stdoutTo }) => {
    const shell =
      argv.map(quote).join(" ") + (stdoutTo === undefined ? "" : ` >${quote(stdoutTo)}`);
    const r = viaScript
      ? spawnSync("script", ["-qec", shell, "/dev/null"], { cwd, env, encoding: "utf8" })
      : spawnSync(
          "python3",
          [
            "-c",
            "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(['sh', '-c', sys.argv[1]])))",
            shell,
          ],
          { cwd, env, encoding: "utf8" },
        );
    return { code: r.status, output: (r.stdout ?? "").replace(/\r\n/g, "\n") };
  };
}

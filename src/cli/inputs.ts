// Which inputs a command that reads resource YAML (validate, synth) reads. With no path it reads
// standard input when that is not a terminal, as kubeconform does: `cat x.yaml | mcpfleet
// validate` must validate x.yaml, not the current directory. On a terminal nothing is piped in,
// so the current directory is read, and a line on stderr says so.

export interface Inputs {
  /** Paths to read, `-` for standard input. */
  paths: string[];
  /** Standard input is read because no path was given and it is not a terminal. */
  implicitStdin: boolean;
  /** A line for stderr when what is read is not what was typed (no path on a terminal). */
  notice?: string;
}

export function chooseInputs(
  command: string,
  positionals: readonly string[],
  stdinIsTTY: boolean = process.stdin.isTTY === true,
): Inputs {
  if (positionals.length > 0) return { paths: [...positionals], implicitStdin: false };
  if (!stdinIsTTY) return { paths: ["-"], implicitStdin: true };
  return {
    paths: ["."],
    implicitStdin: false,
    notice: `${command}: no path given, reading the current directory (.); pipe YAML in or give - to read standard input`,
  };
}

/** What was read, for a message that nothing was found in it. */
export function describeInputs(inputs: Inputs): string {
  if (inputs.implicitStdin) {
    return "standard input (read because no path was given and it is not a terminal; give a path to read files)";
  }
  return inputs.paths.map((p) => (p === "-" ? "standard input" : p)).join(", ");
}

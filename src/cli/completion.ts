// `mcpfleet completion bash|zsh|fish`: a shell completion script for the commands and their
// flags. The flags are read from each command's own help text, so the script never lists a
// flag the command does not take.

export interface CommandInfo {
  name: string;
  summary: string;
  /** The command's --help text. */
  help: () => Promise<string>;
}

const SHELLS = ["bash", "zsh", "fish"] as const;
type Shell = (typeof SHELLS)[number];

/** The flags a help text documents: `-o`, `--output`, `--no-install`, ... in order, once each. */
export function flagsOf(help: string): string[] {
  const flags = new Set<string>();
  for (const line of help.split("\n")) {
    // Option lines are indented and start with the flag(s): "  -o, --output FORMAT   ...".
    const head = /^\s+((?:-{1,2}[A-Za-z][\w-]*[ ,=|]*(?:[A-Z][A-Z_|.]*\s*)?,?\s*)+)/.exec(line);
    if (head === null) continue;
    for (const m of head[1]!.matchAll(/(?:^|[\s,])(-{1,2}[A-Za-z][\w-]*)/g)) flags.add(m[1]!);
  }
  return [...flags];
}

function bash(commands: { name: string; flags: string[] }[]): string {
  const cases = commands.map((c) => `    ${c.name}) opts="${c.flags.join(" ")}" ;;`).join("\n");
  return `# mcpfleet completion for bash: source <(mcpfleet completion bash)
_mcpfleet() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${commands.map((c) => c.name).join(" ")}" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o default -F _mcpfleet mcpfleet
`;
}

function zsh(commands: { name: string; flags: string[] }[]): string {
  // zsh runs bash completion functions through bashcompinit, which every zsh ships.
  return `#compdef mcpfleet
# mcpfleet completion for zsh: source <(mcpfleet completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bash(commands).replace(/^# mcpfleet completion for bash.*\n/, "")}`;
}

function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

function fish(commands: { name: string; summary: string; flags: string[] }[]): string {
  const lines = [
    "# mcpfleet completion for fish: mcpfleet completion fish | source",
    "complete -c mcpfleet -f",
  ];
  const names = commands.map((c) => c.name).join(" ");
  for (const c of commands) {
    lines.push(
      `complete -c mcpfleet -n "not __fish_seen_subcommand_from ${names}" -a ${c.name} -d ${fishQuote(c.summary)}`,
    );
    for (const flag of c.flags) {
      const option = flag.startsWith("--") ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`;
      lines.push(`complete -c mcpfleet -n "__fish_seen_subcommand_from ${c.name}" ${option}`);
    }
    lines.push(`complete -c mcpfleet -n "__fish_seen_subcommand_from ${c.name}" -F`);
  }
  return `${lines.join("\n")}\n`;
}

export function isShell(text: string): text is Shell {
  return (SHELLS as readonly string[]).includes(text);
}

export const COMPLETION_SHELLS = SHELLS;

/** The completion script for `shell`. */
export async function completionScript(shell: Shell, commands: CommandInfo[]): Promise<string> {
  // One at a time: a command prints its help through the one console.
  const infos: { name: string; summary: string; flags: string[] }[] = [];
  for (const c of commands) infos.push({ ...c, flags: flagsOf(await c.help()) });
  if (shell === "bash") return bash(infos);
  if (shell === "zsh") return zsh(infos);
  return fish(infos);
}

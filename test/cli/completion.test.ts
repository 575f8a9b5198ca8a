// `mcpfleet completion`: the bash script completes commands and each command's own flags in a
// real bash; the zsh and fish scripts list the same commands and flags.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { flagsOf } from "../../src/cli/completion.js";
import { runCli } from "./helpers.js";

const scripts: Record<string, string> = {};
beforeAll(async () => {
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = await runCli(["completion", shell]);
    expect(r.status, r.stderr).toBe(0);
    scripts[shell] = r.stdout;
  }
}, 120_000);

/** What bash completes for the words typed (the last one being completed). */
function complete(...words: string[]): string[] {
  const file = join(mkdtempSync(join(tmpdir(), "mcpfleet-completion-")), "completion.bash");
  writeFileSync(file, scripts.bash!);
  const program = `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _mcpfleet; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync("bash", ["-c", program], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  return r.stdout.split("\n").filter((l) => l !== "");
}

describe("mcpfleet completion", () => {
  it("bash completes commands and the flags of the command typed", () => {
    expect(complete("mcpfleet", "sy")).toEqual(["synth"]);
    expect(complete("mcpfleet", "synth", "--output")).toEqual(["--output-dir", "--output"]);
    expect(complete("mcpfleet", "apply", "--dry")).toEqual(["--dry-run"]);
    expect(complete("mcpfleet", "validate", "--unknown")).toEqual(["--unknown-fields"]);
    // A flag of another command is not offered.
    expect(complete("mcpfleet", "validate", "--output-d")).toEqual([]);
  });

  it("zsh and fish list the same commands and flags", () => {
    expect(scripts.zsh).toMatch(/^#compdef mcpfleet\n/);
    expect(scripts.zsh).toContain("bashcompinit");
    expect(scripts.zsh).toContain('synth) opts="-d --output-dir');
    expect(scripts.fish).toContain(
      'complete -c mcpfleet -n "__fish_seen_subcommand_from synth" -l output-dir',
    );
    expect(scripts.fish).toMatch(/-a validate -d 'Validate resource YAML/);
  });

  it("an unknown shell is a usage error with a suggestion", async () => {
    const r = await runCli(["completion", "bsh"]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      'mcpfleet: completion: give one shell: bash, zsh, fish, not "bsh" (did you mean "bash"?); see mcpfleet help completion',
    );
  });

  it("reads flags from option lines only", () => {
    expect(
      flagsOf(`Usage: mcpfleet x [--not-this]

Mentions --neither in prose.
  -o, --output FORMAT   text or json
      --dry-run=none|client|server
  -n, --namespace NS    the namespace`),
    ).toEqual(["-o", "--output", "--dry-run", "-n", "--namespace"]);
  });
});

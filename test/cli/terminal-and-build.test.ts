// Progress lines appear on a terminal only (pipes and CI logs get the summary alone), and
// `make synth` compiles only when a source changed.
import { spawnSync } from "node:child_process";
import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ttyRunner } from "../validate/tty.js";
import { examples, root, runCli } from "./helpers.js";

const CLEAR_LINE = "\u001b[2K";
const tty = ttyRunner();

describe("progress", () => {
  it.skipIf(typeof tty === "string")("synth shows progress on a terminal", () => {
    if (typeof tty === "string") return;
    const out = mkdtempSync(join(tmpdir(), "mcpfleet-tty-"));
    const r = tty(
      [
        process.execPath,
        "--import",
        join(root, "node_modules/tsx/dist/loader.mjs"),
        join(root, "src/cli/main.ts"),
        "synth",
        examples,
        "-d",
        join(out, "dist"),
      ],
      { cwd: out, env: { ...process.env, NO_COLOR: "" } },
    );
    expect(r.code).toBe(0);
    expect(r.output).toContain(`\r${CLEAR_LINE}synth: validating`);
    expect(r.output).toMatch(/synth: 34 resource\(s\) -> \d+ object\(s\)/);
  });
  if (typeof tty === "string") it.skip(`pseudo-terminal tests: ${tty}`, () => undefined);

  it("synth and apply show none when standard error is a pipe", async () => {
    const synth = await runCli(["synth", examples, "-o", "yaml"]);
    expect(synth.status).toBe(0);
    expect(synth.stderr).not.toContain(CLEAR_LINE);
    const apply = await runCli(["apply", "--dry-run=client", "-f", examples]);
    expect(apply.status).toBe(0);
    expect(apply.stderr).not.toContain(CLEAR_LINE);
    expect(apply.stdout).not.toContain(CLEAR_LINE);
  });
});

describe("make synth", () => {
  /** What `make -n build` would run with the compile stamp at `mtime`. */
  function planWithStamp(mtime: Date): string {
    const stamp = join(mkdtempSync(join(tmpdir(), "mcpfleet-stamp-")), ".stamp");
    writeFileSync(stamp, "");
    utimesSync(stamp, mtime, mtime);
    const r = spawnSync("make", ["-n", "build", `BUILD_STAMP=${stamp}`], {
      cwd: root,
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout;
  }

  it("does not compile when nothing changed since the last build", () => {
    const future = new Date(Date.now() + 3_600_000);
    expect(planWithStamp(future)).not.toMatch(/tsc -p tsconfig\.build\.json/);
  });

  it("compiles when a source is newer than the last build", () => {
    expect(planWithStamp(new Date(0))).toMatch(/tsc -p tsconfig\.build\.json/);
  });
});

// What bin/mcpfleet.js does before a validate run: the estimate of the input's size, and the
// same process started again, with glibc's malloc tuned, only for a large input.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LARGE_INPUT_BYTES, inputReaches } from "../../src/cli/input-size.js";
import { ROOT, tempDir, writeTree } from "./helpers.js";

const TSX = import.meta.resolve("tsx");

describe("inputReaches", () => {
  const dir = writeTree(tempDir("mcpfleet-launch-"), {
    "a.yaml": "x".repeat(600),
    "sub/b.yml": "x".repeat(600),
    "sub/notes.txt": "x".repeat(5000),
    ".git/c.yaml": "x".repeat(5000),
    "node_modules/d.json": "x".repeat(5000),
    "named.txt": "x".repeat(1000),
  });

  it("counts YAML and JSON in directories, without hidden entries or node_modules", () => {
    expect(inputReaches([dir], 1200)).toBe(true);
    expect(inputReaches([dir], 1201)).toBe(false);
  });

  it("counts a file named whatever its extension, and no option, standard input or missing path", () => {
    expect(inputReaches([join(dir, "named.txt")], 1000)).toBe(true);
    expect(inputReaches(["-", "--summary", join(dir, "missing.yaml")], 1)).toBe(false);
  });
});

describe("prepareValidate", () => {
  /** What the process reports after prepareValidate(ARGS), and whether it is the one spawned. */
  function prepared(args: string[]): { samePid: boolean; malloc: Record<string, string> } {
    const script = join(tempDir("mcpfleet-launch-"), "prepare.mjs");
    writeTree(join(script, ".."), {
      "prepare.mjs": `import { prepareValidate } from ${JSON.stringify(join(ROOT, "src/cli/validate-launch.ts"))};
prepareValidate(process.argv.slice(2));
const malloc = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("MALLOC_")));
console.log(JSON.stringify({ pid: process.pid, malloc }));
`,
    });
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith("MALLOC_")),
    );
    const r = spawnSync(process.execPath, ["--import", TSX, script, ...args], {
      encoding: "utf8",
      env,
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { pid: number; malloc: Record<string, string> };
    return { samePid: out.pid === r.pid, malloc: out.malloc };
  }

  it.runIf(process.platform === "linux")(
    "starts the same process again with one malloc arena for a large input only",
    () => {
      const big = writeTree(tempDir("mcpfleet-launch-"), {
        "big.yaml": "x".repeat(LARGE_INPUT_BYTES),
      });
      expect(prepared(["validate", big])).toEqual({
        samePid: true,
        malloc: {
          MALLOC_ARENA_MAX: "1",
          MALLOC_TRIM_THRESHOLD_: "131072",
          MALLOC_MMAP_THRESHOLD_: "32768",
        },
      });
      expect(prepared(["validate", join(ROOT, "examples")])).toEqual({ samePid: true, malloc: {} });
      expect(prepared(["synth", big])).toEqual({ samePid: true, malloc: {} });
    },
  );
});

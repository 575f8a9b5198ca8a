// What a validate run loads and which options it takes, through the real entry point in a child
// process: a run loads only what its input needs (the pre-commit case validates a few files, and
// every module loaded is start-up time), and --threads, measured slower than one thread, is a
// usage error saying so. Timings are in bench/, not here.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ROOT, res, tempDir, writeTree, yamlDocs } from "./helpers.js";

const MAIN = join(ROOT, "src/cli/main.ts");
const TSX = import.meta.resolve("tsx");

// A module hook that appends the URL of every module loaded to the file $LOADED.
const HOOK = `import { registerHooks } from "node:module";
import { appendFileSync } from "node:fs";
registerHooks({
  load(url, context, next) {
    appendFileSync(process.env.LOADED, url + "\\n");
    return next(url, context);
  },
});
`;

const CONFIG =
  "sources:\n  - name: a\n    managed: {}\nregistries:\n  - name: r\n    sources: [a]\nauth:\n  mode: anonymous\n";

function validate(args: string[], dir: string): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", TSX, MAIN, "validate", ...args], {
    cwd: dir,
    encoding: "utf8",
  });
  return { code: r.status, stderr: r.stderr };
}

/** The modules a validate run of `files` loads, as paths relative to the project or node: names. */
function loadedBy(files: Record<string, string>): string[] {
  const dir = tempDir("mcpfleet-startup-");
  writeTree(dir, { ...files, "hook.mjs": HOOK });
  const loaded = join(dir, "loaded.txt");
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      pathToFileURL(join(dir, "hook.mjs")).href,
      "--import",
      TSX,
      MAIN,
      "validate",
      "in",
    ],
    { cwd: dir, encoding: "utf8", env: { ...process.env, LOADED: loaded } },
  );
  expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
    status: 0,
    stdout: "",
    stderr: "",
  });
  const root = pathToFileURL(ROOT).href + "/";
  return readFileSync(loaded, "utf8")
    .split("\n")
    .filter((u) => u !== "")
    .map((u) => (u.startsWith(root) ? u.slice(root.length) : u));
}

describe("validate start-up", () => {
  it("loads neither the registry's catalog readers nor worker threads for resources that need neither", () => {
    const loaded = loadedBy({
      "in/servers.yaml": yamlDocs(
        res("MCPGroup", "tools"),
        res("MCPServer", "one", { image: "ghcr.io/x/one:1", groupRef: "tools" }),
        res("MCPRegistry", "reg", { configYAML: CONFIG }),
      ),
    });
    expect(loaded.some((u) => u.startsWith("src/validate/validate."))).toBe(true);
    // The synthesis check renders the MCPRegistry, whose Role names the kinds the registry's
    // kubernetes source reads: that list of names is all it takes from src/registry/.
    expect(loaded.filter((u) => u.startsWith("src/registry/"))).toEqual([
      "src/registry/sources/exported-kinds.ts",
    ]);
    // (node:worker_threads itself is loaded by tsx, which runs this test's sources.)
    expect(loaded.filter((u) => /^src\/validate\/(pool|worker)\./.test(u))).toEqual([]);
  }, 60_000);

  it("loads the catalog readers when a registry enforces", () => {
    const loaded = loadedBy({
      "in/registry.yaml": yamlDocs(
        res("MCPRegistry", "reg", {
          enforceServers: true,
          configYAML: CONFIG,
        }),
      ),
    });
    expect(loaded.some((u) => u.startsWith("src/registry/images/policy."))).toBe(true);
  }, 60_000);
});

describe("validate --threads", () => {
  it("is a usage error saying validate runs in one thread", () => {
    const dir = tempDir("mcpfleet-threads-");
    writeTree(dir, { "a.yaml": yamlDocs(res("MCPGroup", "tools")) });
    for (const args of [
      ["--threads", "2", "a.yaml"],
      ["--threads=1", "a.yaml"],
    ]) {
      const r = validate(args, dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        "mcpfleet: validate: --threads is not an option: validate runs in one thread, which was faster than worker threads on every input measured (10,000 resources included); drop --threads; see mcpfleet help validate\n",
      );
    }
  }, 60_000);
});

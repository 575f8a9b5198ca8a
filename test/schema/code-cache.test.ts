// The code cache generated/validators.cjs is loaded with (src/schema/code-cache.ts): a cache
// written after a run is taken by the next, the file behaves the same with it or without, and
// neither a changed file nor a damaged cache runs with what the cache holds. Each load is a
// process of its own, as each run is: within one process V8 reuses what it compiled already,
// whatever the cache says.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const TSX = import.meta.resolve("tsx");
const MODULE = pathToFileURL(join(import.meta.dirname, "../../src/schema/code-cache.ts")).href;

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcpfleet-code-cache-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const SOURCE = `"use strict";
const { join } = require("node:path");
exports.name = join("a", "b");
exports.where = __filename;
exports.twice = function twice(n) { return n * 2; };
`;

// Loads the file with the cache of `dir`, calls it, writes the cache, and says what it saw.
const RUNNER = `import { loadWithCodeCache } from ${JSON.stringify(MODULE)};
const [file, dir] = process.argv.slice(2);
const loaded = loadWithCodeCache(file, dir);
const { name, where, twice } = loaded.exports;
loaded.saveCache();
console.log(JSON.stringify({ accepted: loaded.cacheAccepted, name, where, twice: twice(21) }));
`;

interface Seen {
  accepted: boolean;
  name: string;
  where: string;
  twice: number;
}

function loadInProcess(dir: string, file: string): Seen {
  const runner = join(dir, "runner.mts");
  writeFileSync(runner, RUNNER);
  const r = spawnSync(process.execPath, ["--import", TSX, runner, file, dir], {
    encoding: "utf8",
  });
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout) as Seen;
}

function cacheFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith(".v8cache"));
}

describe("loadWithCodeCache", () => {
  it("runs the file as CommonJS, then with the cache its first run wrote", () => {
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    const expected = { name: join("a", "b"), where: file, twice: 42 };
    expect(loadInProcess(dir, file)).toEqual({ accepted: false, ...expected });
    expect(cacheFiles(dir)).toHaveLength(1);
    expect(loadInProcess(dir, file)).toEqual({ accepted: true, ...expected });
    // Written beside and renamed: nothing half-written is left.
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("does not run a changed file with the old file's cache", () => {
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    loadInProcess(dir, file);
    writeFileSync(file, SOURCE.replace("n * 2", "n * 3 "));
    expect(loadInProcess(dir, file)).toMatchObject({ accepted: false, twice: 63 });
  });

  it("compiles the file anew over a cache that is not V8's (a damaged or foreign file)", () => {
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    loadInProcess(dir, file);
    writeFileSync(join(dir, cacheFiles(dir)[0]!), "not a code cache");
    expect(loadInProcess(dir, file)).toMatchObject({ accepted: false, twice: 42 });
    expect(loadInProcess(dir, file)).toMatchObject({ accepted: true, twice: 42 });
  });
});

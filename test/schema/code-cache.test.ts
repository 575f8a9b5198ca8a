// The code cache the modules of generated/validators/ are loaded with (src/schema/code-cache.ts):
// a cache written after a run is taken by the next, the file behaves the same with it or
// without, and neither a changed file nor a damaged cache runs with what the cache holds. Each load is a
// process of its own, as each run is: within one process V8 reuses what it compiled already,
// whatever the cache says.
import { spawnSync } from "node:child_process";
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const TSX = import.meta.resolve("tsx");
const MODULE = pathToFileURL(join(import.meta.dirname, "../../src/schema/code-cache.ts")).href;
const GROWTH = pathToFileURL(
  join(import.meta.dirname, "../../src/young-generation-growth.ts"),
).href;

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

// Loads the file with the cache of `dir`, calls it, writes the cache, and says what it saw; with
// $GROWTH, the young generation's growth factor set first, as the CLI sets it during a run.
const RUNNER = `import { loadWithCodeCache } from ${JSON.stringify(MODULE)};
import { setYoungGenerationGrowth } from ${JSON.stringify(GROWTH)};
if (process.env.GROWTH) setYoungGenerationGrowth(Number(process.env.GROWTH));
const [file, dir] = process.argv.slice(2);
const loaded = loadWithCodeCache(file, dir);
const { name, where, twice } = loaded.exports;
loaded.saveCache(["one"]);
const covered = [...loaded.covered];
console.log(JSON.stringify({ accepted: loaded.cacheAccepted, covered, name, where, twice: twice(21) }));
`;

interface Seen {
  accepted: boolean;
  covered: string[];
  name: string;
  where: string;
  twice: number;
}

function loadInProcess(dir: string, file: string, growth = ""): Seen {
  const runner = join(dir, "runner.mts");
  writeFileSync(runner, RUNNER);
  const r = spawnSync(process.execPath, ["--import", TSX, runner, file, dir], {
    encoding: "utf8",
    env: { ...process.env, GROWTH: growth },
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
    expect(loadInProcess(dir, file)).toEqual({ accepted: false, covered: [], ...expected });
    expect(cacheFiles(dir)).toHaveLength(1);
    expect(loadInProcess(dir, file)).toEqual({ accepted: true, covered: ["one"], ...expected });
    // Written beside and renamed: nothing half-written is left.
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("takes the cache whatever the young generation's growth when it was made and taken", () => {
    // V8 refuses a cache made with other flags, and the CLI changes this one during a run.
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    loadInProcess(dir, file, "1");
    expect(loadInProcess(dir, file, "2")).toMatchObject({ accepted: true, twice: 42 });
    expect(loadInProcess(dir, file, "1")).toMatchObject({ accepted: true, twice: 42 });
  });

  it("takes a cache made by a process that never set the growth, and the reverse", () => {
    // Commands other than validate and registry serve leave V8's own factor: their caches were
    // refused by the next validate run, and its caches by them, each writing it again.
    for (const [first, then] of [
      ["", "1"],
      ["1", ""],
    ]) {
      const dir = tempDir();
      const file = join(dir, "module.cjs");
      writeFileSync(file, SOURCE);
      loadInProcess(dir, file, first);
      expect(loadInProcess(dir, file, then)).toMatchObject({ accepted: true, twice: 42 });
    }
  });

  it("does not run a changed file with the old file's cache", () => {
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    loadInProcess(dir, file);
    writeFileSync(file, SOURCE.replace("n * 2", "n * 3 "));
    expect(loadInProcess(dir, file)).toMatchObject({ accepted: false, twice: 63 });
  });

  it("does not run a changed file of the same size and time with the old file's cache", () => {
    // V8 checks a cache against the source's length only, and an npm package's files all carry
    // one fixed time: the old cache would run the old file's code.
    const packed = new Date("1985-10-26T08:15:00Z");
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    utimesSync(file, packed, packed);
    loadInProcess(dir, file);
    const changed = SOURCE.replace("n * 2", "n + 7").replace('join("a", "b")', 'join("c", "d")');
    expect(changed.length).toBe(SOURCE.length);
    writeFileSync(file, changed);
    utimesSync(file, packed, packed);
    expect(loadInProcess(dir, file)).toMatchObject({
      accepted: false,
      name: join("c", "d"),
      twice: 28,
    });
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

// requireWithCodeCache in a process with Node's compile cache in `dir`, using the names $USED.
const REQUIRER = `import nodeModule from "node:module";
import { requireWithCodeCache } from ${JSON.stringify(MODULE)};
const [file, dir] = process.argv.slice(2);
nodeModule.enableCompileCache(dir);
const { twice } = requireWithCodeCache(file, () => process.env.USED.split(","));
console.log(twice(2));
`;

describe("requireWithCodeCache", () => {
  function requireInProcess(dir: string, file: string, used: string): void {
    const runner = join(dir, "requirer.mts");
    writeFileSync(runner, REQUIRER);
    const cache = join(dir, "compile-cache");
    const r = spawnSync(process.execPath, ["--import", TSX, runner, file, cache], {
      encoding: "utf8",
      env: { ...process.env, USED: used },
    });
    expect({ stdout: r.stdout, stderr: r.stderr }).toEqual({ stdout: "4\n", stderr: "" });
  }

  /** The cache's sidecar (what it covers) and the time the cache was written. */
  function written(dir: string): { covered: string[]; at: number } {
    const cache = join(dir, "compile-cache");
    const sub = readdirSync(cache).map((d) => join(cache, d));
    const file = sub.flatMap((d) => cacheFiles(d).map((f) => join(d, f)))[0]!;
    return {
      covered: JSON.parse(readFileSync(`${file}.json`, "utf8")) as string[],
      at: statSync(file).mtimeMs,
    };
  }

  it("writes the cache again only when a run uses something it does not cover", () => {
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    requireInProcess(dir, file, "a");
    const first = written(dir);
    expect(first.covered).toEqual(["a"]);
    requireInProcess(dir, file, "a");
    expect(written(dir)).toEqual(first);
    requireInProcess(dir, file, "b");
    const second = written(dir);
    expect(second.covered).toEqual(["a", "b"]);
    expect(second.at).toBeGreaterThanOrEqual(first.at);
    requireInProcess(dir, file, "b,a");
    expect(written(dir)).toEqual(second);
  });
});

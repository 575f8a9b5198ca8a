// The code cache generated/validators.cjs is loaded with (src/schema/code-cache.ts): a cache
// written after a run is taken by the next, the file behaves the same with it or without, and
// a changed file does not run with the cache of the old one.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadWithCodeCache } from "../../src/schema/code-cache.js";

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

describe("loadWithCodeCache", () => {
  it("runs the file as CommonJS, then with the cache its first run wrote", () => {
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    const first = loadWithCodeCache(file, dir);
    expect(first.cacheAccepted).toBe(false);
    const exports = first.exports as { name: string; where: string; twice(n: number): number };
    expect([exports.name, exports.where, exports.twice(21)]).toEqual([join("a", "b"), file, 42]);
    first.saveCache();
    expect(readdirSync(dir).filter((f) => f.endsWith(".v8cache"))).toHaveLength(1);
    const second = loadWithCodeCache(file, dir);
    expect(second.cacheAccepted).toBe(true);
    expect((second.exports as { twice(n: number): number }).twice(4)).toBe(8);
  });

  it("does not run a changed file with the old file's cache", () => {
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    loadWithCodeCache(file, dir).saveCache();
    writeFileSync(file, SOURCE.replace("n * 2", "n * 3 "));
    const changed = loadWithCodeCache(file, dir);
    expect(changed.cacheAccepted).toBe(false);
    expect((changed.exports as { twice(n: number): number }).twice(2)).toBe(6);
  });

  it("leaves no temporary file behind when it writes", () => {
    const dir = tempDir();
    const file = join(dir, "module.cjs");
    writeFileSync(file, SOURCE);
    loadWithCodeCache(file, dir).saveCache();
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});

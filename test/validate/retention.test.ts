// What a validate run keeps of the files it has done with, seen in a heap snapshot of a child
// process taken as it reaches its last file: no file's text. A run over a repository of many
// files would otherwise hold all of them to its end (a value of 13 characters or more cut from
// a file's text by V8 keeps the whole text alive, and the reference level keeps names,
// images and audiences of every resource).
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir, writeTree } from "./helpers.js";

const TSX = import.meta.resolve("tsx");

// Validates the directory; at the last file, writes a heap snapshot and prints the markers of
// the files whose text is still in it.
const PROBE = `import { readFileSync, writeFileSync } from "node:fs";
import { writeHeapSnapshot } from "node:v8";
import { validatePaths } from ${JSON.stringify(join(ROOT, "src/validate/index.ts"))};
const [dir, snapshot] = process.argv.slice(2);
const report = await validatePaths([dir], {
  onProgress: (done, total) => { if (done === total - 1) writeHeapSnapshot(snapshot); },
});
const strings = JSON.parse(readFileSync(snapshot, "utf8")).strings;
const kept = new Set();
for (const s of strings) for (const m of s.matchAll(/# retention-marker (\\d+)/g)) kept.add(Number(m[1]));
console.log(JSON.stringify({ kept: [...kept].sort((a, b) => a - b), summary: report.summary }));
`;

function keptTexts(files: Record<string, string>): { kept: number[]; summary: { errors: number } } {
  const dir = tempDir("mcpfleet-retention-");
  writeTree(dir, { "probe.mjs": PROBE });
  writeTree(join(dir, "in"), files);
  const r = spawnSync(
    process.execPath,
    ["--import", TSX, join(dir, "probe.mjs"), join(dir, "in"), join(dir, "heap.heapsnapshot")],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as { kept: number[]; summary: { errors: number } };
}

/** The examples' resources, each file marked; `broken` adds an unknown field to the first. */
function markedExamples(broken: boolean): Record<string, string> {
  const dir = join(ROOT, "examples/resources");
  const names = readdirSync(dir)
    .filter((n) => n.endsWith(".yaml"))
    .sort();
  return Object.fromEntries(
    names.map((name, i) => {
      let text = readFileSync(join(dir, name), "utf8");
      if (broken && i === 0)
        text = text.replace(/^spec:\n/m, "spec:\n  notAField: here-and-long-enough\n");
      return [`${String(i).padStart(3, "0")}-${name}`, `# retention-marker ${i}\n${text}`];
    }),
  );
}

describe("a validate run keeps no file's text once it is done with it", () => {
  it.each([false, true])("with an error in the first file: %s", (broken) => {
    const files = markedExamples(broken);
    const last = Object.keys(files).length - 1;
    const { kept, summary } = keptTexts(files);
    expect(summary.errors > 0).toBe(broken);
    // Taken as the last file is about to be read: the one before may still be in a local
    // variable of the loop. ajv's validate functions keep their last errors, each with the
    // value it was about (a bounded amount: one document per function that failed last), so the
    // broken file may be kept too. None other may.
    const allowed = new Set([last - 1, last, ...(broken ? [0] : [])]);
    expect(kept.filter((i) => !allowed.has(i))).toEqual([]);
  });
});

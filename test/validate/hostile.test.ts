// Hostile and broken input: each case gives a clear reported result, the run goes on with the
// other files, and no exception escapes.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Report, exitCode, validatePaths } from "../../src/validate/index.js";
import { tempDir, writeTree } from "./helpers.js";

const GOOD = "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPGroup\nmetadata:\n  name: ok\n";

function aliasBomb(levels: number): string {
  const lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]'];
  for (let i = 1; i <= levels; i++) {
    const refs = Array.from({ length: 10 }, () => `*a${i - 1}`).join(", ");
    lines.push(`a${i}: &a${i} [${refs}]`);
  }
  return lines.join("\n") + "\n";
}

interface Case {
  name: string;
  content: string | Buffer;
  /** Message of the single error the file's result carries. */
  message: RegExp;
  level: "parse" | "schema" | "io";
  line?: number;
}

const cases: Case[] = [
  {
    name: "invalid YAML",
    content: "a: [1, 2\nb: 3\n",
    message: /flow sequence/i,
    level: "parse",
    line: 2,
  },
  {
    name: "a tab as indentation",
    content: "a:\n\tb: 1\n",
    message: /tab/i,
    level: "parse",
    line: 2,
  },
  {
    name: "duplicate keys",
    content: "apiVersion: v1\nkind: ConfigMap\nkind: Secret\n",
    message: /duplicate key "kind"/,
    level: "parse",
    line: 3,
  },
  {
    name: "an alias bomb",
    content: aliasBomb(8),
    message: /too many alias expansions/,
    level: "parse",
  },
  { name: "an undefined alias", content: "a: *nowhere\n", message: /alias/i, level: "parse" },
  {
    name: "deep nesting (flow)",
    content: "[".repeat(5000) + "]".repeat(5000) + "\n",
    message: /call stack|nest/i,
    level: "parse",
  },
  {
    name: "deep nesting beyond the depth limit",
    content:
      "a:\n" +
      Array.from({ length: 80 }, (_, i) => " ".repeat(2 * (i + 1)) + "b:").join("\n") +
      " 1\n",
    message: /nests deeper than 64 levels/,
    level: "parse",
  },
  {
    name: "a binary file",
    content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
    message: /binary file/,
    level: "parse",
  },
  {
    name: "a Latin-1 file",
    content: Buffer.from("name: caf\xe9\n", "latin1"),
    message: /not valid UTF-8 \(first invalid byte at offset 9\)/,
    level: "parse",
  },
  {
    name: "a UTF-16 file",
    content: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("a: 1\n", "utf16le")]),
    message: /UTF-16/,
    level: "parse",
  },
  {
    name: "a top-level scalar",
    content: "just a string\n",
    message: /not a string/,
    level: "schema",
  },
  { name: "a top-level list", content: "- a\n- b\n", message: /not a list/, level: "schema" },
  {
    name: "a missing apiVersion and kind",
    content: "metadata:\n  name: x\nspec: {}\n",
    message: /missing required field "apiVersion"/,
    level: "schema",
  },
  {
    name: "a mapping key that is a mapping",
    content: "? {a: 1}\n: value\n",
    message: /keys must be strings/,
    level: "parse",
  },
];

async function runDir(files: Record<string, string | Buffer>): Promise<Report> {
  const dir = writeTree(tempDir(), files);
  return validatePaths([dir]);
}

describe("hostile input", () => {
  it.each(cases)("$name: a clear error, and the run goes on", async (c) => {
    const report = await runDir({ "a-bad.yaml": c.content, "b-good.yaml": GOOD });
    const bad = report.resources.filter((r) => r.file.endsWith("a-bad.yaml"));
    expect(bad.length).toBeGreaterThan(0);
    const errors = bad.flatMap((r) => r.errors);
    expect(errors.length, JSON.stringify(errors)).toBeGreaterThanOrEqual(1);
    expect(errors[0]?.message).toMatch(c.message);
    expect(errors[0]?.level).toBe(c.level);
    if (c.line !== undefined) expect(errors[0]?.line).toBe(c.line);
    for (const r of bad) expect(r.valid).toBe(false);
    if (c.level === "parse") for (const r of bad) expect(r.kind).toBe("");
    const good = report.resources.find((r) => r.file.endsWith("b-good.yaml"));
    expect(good).toMatchObject({ kind: "MCPGroup", valid: true });
    expect(exitCode(report)).toBe(1);
  });

  it("thousands of unclosed brackets: each error once, in words, not hundreds of lines", async () => {
    const report = await runDir({ "a-bad.yaml": "a:" + " [".repeat(5000) + "\n" });
    const errors = report.resources.flatMap((r) => r.errors);
    expect(errors.length).toBeLessThanOrEqual(21);
    const places = errors.map((e) => `${e.line}:${e.column}:${e.message}`);
    expect(new Set(places).size).toBe(places.length);
    expect(errors.map((e) => e.message)).toContain(
      "the document nests too deeply for the YAML parser (it ran out of stack)",
    );
    expect(errors.some((e) => /call stack|regular expression/i.test(e.message))).toBe(false);
  });

  it("a document with many parse errors reports 20 and says how many more", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `k${i}: [\n`).join("");
    const report = await runDir({ "a-bad.yaml": lines });
    const errors = report.resources.flatMap((r) => r.errors);
    expect(errors).toHaveLength(21);
    expect(errors[20]?.message).toMatch(/^\d+ more parse errors in this document not shown$/);
  });

  it("a file over the size cap is refused before it is parsed", async () => {
    const dir = writeTree(tempDir(), {
      "big.yaml": "a: " + "x".repeat(2048) + "\n",
      "ok.yaml": GOOD,
    });
    const report = await validatePaths([dir], { maxFileBytes: 1024 });
    expect(report.resources[0]?.errors[0]?.message).toMatch(/larger than the 1 KiB limit/);
    expect(report.resources[1]?.valid).toBe(true);
  });

  it("empty documents and files are skipped without a result", async () => {
    const report = await runDir({
      "empty.yaml": "",
      "comments.yaml": "# nothing here\n---\n# nor here\n",
      "nulls.yaml": "---\n~\n---\nnull\n...\n",
      "mixed.yaml": "---\n---\n" + GOOD + "---\n",
    });
    expect(report.resources.map((r) => r.file.split("/").pop())).toEqual(["mixed.yaml"]);
    expect(exitCode(report)).toBe(0);
  });

  it("a path that does not exist is an I/O error (exit 2), the rest is validated", async () => {
    const dir = writeTree(tempDir(), { "ok.yaml": GOOD });
    const report = await validatePaths([join(dir, "missing.yaml"), dir]);
    expect(report.resources[0]).toMatchObject({ valid: false, kind: "" });
    expect(report.resources[0]?.errors[0]).toMatchObject({
      level: "io",
      message: "no such file or directory",
    });
    expect(report.resources[1]).toMatchObject({ kind: "MCPGroup", valid: true });
    expect(exitCode(report)).toBe(2);
  });

  it("a dangling symbolic link in a directory is an I/O error", async () => {
    const dir = writeTree(tempDir(), { "ok.yaml": GOOD });
    symlinkSync(join(dir, "nowhere.yaml"), join(dir, "link.yaml"));
    const report = await validatePaths([dir]);
    expect(report.resources.map((r) => [r.file.split("/").pop(), r.errors[0]?.level])).toEqual([
      ["link.yaml", "io"],
      ["ok.yaml", undefined],
    ]);
  });

  it("a path below a file (not a directory) is an I/O error", async () => {
    const dir = writeTree(tempDir(), { "ok.yaml": GOOD });
    const report = await validatePaths([join(dir, "ok.yaml", "x.yaml")]);
    expect(report.resources[0]?.errors[0]?.level).toBe("io");
    expect(exitCode(report)).toBe(2);
  });

  it("a symbolic-link loop between directories is walked once", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "a"));
    writeFileSync(join(dir, "a", "g.yaml"), GOOD);
    symlinkSync(dir, join(dir, "a", "loop"));
    const report = await validatePaths([dir]);
    expect(report.resources.map((r) => r.file.split("/").pop())).toEqual(["g.yaml"]);
  });

  it("a failing standard input is an I/O error", async () => {
    const report = await validatePaths(["-"], {
      stdin: () => Promise.reject(Object.assign(new Error("EIO"), { code: "EIO" })),
    });
    expect(report.resources[0]).toMatchObject({ file: "<stdin>", valid: false });
    expect(report.resources[0]?.errors[0]?.level).toBe("io");
  });

  it("standard input over the size cap is refused", async () => {
    const report = await validatePaths(["-"], {
      maxFileBytes: 10,
      stdin: () => Promise.resolve(Buffer.from(GOOD)),
    });
    expect(report.resources[0]?.errors[0]?.message).toMatch(/larger than the 10 bytes limit/);
  });
});

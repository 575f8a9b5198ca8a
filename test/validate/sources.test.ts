// Finding input files and reading them as text.
import { execFileSync, spawn } from "node:child_process";
import { symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  collectInputs,
  decodeText,
  firstInvalidUtf8,
  readFileCapped,
} from "../../src/validate/sources.js";
import { tempDir, writeTree } from "./helpers.js";

describe("collectInputs", () => {
  it("walks directories recursively in name order, for .yaml, .yml and .json", () => {
    const dir = writeTree(tempDir(), {
      "b.yaml": "",
      "a.yml": "",
      "c.json": "",
      "d.txt": "",
      "UPPER.YAML": "",
      "sub/z.yaml": "",
      "sub/deeper/y.yml": "",
      ".hidden/x.yaml": "",
      ".dot.yaml": "",
      "node_modules/pkg/x.yaml": "",
    });
    const names = collectInputs([dir]).map((i) => i.name.slice(dir.length + 1));
    expect(names).toEqual([
      "UPPER.YAML",
      "a.yml",
      "b.yaml",
      "c.json",
      "sub/deeper/y.yml",
      "sub/z.yaml",
    ]);
  });

  it("reads a file given by name whatever its extension, in the order given", () => {
    const dir = writeTree(tempDir(), { "x.txt": "", "y.yaml": "" });
    expect(collectInputs([`${dir}/y.yaml`, `${dir}/x.txt`, "-"]).map((i) => i.name)).toEqual([
      `${dir}/y.yaml`,
      `${dir}/x.txt`,
      "<stdin>",
    ]);
  });

  it("reads a file named twice once", () => {
    const dir = writeTree(tempDir(), { "a.yaml": "", "b.yaml": "" });
    const names = collectInputs([`${dir}/a.yaml`, dir, `${dir}/./a.yaml`]).map((i) => i.name);
    expect(names).toEqual([`${dir}/a.yaml`, `${dir}/b.yaml`]);
  });

  it("reads a file reached through a linked directory and by name once", () => {
    const dir = writeTree(tempDir(), { "real/a.yaml": "", "real/b.yaml": "" });
    symlinkSync(join(dir, "real"), join(dir, "link"));
    symlinkSync(join(dir, "real", "b.yaml"), join(dir, "real", "c.yaml"));
    const names = collectInputs([join(dir, "real", "a.yaml"), join(dir, "link")]).map((i) =>
      i.name.slice(dir.length + 1),
    );
    // c.yaml is a link to b.yaml: the same file, read once.
    expect(names).toEqual(["real/a.yaml", "link/b.yaml"]);
  });
});

describe("readFileCapped", () => {
  it.each([0, 1, 4095, 4096, 70_000])("reads a file of %i bytes whole", (size) => {
    const path = join(tempDir(), "f.yaml");
    const text = "x".repeat(size);
    writeFileSync(path, text);
    expect(readFileCapped(path, 1 << 20)).toMatchObject({ ok: true, text });
  });

  it("refuses a file over the cap, and accepts one at it", () => {
    const path = join(tempDir(), "f.yaml");
    writeFileSync(path, "x".repeat(100));
    expect(readFileCapped(path, 99)).toMatchObject({ ok: false, kind: "content" });
    expect(readFileCapped(path, 100)).toMatchObject({ ok: true, text: "x".repeat(100) });
  });

  it("reads a regular file again while its size and time are those it was read with", () => {
    const path = join(tempDir(), "f.yaml");
    writeFileSync(path, "a: 1\n");
    const read = readFileCapped(path, 100);
    if (!read.ok || read.again === undefined) throw new Error("read again is offered");
    expect(read.again()).toBe("a: 1\n");
    writeFileSync(path, "a: 22\n");
    expect(read.again()).toBeUndefined();
    // The same size, written later: its time tells.
    writeFileSync(path, "a: 1\n");
    utimesSync(path, new Date(), new Date(Date.now() + 5_000));
    expect(read.again()).toBeUndefined();
  });

  it("reads what is not a regular file in chunks, to its end", () => {
    const dir = tempDir();
    const path = join(dir, "fifo");
    const piece = "a: 1\n".repeat(2_000);
    writeFileSync(join(dir, "piece"), piece);
    execFileSync("mkfifo", [path]);
    // The writer is another process; it and the read below each wait for the other to open.
    // It writes in pieces with pauses, so reads come back short before the end.
    const script = 'for i in 1 2 3; do cat "$0"; sleep 0.05; done > "$1"';
    const writer = spawn("sh", ["-c", script, join(dir, "piece"), path], { stdio: "ignore" });
    expect(readFileCapped(path, 1 << 20)).toMatchObject({ ok: true, text: piece.repeat(3) });
    writer.kill();
  });

  it("names why a missing file or a directory cannot be read", () => {
    const dir = tempDir();
    expect(readFileCapped(join(dir, "missing"), 10)).toEqual({
      ok: false,
      kind: "io",
      message: "no such file or directory",
    });
    expect(readFileCapped(dir, 10)).toEqual({ ok: false, kind: "io", message: "is a directory" });
  });
});

describe("decodeText", () => {
  const cases: { name: string; bytes: number[]; ok: boolean; message?: RegExp; text?: string }[] = [
    { name: "ASCII", bytes: [0x61, 0x3a, 0x20, 0x31], ok: true, text: "a: 1" },
    { name: "UTF-8 with a byte order mark", bytes: [0xef, 0xbb, 0xbf, 0x61], ok: true, text: "a" },
    {
      name: "multi-byte characters",
      bytes: [0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80],
      ok: true,
      text: "é€😀",
    },
    {
      name: "a NUL byte",
      bytes: [0x61, 0x00],
      ok: false,
      message: /binary file \(NUL byte at offset 1\)/,
    },
    { name: "Latin-1", bytes: [0x63, 0x61, 0x66, 0xe9], ok: false, message: /offset 3/ },
    { name: "an overlong encoding", bytes: [0x61, 0xc0, 0xaf], ok: false, message: /offset 1/ },
    { name: "an encoded surrogate", bytes: [0xed, 0xa0, 0x80], ok: false, message: /offset 0/ },
    {
      name: "a truncated sequence",
      bytes: [0x61, 0x62, 0xe2, 0x82],
      ok: false,
      message: /offset 2/,
    },
    { name: "UTF-16 LE", bytes: [0xff, 0xfe, 0x61, 0x00], ok: false, message: /UTF-16/ },
    { name: "UTF-16 BE", bytes: [0xfe, 0xff, 0x00, 0x61], ok: false, message: /UTF-16/ },
  ];
  it.each(cases)("$name", (c) => {
    const out = decodeText(Buffer.from(c.bytes));
    expect(out.ok).toBe(c.ok);
    if (out.ok) expect(out.text).toBe(c.text);
    else expect(out.message).toMatch(c.message ?? /./);
  });

  // readFileCapped() reads regular files through Node's decoder and falls back to the bytes
  // when in doubt: read from a file, every case must come out as decodeText() has it.
  it.each([
    ...cases,
    { name: "a replacement character written as such", bytes: [0x61, 0xef, 0xbf, 0xbd], ok: true },
  ])("$name, read from a file", (c) => {
    const path = join(tempDir(), "f.yaml");
    writeFileSync(path, Buffer.from(c.bytes));
    const { again: _again, ...read } = { again: undefined, ...readFileCapped(path, 1 << 20) };
    expect(read).toEqual(decodeText(Buffer.from(c.bytes)));
  });

  it("counts a file's cap in bytes, not characters", () => {
    const path = join(tempDir(), "f.yaml");
    writeFileSync(path, "€".repeat(10)); // 30 bytes
    expect(readFileCapped(path, 29)).toMatchObject({ ok: false, kind: "content" });
    expect(readFileCapped(path, 30)).toMatchObject({ ok: true, text: "€".repeat(10) });
  });

  it("finds the first invalid byte of any buffer, or its length when there is none", () => {
    expect(firstInvalidUtf8(Buffer.from("plain ascii"))).toBe(11);
    expect(firstInvalidUtf8(Buffer.from([0xf5, 0x80, 0x80, 0x80]))).toBe(0);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0x80]))).toBe(1);
  });
});

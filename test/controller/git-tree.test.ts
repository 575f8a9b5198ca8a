// Reading a watched directory straight from the object store: the same bytes git has (loose
// objects, packs, offset and reference deltas), only resource files inflated, sizes refused from
// the header, and nothing outside the repository reachable through the tree.
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ObjectStore } from "../../src/infra/git/objects.js";
import { GitSource } from "../../src/infra/git/source.js";
import { commitTree, readResourceTree, subtree } from "../../src/infra/git/tree.js";
import { isMcpfleetError } from "../../src/errors.js";
import { collectInputs, isInputError } from "../../src/validate/sources.js";
import { commitFiles, gitCmd, makeRepo } from "../support/git-server.js";
import { tmp } from "./helpers.js";

/** The watched path's files as the controller reads them at `commit`. */
function read(work: string, commit: string, path: string, maxFileBytes = 1024 * 1024) {
  const store = new ObjectStore(join(work, ".git"));
  try {
    const tree = subtree(store, commitTree(store, commit), path);
    if (tree === undefined) throw new Error(`no ${path}`);
    const result = readResourceTree(store, tree, { path, maxFileBytes });
    return { ...result, inflated: store.inflatedBytes };
  } finally {
    store.close();
  }
}

async function failure(p: () => unknown): Promise<{ code: string; message: string }> {
  try {
    await p();
  } catch (err) {
    if (isMcpfleetError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("no error");
}

/** Writes `mb` megabytes that do not repeat from one megabyte to the next. */
function writeLarge(file: string, mb: number): void {
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(1024 * 1024, "x");
  for (let i = 0; i < mb; i++) {
    chunk.write(`block ${i}\n`, 0);
    writeSync(fd, chunk);
  }
  closeSync(fd);
}

describe("reading a tree from the object store", () => {
  it("reads what git reads: loose, packed, offset-delta and reference-delta objects", () => {
    const work = tmp("objects");
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i}: ${"x".repeat(40)}`);
    const commits = [makeRepo(work, { "fleet/a.yaml": lines.join("\n") })];
    // Small edits of one file make deltas once packed.
    for (let v = 1; v < 12; v++) {
      lines[v * 7] = `changed in version ${v}`;
      commits.push(
        commitFiles(
          work,
          { "fleet/a.yaml": lines.join("\n"), [`fleet/v${v}/b.json`]: `{"v": ${v}}` },
          `v${v}`,
        ),
      );
    }
    const expected = (c: string) =>
      gitCmd(work, "ls-tree", "-r", "--name-only", c, "fleet")
        .split("\n")
        .map((name) => ({ name, text: gitCmd(work, "show", `${c}:${name}`) }));
    const check = () => {
      for (const c of commits) {
        const got = read(work, c, "fleet").files.map((f) => ({ ...f, text: f.text.trimEnd() }));
        expect(got).toEqual(expected(c));
      }
    };
    check(); // loose objects
    gitCmd(work, "repack", "-adfq", "--depth=50", "--window=50");
    check(); // one pack, offset deltas
    gitCmd(work, "-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq");
    check(); // reference deltas
    const objects = gitCmd(work, "count-objects", "-v");
    expect(objects).toMatch(/^count: 0$/m);
  });

  it("walks the tree in the order `mcpfleet validate` walks the same directory", () => {
    const work = tmp("order");
    const files: Record<string, string> = {};
    for (const name of ["a.yaml", "a/b.yaml", "a-b.yaml", "B.yaml", "a0.json", "z/y/x.yml"]) {
      files[`fleet/${name}`] = "k: v\n";
    }
    files["fleet/.hidden/c.yaml"] = "k: v\n";
    files["fleet/node_modules/d.json"] = "{}";
    files["fleet/notes.txt"] = "not a resource\n";
    const head = makeRepo(work, files);
    const walked = collectInputs([join(work, "fleet")]).map((i) =>
      isInputError(i) ? i.error : i.name.slice(work.length + 1),
    );
    expect(read(work, head, "fleet").files.map((f) => f.name)).toEqual(walked);
  });

  it("reads a directory 1,500 levels deep, too deep for a work tree on disk", () => {
    const work = tmp("deep");
    makeRepo(work, { "README.md": "deep\n" });
    // Its path is longer than a file system takes: made with fast-import, not files.
    const path = `fleet/${Array.from({ length: 1500 }, (_, i) => `level-${i}`).join("/")}/a.yaml`;
    const stream = [
      "commit refs/heads/main",
      "committer Test <test@example.com> 0 +0000",
      "data 4",
      "deep",
      "from refs/heads/main^0",
      `M 100644 inline ${path}`,
      "data 5",
      "a: 1",
      "",
    ].join("\n");
    execFileSync("git", ["fast-import", "--quiet"], { cwd: work, input: stream });
    const head = gitCmd(work, "rev-parse", "main");
    expect(read(work, head, "fleet").files).toEqual([{ name: path, text: "a: 1\n" }]);
  });
});

describe("sizes checked before inflating", () => {
  it("never inflates a file that is not a resource, however large", () => {
    const work = tmp("large");
    makeRepo(work, { "fleet/a.yaml": "a: 1\n" });
    mkdirSync(join(work, "fleet", "data"));
    writeLarge(join(work, "fleet", "data", "model.bin"), 200);
    const head = commitFiles(work, { "fleet/b.yaml": "b: 1\n" }, "add a large file");
    for (const packed of [false, true]) {
      if (packed) gitCmd(work, "gc", "-q");
      const r = read(work, head, "fleet");
      expect(r.files.map((f) => f.name)).toEqual(["fleet/a.yaml", "fleet/b.yaml"]);
      // Commit, trees and two small blobs: nowhere near the 200 MB file.
      expect(r.inflated).toBeLessThan(64 * 1024);
    }
  });

  it("refuses a resource file over the limit by name, without inflating it", async () => {
    const work = tmp("too-large");
    makeRepo(work, { "fleet/a.yaml": "a: 1\n" });
    writeLarge(join(work, "fleet", "huge.yaml"), 3);
    const head = commitFiles(work, {}, "add a large resource file");
    for (const packed of [false, true]) {
      if (packed) gitCmd(work, "gc", "-q");
      const store = new ObjectStore(join(work, ".git"));
      const tree = subtree(store, commitTree(store, head), "fleet")!;
      const err = await failure(() =>
        readResourceTree(store, tree, { path: "fleet", maxFileBytes: 1024 * 1024 }),
      );
      expect(err.code).toBe("ERR_INVALID_RESOURCES");
      expect(err.message).toMatch(/^fleet\/huge\.yaml: file is larger than the .* limit/);
      expect(err.message).toContain(`it is ${3 * 1024 * 1024} bytes and was not read`);
      expect(store.inflatedBytes).toBeLessThan(64 * 1024);
      store.close();
    }
    // Through the controller's source: the revision fails at checkout with the same line.
    const src = new GitSource({
      url: pathToFileURL(work).href,
      ref: { branch: "main" },
      path: "fleet",
      cacheDir: tmp("cache"),
      maxFileBytes: 1024 * 1024,
    });
    const rev = await src.resolve();
    const viaSource = await failure(() => src.checkout(rev));
    expect(viaSource.code).toBe("ERR_INVALID_RESOURCES");
    expect(viaSource.message).toMatch(/fleet\/huge\.yaml: file is larger than/);
  });

  it("refuses a resource file that is not text, naming it", async () => {
    const work = tmp("binary");
    const head = makeRepo(work, { "fleet/a.yaml": "a: 1\n", "fleet/b.yaml": "a\0b" });
    const err = await failure(() => read(work, head, "fleet"));
    expect(err.code).toBe("ERR_INVALID_RESOURCES");
    expect(err.message).toMatch(/^fleet\/b\.yaml: .*; the revision is refused$/);
  });
});

describe("nothing outside the repository", () => {
  it("follows no symbolic link, in or out, and warns once for each that names a resource", () => {
    const outside = tmp("outside");
    writeFileSync(join(outside, "secret.yaml"), "stolen: true\n");
    const work = tmp("links");
    makeRepo(work, { "fleet/a.yaml": "a: 1\n", "other/b.yaml": "b: 1\n" });
    symlinkSync(join(outside, "secret.yaml"), join(work, "fleet", "absolute.yaml"));
    symlinkSync("../../../../../../../../../etc/passwd", join(work, "fleet", "up.yaml"));
    symlinkSync("../other", join(work, "fleet", "sibling"));
    symlinkSync("a.yaml", join(work, "fleet", "inside.yaml"));
    const head = commitFiles(work, {}, "links");
    const r = read(work, head, "fleet");
    expect(r.files).toEqual([{ name: "fleet/a.yaml", text: "a: 1\n" }]);
    expect(r.warnings).toEqual([
      "fleet/absolute.yaml: symbolic link not followed (only files are read)",
      "fleet/inside.yaml: symbolic link not followed (only files are read)",
      "fleet/up.yaml: symbolic link not followed (only files are read)",
    ]);
  });

  it("refuses a tree that names `..`, and a --path that leaves the repository", async () => {
    const work = tmp("dotdot");
    makeRepo(work, { "fleet/a.yaml": "a: 1\n" });
    const blob = gitCmd(work, "hash-object", "-w", "fleet/a.yaml");
    const mktree = (entry: string) =>
      execFileSync("git", ["mktree"], { cwd: work, input: `${entry}\n` })
        .toString()
        .trim();
    const inner = mktree(`100644 blob ${blob}\tx.yaml`);
    const evil = mktree(`040000 tree ${inner}\t..`);
    const fleet = mktree(`040000 tree ${evil}\tfleet`);
    const commit = gitCmd(work, "commit-tree", fleet, "-m", "crafted");
    const err = await failure(() => read(work, commit, "fleet"));
    expect(err.code).toBe("ERR_INVALID_RESOURCES");
    expect(err.message).toBe(
      'fleet: tree entry ".." is not a name git allows; the revision is refused',
    );
    const cacheDir = tmp("cache");
    const url = pathToFileURL(work).href;
    for (const path of ["..", "fleet/../..", "../outside"]) {
      const e = await failure(() => new GitSource({ url, ref: {}, path, cacheDir }));
      expect(e.code).toBe("ERR_USAGE");
    }
  });
});

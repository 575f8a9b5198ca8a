// Commands that write never destroy input: each case a user hit with the old `synth -o DIR`
// (which replaced DIR wholesale), as a process in a directory of its own.
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OUTPUT_MANIFEST, writeOutputDir } from "../../src/synth/output-dir.js";
import { DirTarget } from "../../src/controller/render-target.js";
import { examples, runCli } from "./helpers.js";

const GROUP = readFileSync(join(examples, "resources", "mcpgroup-engineering.yaml"), "utf8");

/** A directory holding a copy of examples/ and a note of the user's. */
function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcpfleet-out-"));
  cpSync(examples, join(dir, "examples"), { recursive: true });
  writeFileSync(join(dir, "notes.txt"), "mine\n");
  return dir;
}

function tree(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? tree(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
    )
    .sort();
}

function oneLine(text: string): string {
  const lines = text.trim().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("synth never deletes what it did not write", () => {
  it("refuses the current directory (synth examples -o .), and everything stays", async () => {
    const dir = workspace();
    const before = tree(dir);
    const r = await runCli(["synth", "examples", "-d", "."], { cwd: dir });
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toMatch(
      /--output-dir \.: refusing to write into the current directory/,
    );
    expect(tree(dir)).toEqual(before);
    // The deprecated spelling is refused the same way, after its warning.
    const old = await runCli(["synth", "examples", "-o", "."], { cwd: dir });
    expect(old.status).toBe(2);
    expect(old.stderr).toContain("-o DIR is deprecated");
    expect(tree(dir)).toEqual(before);
  });

  it("refuses an input directory and a directory holding an input", async () => {
    const dir = workspace();
    const before = tree(dir);
    const same = await runCli(["synth", "examples", "-d", "examples"], { cwd: dir });
    expect(same.status).toBe(2);
    expect(oneLine(same.stderr)).toContain("is the input examples");
    const inner = join(dir, "examples", "resources");
    const parent = await runCli(["synth", inner, "-d", join(dir, "examples")], { cwd: tmpdir() });
    expect(parent.status).toBe(2);
    expect(oneLine(parent.stderr)).toContain("holds the input");
    const up = await runCli(["synth", "examples", "-d", ".."], { cwd: join(dir, "examples") });
    expect(up.status).toBe(2);
    expect(tree(dir)).toEqual(before);
  });

  it("refuses a file, a device and a pipe (-o some-file.yaml, /dev/null, /dev/stdout)", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "some-file.yaml"), GROUP);
    const file = await runCli(["synth", "examples", "-d", "some-file.yaml"], { cwd: dir });
    expect(file.status).toBe(2);
    expect(oneLine(file.stderr)).toContain("some-file.yaml: is an existing file");
    expect(readFileSync(join(dir, "some-file.yaml"), "utf8")).toBe(GROUP);
    const device = await runCli(["synth", "examples", "-d", "/dev/null"], { cwd: dir });
    expect(device.status).toBe(2);
    expect(oneLine(device.stderr)).toContain("/dev/null: is a device");
    // Standard output of the child is a pipe here; as root the old code replaced the link.
    const stdout = await runCli(["synth", "examples", "-d", "/dev/stdout"], { cwd: dir });
    expect(stdout.status).toBe(2);
    expect(oneLine(stdout.stderr)).toMatch(
      /\/dev\/stdout: is (a pipe|a socket|a device|an existing file)/,
    );
    expect(lstatSync("/dev/stdout").isSymbolicLink()).toBe(true);
  });

  it("refuses a non-empty directory it did not write unless --force, which keeps its files", async () => {
    const dir = workspace();
    mkdirSync(join(dir, "deploy"));
    writeFileSync(join(dir, "deploy", "kustomization.yaml"), "resources: []\n");
    const r = await runCli(["synth", "examples", "-d", "deploy"], { cwd: dir });
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toContain("non-empty directory that mcpfleet did not write");
    expect(tree(join(dir, "deploy"))).toEqual(["kustomization.yaml"]);
    const forced = await runCli(["synth", "examples", "-d", "deploy", "--force"], { cwd: dir });
    expect(forced.status).toBe(0);
    expect(tree(join(dir, "deploy"))).toContain("kustomization.yaml");
    expect(tree(join(dir, "deploy"))).toContain("default.yaml");
  });

  it("removes only files an earlier run wrote, and refuses to overwrite a user's file", async () => {
    const dir = workspace();
    expect(
      (await runCli(["synth", "examples", "-d", "dist", "--install"], { cwd: dir })).status,
    ).toBe(0);
    const manifest = JSON.parse(readFileSync(join(dir, "dist", OUTPUT_MANIFEST), "utf8")) as {
      files: string[];
    };
    expect(manifest.files).toContain("install/00-crds.yaml");
    writeFileSync(join(dir, "dist", "mine.yaml"), "kept\n");
    // Only the examples/resources namespace now: the gitops namespaces' files go, mine stays.
    const again = await runCli(["synth", "examples/resources", "-d", "dist", "--no-install"], {
      cwd: dir,
    });
    expect(again.status).toBe(0);
    expect(tree(join(dir, "dist"))).toEqual([OUTPUT_MANIFEST, "default.yaml", "mine.yaml"]);
    // A file of ours by name that the user replaced with their own is not silently overwritten.
    writeFileSync(join(dir, "dist", OUTPUT_MANIFEST), JSON.stringify({ files: [] }));
    const clash = await runCli(["synth", "examples/resources", "-d", "dist", "--no-install"], {
      cwd: dir,
    });
    expect(clash.status).toBe(2);
    expect(oneLine(clash.stderr)).toContain("default.yaml exists and was not written by mcpfleet");
  });

  it("takes over the output of an earlier synth that wrote no manifest", async () => {
    const dir = workspace();
    // What synth wrote before output directories had a manifest.
    mkdirSync(join(dir, "dist", "install"), { recursive: true });
    for (const f of [
      "default.yaml",
      "gone.yaml",
      "install/00-crds.yaml",
      "install/01-controller.yaml",
    ]) {
      writeFileSync(join(dir, "dist", f), "kind: List\n");
    }
    const r = await runCli(["synth", "examples/resources", "-d", "dist", "--install"], {
      cwd: dir,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(tree(join(dir, "dist"))).toEqual([
      OUTPUT_MANIFEST,
      "default.yaml",
      "install/00-crds.yaml",
      "install/01-controller.yaml",
    ]);
    // A directory of other YAML (no install/00-crds.yaml) is still refused.
    mkdirSync(join(dir, "manifests"));
    writeFileSync(join(dir, "manifests", "app.yaml"), "kind: List\n");
    const other = await runCli(["synth", "examples/resources", "-d", "manifests"], { cwd: dir });
    expect(other.status).toBe(2);
    expect(tree(join(dir, "manifests"))).toEqual(["app.yaml"]);
  });

  it("writes each file atomically and leaves no temporary file behind", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "mcpfleet-out-")), "out");
    const files = new Map([
      ["a.yaml", "a: 1\n"],
      ["sub/b.yaml", "b: 2\n"],
    ]);
    const first = writeOutputDir(dir, files, { flag: "--output-dir", generator: "test" });
    expect(first.written).toEqual(["a.yaml", "sub/b.yaml"]);
    const second = writeOutputDir(dir, new Map([["a.yaml", "a: 2\n"]]), {
      flag: "--output-dir",
      generator: "test",
    });
    expect(second).toEqual({ written: ["a.yaml"], unchanged: [], removed: ["sub/b.yaml"] });
    // The emptied sub-directory went with its file; no .tmp files remain.
    expect(tree(dir)).toEqual([OUTPUT_MANIFEST, "a.yaml"]);
  });

  it("never follows a hand-edited manifest outside the directory", () => {
    const base = mkdtempSync(join(tmpdir(), "mcpfleet-out-"));
    writeFileSync(join(base, "victim.yaml"), "precious\n");
    const out = join(base, "out");
    mkdirSync(out);
    writeFileSync(
      join(out, OUTPUT_MANIFEST),
      JSON.stringify({ files: ["../victim.yaml", "/etc/hostname", "a.yaml"] }),
    );
    writeOutputDir(out, new Map([["b.yaml", "b\n"]]), { flag: "--output-dir", generator: "t" });
    expect(readFileSync(join(base, "victim.yaml"), "utf8")).toBe("precious\n");
    expect(existsSync("/etc/hostname")).toBe(true);
  });

  it("-o yaml and -o=json print to standard output and write no directory", async () => {
    const dir = workspace();
    const yaml = await runCli(["synth", "examples/resources", "-o", "yaml", "--install"], {
      cwd: dir,
    });
    expect(yaml.status).toBe(0);
    expect(yaml.stdout).toContain("kind: CustomResourceDefinition");
    expect(yaml.stdout.indexOf("kind: CustomResourceDefinition")).toBeLessThan(
      yaml.stdout.indexOf("kind: Deployment"),
    );
    const json = await runCli(["synth", "examples/resources", "-o=json"], { cwd: dir });
    expect(json.status).toBe(0);
    const list = JSON.parse(json.stdout) as { kind: string; items: { kind: string }[] };
    expect(list.kind).toBe("List");
    expect(list.items.some((i) => i.kind === "Deployment")).toBe(true);
    expect(existsSync(join(dir, "dist"))).toBe(false);
    expect(existsSync(join(dir, "=json"))).toBe(false);
  });
});

describe("the controller's dir: target follows the same rule", () => {
  it("refuses a non-empty directory it did not write and one holding its cache", () => {
    const base = mkdtempSync(join(tmpdir(), "mcpfleet-dir-target-"));
    mkdirSync(join(base, "manifests"));
    writeFileSync(join(base, "manifests", "hand-written.yaml"), GROUP);
    expect(() => new DirTarget(join(base, "manifests"))).toThrow(/did not write/);
    expect(() => new DirTarget(base, { inputs: [join(base, "cache")] })).toThrow(/holds the input/);
    expect(readFileSync(join(base, "manifests", "hand-written.yaml"), "utf8")).toBe(GROUP);
  });

  it("adopts the output of an earlier controller (revision.txt and manifests only)", () => {
    const out = join(mkdtempSync(join(tmpdir(), "mcpfleet-dir-target-")), "out");
    mkdirSync(out);
    writeFileSync(join(out, "revision.txt"), "abc\n");
    writeFileSync(join(out, "default.yaml"), GROUP);
    expect(() => new DirTarget(out)).not.toThrow();
    expect(existsSync(join(out, OUTPUT_MANIFEST))).toBe(true);
  });
});

import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { GitSource } from "../../src/infra/git/source.js";
import { textLogger } from "../../src/controller/logger.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import { DirTarget, REVISION_FILE } from "../../src/controller/render-target.js";
import { ControllerStatus } from "../../src/controller/status.js";
import { createApplier, parseTarget } from "../../src/controller/targets.js";
import { loadPaths } from "../../src/synth/load.js";
import { renderFiles } from "../../src/synth/output.js";
import { OUTPUT_MANIFEST } from "../../src/synth/output-dir.js";
import { commitFiles, exampleRepo, gitCmd, snapshot, tmp } from "./helpers.js";

function collectingLogger() {
  const lines: string[] = [];
  return { lines, log: textLogger((line) => lines.push(line)) };
}

function kindsAndNames(text: string): string[] {
  return parseAllDocuments(text).map((d) => {
    const o = d.toJS() as { kind: string; metadata: { name: string } };
    return `${o.kind}/${o.metadata.name}`;
  });
}

describe("render target through the reconciler", () => {
  let repo: { dir: string; head: string };
  let out: string;
  let reconciler: Reconciler;
  let status: ControllerStatus;
  const logs = collectingLogger();

  beforeAll(() => {
    repo = exampleRepo();
    out = join(tmp("out"), "rendered");
    const source = new GitSource({
      url: pathToFileURL(repo.dir).href,
      ref: { branch: "main" },
      path: "fleet",
      cacheDir: tmp("cache"),
    });
    const applier = new DirTarget(out);
    status = new ControllerStatus(source.refName, applier.target);
    reconciler = new Reconciler({ source, applier, status, log: logs.log });
  });

  it("writes the manifests synth writes for the same resources, plus revision.txt", async () => {
    const outcome = await reconciler.sync();
    expect(outcome.kind).toBe("applied");
    const files = snapshot(out);
    expect(files[REVISION_FILE]).toBe(`${repo.head}\n`);
    // The manifest of what the target wrote (so that it never removes anything else).
    expect(JSON.parse(files[OUTPUT_MANIFEST] ?? "{}")).toMatchObject({
      files: [...Object.keys(files)].filter((f) => f !== OUTPUT_MANIFEST).sort(),
    });
    delete files[OUTPUT_MANIFEST];
    const loaded = await loadPaths([join(repo.dir, "fleet")]);
    expect(loaded.valid).toBe(true);
    const expected = renderFiles(loaded.resources, undefined, { install: false }).files;
    expect(Object.keys(files).sort()).toEqual([...expected.keys(), REVISION_FILE].sort());
    for (const [name, text] of expected) expect(files[name], name).toBe(text);
    expect(kindsAndNames(files["default.yaml"] ?? "")).toContain("Deployment/github");
    expect(status.ready).toBe(true);
    expect(status.lastAppliedRevision).toBe(repo.head);
    expect(logs.lines.some((l) => /Deployment default\/github created/.test(l))).toBe(true);
  });

  it("skips a revision that is already applied, and rewrites nothing for a no-op commit", async () => {
    expect((await reconciler.sync()).kind).toBe("unchanged");
    const before = snapshot(out);
    const noop = commitFiles(repo.dir, { "README.md": "docs only\n" }, "docs only");
    const outcome = await reconciler.sync();
    expect(outcome.kind).toBe("applied");
    if (outcome.kind === "applied") {
      expect(outcome.result.applied).toBe(0);
      expect(outcome.result.pruned).toBe(0);
    }
    const after = snapshot(out);
    expect(after[REVISION_FILE]).toBe(`${noop}\n`);
    expect({ ...after, [REVISION_FILE]: "" }).toEqual({ ...before, [REVISION_FILE]: "" });
  });

  it("keeps the previous output intact when a revision is invalid, naming file and line", async () => {
    const before = snapshot(out);
    const good = status.lastAppliedRevision;
    const server = readFileSync(join(repo.dir, "fleet", "mcpserver-github.yaml"), "utf8");
    const broken = commitFiles(
      repo.dir,
      {
        "fleet/mcpserver-github.yaml": server.replace("proxyPort: 8080", "proxyPort: 99999"),
        "fleet/zz-not-yaml.yaml": "kind: [unclosed\n",
      },
      "break two files",
    );
    const outcome = await reconciler.sync();
    expect(outcome.kind).toBe("invalid");
    if (outcome.kind !== "invalid") return;
    expect(outcome.errors.some((e) => /^fleet\/mcpserver-github\.yaml:\d+:\d+: /.test(e))).toBe(
      true,
    );
    expect(outcome.errors.some((e) => /proxyPort/.test(e))).toBe(true);
    expect(
      outcome.errors.some((e) => /^fleet\/zz-not-yaml\.yaml:\d+:\d+: .*\(parse\)$/.test(e)),
    ).toBe(true);
    expect(snapshot(out)).toEqual(before);
    expect(status.lastAppliedRevision).toBe(good);
    expect(status.lastAttemptedRevision).toBe(broken);
    expect(status.lastError?.message).toMatch(/is invalid and was not applied/);
    expect(status.lastError?.message).toContain(`${good?.slice(0, 12)} stays in place`);
    // Reported once: the same broken revision is not validated again on the next poll.
    expect((await reconciler.sync()).kind).toBe("unchanged");
    const parent = readdirSync(join(out, ".."));
    expect(parent).toEqual(["rendered"]);
  });

  it("removing a resource removes its objects; fixing the repository converges", async () => {
    gitCmd(repo.dir, "rm", "-q", "fleet/zz-not-yaml.yaml", "fleet/mcpserver-stdio.yaml");
    gitCmd(repo.dir, "checkout", "-q", "HEAD~1", "--", "fleet/mcpserver-github.yaml");
    const fixed = commitFiles(repo.dir, { "fleet/.keep": "" }, "fix github, remove time server");
    const outcome = await reconciler.sync();
    expect(outcome.kind).toBe("applied");
    if (outcome.kind !== "applied") return;
    expect(outcome.result.pruned).toBeGreaterThan(0);
    expect(
      outcome.result.changes.filter((c) => c.action === "pruned").map((c) => c.object),
    ).toContain("Deployment default/time");
    const files = snapshot(out);
    expect(files[REVISION_FILE]).toBe(`${fixed}\n`);
    expect(kindsAndNames(files["default.yaml"] ?? "")).not.toContain("Deployment/time");
    expect(kindsAndNames(files["default.yaml"] ?? "")).toContain("Deployment/github");
    expect(status.lastError).toBeUndefined();
  });

  it("a dry run reports changes and writes nothing", async () => {
    const source = new GitSource({
      url: pathToFileURL(repo.dir).href,
      ref: { branch: "main" },
      path: "fleet",
      cacheDir: tmp("cache"),
    });
    const empty = join(tmp("dry"), "out");
    const applier = new DirTarget(empty);
    const dryStatus = new ControllerStatus(source.refName, applier.target);
    const r = new Reconciler({
      source,
      applier,
      status: dryStatus,
      dryRun: true,
      driftIntervalMs: 1,
    });
    const outcome = await r.sync();
    expect(outcome.kind).toBe("dry-run");
    if (outcome.kind === "dry-run") expect(outcome.result.applied).toBeGreaterThan(10);
    expect(existsSync(empty)).toBe(false);
    expect(dryStatus.ready).toBe(true);
    expect(dryStatus.lastAppliedRevision).toBeUndefined();
    expect((await r.sync()).kind).toBe("unchanged");
  });
});

describe("targets", () => {
  it("parses --target; the cluster target needs a readable kubeconfig", () => {
    expect(parseTarget("cluster")).toEqual({ kind: "cluster" });
    expect(parseTarget("dir:out/x")).toEqual({ kind: "dir", path: "out/x" });
    for (const bad of ["dir:", "directory:x", "", "Cluster"]) {
      expect(() => parseTarget(bad), bad).toThrow(/--target must be/);
    }
    const cluster = { fieldManager: "mcpfleet", prune: false, forceRecreate: false };
    expect(() =>
      createApplier({ kind: "cluster" }, { ...cluster, kubeconfig: "/nonexistent/kc" }),
    ).toThrow(expect.objectContaining({ code: "ERR_IO" }));
    expect(createApplier({ kind: "dir", path: "x" }, cluster).target).toBe("dir:x");
  });
});

import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll } from "vitest";
import { commitFiles, gitCmd, makeRepo } from "../support/git-server.js";

export const EXAMPLES = join(import.meta.dirname, "..", "..", "examples", "resources");

const created: string[] = [];

/** A fresh temporary directory, removed when the test file is done. */
export function tmp(p: string): string {
  const dir = mkdtempSync(join(tmpdir(), `mcpfleet-ctl-${p}-`));
  created.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A work repository whose `fleet/` directory holds every example resource; returns its path. */
export function exampleRepo(): { dir: string; head: string } {
  const dir = tmp("repo");
  const files: Record<string, string> = { "README.md": "GitOps test repository\n" };
  for (const f of readdirSync(EXAMPLES)) {
    files[`fleet/${f}`] = readFileSync(join(EXAMPLES, f), "utf8");
  }
  const head = makeRepo(dir, files);
  return { dir, head };
}

export { commitFiles, gitCmd };

/**
 * Commits a change of the example fetch server's log level (info to debug) to a repository made
 * by exampleRepo(): a new revision that changes one rendered object. Returns the commit.
 */
export function commitDebugLogLevel(dir: string): string {
  const path = "fleet/mcpserver-streamable-http.yaml";
  const text = readFileSync(join(dir, path), "utf8").replace("value: info", "value: debug");
  return commitFiles(dir, { [path]: text }, "debug");
}

/** `controller` arguments that render a repository's `fleet/` into a directory. */
export function dirTargetArgs(repoDir: string, out: string, cacheDir: string): string[] {
  return [
    "--target",
    `dir:${out}`,
    "--repo",
    pathToFileURL(repoDir).href,
    "--path",
    "fleet",
    "--cache-dir",
    cacheDir,
  ];
}

/** Every file of a directory tree, by relative path. */
export function snapshot(dir: string, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix === "" ? e.name : `${prefix}/${e.name}`;
    if (e.isDirectory()) Object.assign(out, snapshot(join(dir, e.name), rel));
    else out[rel] = readFileSync(join(dir, e.name), "utf8");
  }
  return out;
}

export function copyExamples(dest: string): void {
  cpSync(EXAMPLES, dest, { recursive: true });
}

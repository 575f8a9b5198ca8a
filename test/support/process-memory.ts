// Peak memory of this process and of the git processes it starts, as a pod's memory limit
// counts them: this process's resident set, plus that of every descendant of a `git` this
// process started leading its own process group (the git layer runs each fetch so; a test's git
// server runs its git processes in this process's group, so they are not counted).
// Also a large, incompressible file made quickly, and a repository holding it.
import { execFileSync } from "node:child_process";
import { createCipheriv, randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { once } from "node:events";

const PAGE = 4096;

/** Children of a process, from every one of its threads (the kernel lists them per thread). */
function childrenOf(pid: number | "self"): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const task of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      if (text !== "") for (const c of text.split(" ")) out.push(Number(c));
    } catch {
      // the thread or process is gone
    }
  }
  return out;
}

/** The process group and command name of a process. */
function groupOf(pid: number): { pgrp: number; comm: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    return { comm: stat.slice(stat.indexOf("(") + 1, close), pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/** Peak resident set (VmHWM) of a process, in bytes; 0 once it is gone. */
function peakRss(pid: number): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m === null ? 0 : Number(m[1]) * 1024;
  } catch {
    return 0;
  }
}

function rss(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * PAGE;
  } catch {
    return 0;
  }
}

/**
 * Sum of the peak resident sets of the git process groups this process started: its `git`
 * children leading their own group, and their descendants. Only those are read, so sampling
 * often makes little garbage in this process (it is measured too).
 */
function gitChildren(): number {
  let sum = 0;
  const pending = childrenOf("self").filter((pid) => {
    const g = groupOf(pid);
    return g !== undefined && g.pgrp === pid && g.comm === "git";
  });
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    sum += peakRss(pid);
    pending.push(...childrenOf(pid));
  }
  return sum;
}

export interface MemoryPeak {
  /** Resident set of this process when sampling started, in bytes. */
  baseline: number;
  /** Highest resident set of this process seen, in bytes. */
  self: number;
  /** Highest total peak resident set of its git process groups at one time, in bytes. */
  children: number;
  /** What the work added at its peak: self + children - baseline, in MB. */
  addedMb: number;
}

/**
 * Runs `work` while sampling memory every few milliseconds (and reading each process's own
 * high-water mark, so a short burst between samples is not missed).
 */
export async function measurePeak<T>(
  work: () => Promise<T>,
): Promise<{ result: T; peak: MemoryPeak }> {
  globalThis.gc?.();
  const baseline = rss(process.pid);
  const maxBefore = process.resourceUsage().maxRSS * 1024;
  let self = baseline;
  let children = 0;
  const sample = () => {
    self = Math.max(self, rss(process.pid));
    children = Math.max(children, gitChildren());
  };
  const timer = setInterval(sample, 20);
  try {
    const result = await work();
    sample();
    const maxAfter = process.resourceUsage().maxRSS * 1024;
    // The process's own high-water mark, when the work raised it past any earlier peak.
    if (maxAfter > maxBefore) self = Math.max(self, maxAfter);
    const addedMb = (self + children - baseline) / (1024 * 1024);
    return { result, peak: { baseline, self, children, addedMb } };
  } finally {
    clearInterval(timer);
  }
}

/** Writes `bytes` of incompressible data quickly (AES-CTR over zeros). */
export async function writeRandomFile(path: string, bytes: number): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const cipher = createCipheriv("aes-128-ctr", randomBytes(16), randomBytes(16));
  const out = createWriteStream(path);
  const zeros = Buffer.alloc(1024 * 1024);
  for (let left = bytes; left > 0; left -= zeros.length) {
    const chunk = cipher.update(left >= zeros.length ? zeros : zeros.subarray(0, left));
    if (!out.write(chunk)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
};

/**
 * A work repository on branch `main` with `files` and a `bigBytes` incompressible file at
 * `bigPath`, committed once. The large file goes straight into a pack, stored without
 * compression (it would not shrink), so making the repository takes seconds.
 */
export async function makeRepoWithBigFile(
  dir: string,
  files: Record<string, string>,
  bigPath: string,
  bigBytes: number,
): Promise<string> {
  const { makeRepo } = await import("./git-server.js");
  makeRepo(dir, files);
  await writeRandomFile(join(dir, bigPath), bigBytes);
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", dir, ...args], { env: { ...process.env, ...GIT_ENV } })
      .toString()
      .trim();
  git("-c", "core.bigFileThreshold=1m", "-c", "core.compression=0", "add", bigPath);
  git("commit", "-q", "-m", "a large file beside the resources");
  return git("rev-parse", "HEAD");
}

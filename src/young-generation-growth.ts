// The growth factor of V8's young generation, as this process sets it (infra/young-generation.ts
// holds the young generation small and lets it grow to a cap), and the one it is read as while
// a code cache is made or taken. V8 takes a code cache only with the flags it was made with,
// and this flag changes during a run: a module first loaded after the young generation began to
// grow would refuse the cache the previous run wrote, and write it again, every run.
import { setFlagsFromString } from "node:v8";

/** What a code cache is made and taken with: the young generation held. */
const CANONICAL = 1;

/** The factor this process set last; undefined while it has set none (V8's own, or Node's flag). */
let current: number | undefined;

/** Sets the young generation's growth factor (1: held where it is). */
export function setYoungGenerationGrowth(factor: number): void {
  current = factor;
  setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}

/** Whether the command line or NODE_OPTIONS gives a V8 flag of this family: theirs stands. */
export function nodeFlagGiven(family: string): boolean {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ");
  return given.includes(family);
}

/** V8's own growth factor (--semi-space-growth-factor's default). */
export const V8_GROWTH_FACTOR = 2;

/**
 * Runs `f` (compiling with a code cache, or making one) with the growth factor every cache is
 * made with, then sets back the one in force: V8's own in a process that never set one. So a
 * cache made by any command (or at build time, for the single executable) is taken by any
 * other, whether it holds the young generation or not. A factor given to Node stands.
 */
export function withCodeCacheFlags<T>(f: () => T): T {
  if (current === CANONICAL || nodeFlagGiven("semi-space-growth-factor")) return f();
  setFlagsFromString(`--semi-space-growth-factor=${CANONICAL}`);
  try {
    return f();
  } finally {
    setFlagsFromString(`--semi-space-growth-factor=${current ?? V8_GROWTH_FACTOR}`);
  }
}

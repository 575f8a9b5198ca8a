// Which version of a name is the latest: semver order, stable releases before pre-releases,
// deleted versions never.
// The three functions alone: the package's index loads some fifty modules at start.
import compare from "semver/functions/compare.js";
import prerelease from "semver/functions/prerelease.js";
import valid from "semver/functions/valid.js";

/** Compares versions: semver when both are valid, else plain text order. */
export function compareVersions(a: string, b: string): number {
  const va = valid(a);
  const vb = valid(b);
  if (va !== null && vb !== null) return compare(va, vb);
  if (va !== null) return 1;
  if (vb !== null) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The latest of some versions: the highest semver, pre-releases only when nothing else. */
export function latestVersion(versions: string[]): string | undefined {
  const stable = versions.filter((v) => valid(v) !== null && prerelease(v) === null);
  const pool = stable.length > 0 ? stable : versions;
  let best: string | undefined;
  for (const v of pool) if (best === undefined || compareVersions(v, best) > 0) best = v;
  return best;
}

/** The versions that may be latest: every one not deleted. */
export function liveVersions(rows: readonly { version: string; status: string }[]): string[] {
  return rows.filter((r) => r.status !== "deleted").map((r) => r.version);
}

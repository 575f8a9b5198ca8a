// ../shared/data: public material of other projects (reference resources, peer tests, official
// schemas) that tests read in place, never copied into the repository. A clone of the repository
// alone has no such directory: the tests that need it are skipped, each file saying so in one
// line, unless REQUIRE_SHARED_DATA=1 (CI), which makes its absence a failure.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "vitest";

export const SHARED_DATA = resolve(import.meta.dirname, "..", "..", "..", "shared", "data");

/** A directory or file under ../shared/data. */
export function sharedPath(...parts: string[]): string {
  return join(SHARED_DATA, ...parts);
}

/**
 * True when `path` (under ../shared/data) is there. When it is not, says so in one line (which
 * tests of `what` are skipped), or fails when REQUIRE_SHARED_DATA=1.
 */
export function hasSharedData(path: string, what: string): boolean {
  if (existsSync(path)) return true;
  const reason = `${path} is absent (public test data kept beside the repository)`;
  if (process.env.REQUIRE_SHARED_DATA === "1") {
    throw new Error(`REQUIRE_SHARED_DATA=1: ${reason}`);
  }
  console.warn(`SKIPPED ${what}: ${reason}`);
  return false;
}

/** `describe` for tests that all read `path`: when it is absent, one skipped test says why. */
export function describeWithSharedData(name: string, path: string, body: () => void): void {
  if (hasSharedData(path, `"${name}"`)) {
    describe(name, body);
    return;
  }
  describe(name, () => {
    it.skip(`needs ${path}`, () => undefined);
  });
}

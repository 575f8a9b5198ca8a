// Reads a ref of a local repository (loose ref files, symbolic refs and packed-refs) without
// running git: a file:// repository is read in place, and one poll costs a few small reads.
import * as fs from "node:fs";
import { join } from "node:path";

const SHA = /^[0-9a-f]{40}$/;

function readIfExists(path: string): string | undefined {
  try {
    return fs.readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function packedRef(gitdir: string, ref: string): string | undefined {
  const packed = readIfExists(join(gitdir, "packed-refs"));
  if (packed === undefined) return undefined;
  for (const line of packed.split("\n")) {
    const space = line.indexOf(" ");
    if (space === 40 && line.slice(space + 1) === ref) return line.slice(0, 40);
  }
  return undefined;
}

/**
 * The object `ref` (`HEAD`, `refs/heads/main`, ...) names in `gitdir`, following symbolic
 * refs; undefined when there is no such ref.
 */
export function readRef(gitdir: string, ref: string): string | undefined {
  let current = ref;
  for (let depth = 0; depth < 5; depth++) {
    if (current.split("/").some((part) => part === ".." || part === "")) return undefined;
    const text = readIfExists(join(gitdir, current))?.trim();
    if (text === undefined) return packedRef(gitdir, current);
    if (SHA.test(text)) return text;
    const target = /^ref: (\S+)$/.exec(text)?.[1];
    if (target === undefined) return undefined;
    current = target;
  }
  return undefined;
}

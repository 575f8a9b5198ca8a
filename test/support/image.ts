// The container image's runtime tree, built by the script the Dockerfile runs
// (scripts/image-tree.sh), and what a pod of that image is given: its files at /opt/mcpfleet,
// Node (the image's base layer) at /opt/node, the Dockerfile's entry point and environment.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, join } from "node:path";
import type { ImageSpec } from "./pod.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** What the image's tree is built from: the package's files, its sources and its lockfile. */
const INPUTS = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "scripts/image-tree.sh",
  "bin",
  "src",
  "schemas",
  "crds",
  "generated",
  "schemas-editor",
  "docs",
];

function digest(): string {
  const hash = createHash("sha256");
  const add = (path: string): void => {
    const full = join(ROOT, path);
    if (!existsSync(full)) return;
    if (statSync(full).isDirectory()) {
      for (const f of readdirSync(full).sort()) add(join(path, f));
    } else hash.update(path).update("\0").update(readFileSync(full)).update("\0");
  };
  for (const p of INPUTS) add(p);
  return hash.digest("hex").slice(0, 16);
}

/**
 * The image's tree (readable by the image's user), built once per content of its inputs and
 * kept in .tools/image-tree/: the test files that run it share one build.
 */
export function buildImageTree(): string {
  const cache = join(ROOT, ".tools", "image-tree");
  const tree = join(cache, digest());
  if (existsSync(join(tree, "package.json"))) return tree;
  mkdirSync(cache, { recursive: true });
  chmodSync(join(ROOT, ".tools"), 0o755);
  chmodSync(cache, 0o755);
  const partial = mkdtempSync(join(cache, "partial-"));
  chmodSync(partial, 0o755);
  const built = spawnSync("bash", [join(ROOT, "scripts", "image-tree.sh"), join(partial, "t")], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` },
    encoding: "utf8",
  });
  if (built.status !== 0) throw new Error(`scripts/image-tree.sh failed:\n${built.stderr}`);
  // Another test file may have finished the same build first: either tree will do.
  try {
    renameSync(join(partial, "t"), tree);
  } catch {
    if (!existsSync(join(tree, "package.json")))
      throw new Error(`cannot keep the image tree at ${tree}`);
  }
  rmSync(partial, { recursive: true, force: true });
  return tree;
}

/** The pod's view of the image whose tree is `tree`: the Dockerfile's ENTRYPOINT, ENV, WORKDIR. */
export function mcpfleetImage(tree: string): ImageSpec {
  return {
    files: { "/opt/mcpfleet": tree, "/opt/node": dirname(dirname(process.execPath)) },
    entrypoint: ["node", "/opt/mcpfleet/bin/mcpfleet.js"],
    env: {
      PATH: "/opt/node/bin:/usr/local/bin:/usr/bin:/bin",
      NODE_ENV: "production",
      TMPDIR: "/tmp",
      MCPFLEET_VALIDATE_SERVER: "off",
      HOME: "/tmp",
    },
    workingDir: "/opt/mcpfleet",
  };
}

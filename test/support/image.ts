// The container image's runtime tree, built by the script the Dockerfile runs
// (scripts/image-tree.sh), and what a pod of that image is given: its files at /opt/mcpfleet,
// Node (the image's base layer) at /opt/node, the Dockerfile's entry point and environment.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ImageSpec } from "./pod.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** Builds the image's tree into a new temporary directory (readable by the image's user). */
export function buildImageTree(): string {
  const base = mkdtempSync(join(tmpdir(), "mcpfleet-image-"));
  chmodSync(base, 0o755);
  const tree = join(base, "opt-mcpfleet");
  const built = spawnSync("bash", [join(ROOT, "scripts", "image-tree.sh"), tree], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` },
    encoding: "utf8",
  });
  if (built.status !== 0) throw new Error(`scripts/image-tree.sh failed:\n${built.stderr}`);
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
      HOME: "/tmp",
    },
    workingDir: "/opt/mcpfleet",
  };
}

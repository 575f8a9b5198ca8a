// The controller's cost of a new revision, from the commit to the rendered manifests (resolve,
// check out the watched path from the object store, validate, synthesize, write a dir: target):
// a watched path of 10,000 small resource files (target < 3 s) against `mcpfleet validate` of the
// same directory as a user runs it; a 1,500-deep directory holding one file (target < 2 s); and
// the memory a 200 MB file beside the resources costs (target: none, as it is never inflated).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { GitSource } from "../src/infra/git/source.js";
import { Reconciler } from "../src/controller/reconciler.js";
import { DirTarget } from "../src/controller/render-target.js";
import { ControllerStatus } from "../src/controller/status.js";
import { commitFiles, gitCmd, makeRepo } from "../test/support/git-server.js";

const FILES = 10_000;
const DEPTH = 1_500;
const BIG_MB = 200;
const ROOT = join(import.meta.dirname, "..");
// No automatic gc after a commit: it would run in the background while the revision is timed.
process.env.GIT_CONFIG_PARAMETERS = "'gc.auto=0'";
const dir = mkdtempSync(join(tmpdir(), "mcpfleet-bench-controller-checkout-"));

function toolConfig(i: number): string {
  return [
    "apiVersion: toolhive.stacklok.dev/v1alpha1",
    "kind: MCPToolConfig",
    "metadata:",
    `  name: tools-${i}`,
    `  namespace: team-${i % 10}`,
    "spec:",
    `  toolsFilter: [get_${i}, list_${i}]`,
    "",
  ].join("\n");
}

/** A controller watching `fleet` of the repository at `work`, rendering to a directory. */
function controller(work: string, name: string) {
  const source = new GitSource({
    url: pathToFileURL(work).href,
    ref: { branch: "main" },
    path: "fleet",
    cacheDir: join(dir, `${name}-cache`),
  });
  const target = new DirTarget(join(dir, `${name}-out`));
  const status = new ControllerStatus(source.refName, target.target);
  return new Reconciler({ source, applier: target, status });
}

/** Syncs and returns the seconds it took; throws unless the revision was applied. */
async function timedSync(reconciler: Reconciler): Promise<number> {
  const t = performance.now();
  const outcome = await reconciler.sync();
  const seconds = (performance.now() - t) / 1000;
  if (outcome.kind !== "applied") throw new Error(`sync: ${JSON.stringify(outcome)}`);
  return seconds;
}

/** Peak resident memory of this process so far, in MB. */
const peakMb = () => process.resourceUsage().maxRSS / 1024;

try {
  // First, while this process is small: the peak memory a 200 MB file adds to a new revision.
  const bigWork = join(dir, "big");
  makeRepo(bigWork, { "fleet/tools.yaml": toolConfig(0) });
  gitCmd(bigWork, "gc", "-q");
  const big = controller(bigWork, "big");
  await timedSync(big);
  mkdirSync(join(bigWork, "fleet/data"), { recursive: true });
  const fd = openSync(join(bigWork, "fleet/data/model.bin"), "w");
  // Random bytes: the pack holds all 200 MB, as it would for a model or an archive.
  for (let i = 0; i < BIG_MB; i++) writeSync(fd, randomBytes(1024 * 1024));
  closeSync(fd);
  commitFiles(bigWork, { "fleet/tools.yaml": toolConfig(1) }, "add a large file");
  gitCmd(bigWork, "gc", "-q");
  const before = peakMb();
  const bigSeconds = await timedSync(big);
  const grown = peakMb() - before;
  console.log(
    `bench: controller-checkout-large-file ${grown.toFixed(1)} MB ratio=${(grown / BIG_MB).toFixed(3)} (peak memory a new revision with a ${BIG_MB} MB file beside its resources adds / the file's size, target ~0; ${bigSeconds.toFixed(2)} s)`,
  );

  const files: Record<string, string> = { "README.md": "fleet\n" };
  for (let i = 0; i < FILES; i++) files[`fleet/team-${i % 10}/tools-${i}.yaml`] = toolConfig(i);
  const work = join(dir, "many");
  makeRepo(work, files);
  gitCmd(work, "gc", "-q"); // packed, as a clone is (and no background gc while timing)
  const many = controller(work, "many");
  await timedSync(many);
  commitFiles(work, { "fleet/team-0/tools-0.yaml": toolConfig(FILES) }, "one change");
  const renderSeconds = await timedSync(many);

  const t = performance.now();
  const validate = spawnSync(
    process.execPath,
    ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "validate", join(work, "fleet")],
    { cwd: ROOT, encoding: "utf8" },
  );
  const validateSeconds = (performance.now() - t) / 1000;
  if (validate.status !== 0) throw new Error(`mcpfleet validate: ${validate.stderr}`);
  console.log(
    `bench: controller-new-revision-10k-files ${renderSeconds.toFixed(2)} s ratio=${(renderSeconds / validateSeconds).toFixed(2)} (a new revision of ${FILES} small resource files checked out, validated, synthesized and written / \`mcpfleet validate\` of the same directory in ${validateSeconds.toFixed(2)} s; target < 3 s)`,
  );

  const deepWork = join(dir, "deep");
  const deepPath = `fleet/${Array.from({ length: DEPTH }, () => "d").join("/")}/tools.yaml`;
  makeRepo(deepWork, { [deepPath]: toolConfig(0) });
  gitCmd(deepWork, "gc", "-q");
  const deep = controller(deepWork, "deep");
  await timedSync(deep);
  commitFiles(deepWork, { [deepPath]: toolConfig(1) }, "one change");
  const deepSeconds = await timedSync(deep);
  console.log(
    `bench: controller-new-revision-deep-tree ${deepSeconds.toFixed(2)} s ratio=${(deepSeconds / 2).toFixed(2)} (a new revision of one file ${DEPTH} directories deep / the 2 s target)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

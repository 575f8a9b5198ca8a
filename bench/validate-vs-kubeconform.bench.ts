// `make bench`: `mcpfleet validate` against kubeconform, its closest peer, run as their users run
// them (the built CLI, kubeconform's binary built from its Go module by tools/kubeconform/build.sh),
// alternated in the same loop so that the shared machine's load colours both alike:
//   validate-vs-kubeconform-small  examples/ (40 resources), the pre-commit case: start-up, as a
//                                  developer's machine runs it (a validate server running)
//   validate-vs-kubeconform-small-edited  the same with one file changed before each run of ours,
//                                  as in a commit: that file is validated and the set rendered
//                                  again (the server keeps the verdicts on the files that did not)
//   validate-vs-kubeconform-small-cold  the same where no server is used (CI): a whole start
//   validate-vs-kubeconform-10k    the bench's 10,000-resource corpus (validate.bench.ts)
//   validate-peak-rss-10k          our peak resident memory on that corpus, against 100 MB
// kubeconform gets our CRDs converted to its schema files (bench/kubeconform-schemas.ts, unknown
// fields refused as ours are) and `-ignore-missing-schemas`: offline it has no schema of core
// kinds, which it then skips (examples/ has a few ConfigMaps that validate checks). It checks the
// schema level only; validate checks CEL rules and references too.
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopServer } from "../src/cli/validate-client.js";
import { kubeconformLocation, writeKubeconformSchemas } from "./kubeconform-schemas.js";

const ROOT = join(import.meta.dirname, "..");
const KUBECONFORM = join(ROOT, ".tools/kubeconform/current/bin/kubeconform");
const TIME = "/usr/bin/time";
const TARGET_RSS_MB = 100;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** Wall time in ms and, where /usr/bin/time is there, peak RSS in MB of one run. */
function run(cmd: string, args: string[], env = process.env): { ms: number; rssMb: number } {
  const timed = existsSync(TIME);
  const t = performance.now();
  const r = timed
    ? spawnSync(TIME, ["-f", "maxrss=%M", cmd, ...args], { cwd: ROOT, env, encoding: "utf8" })
    : spawnSync(cmd, args, { cwd: ROOT, env, encoding: "utf8" });
  const ms = performance.now() - t;
  // Both exit 1 for invalid resources (the corpus has some); anything else is a broken run.
  if (r.status !== 0 && r.status !== 1) {
    throw new Error(`${cmd} ${args.join(" ")} exited ${String(r.status)}: ${r.stderr}`);
  }
  const rss = /maxrss=(\d+)/.exec(r.stderr ?? "");
  return { ms, rssMb: rss === null ? NaN : Number(rss[1]) / 1024 };
}

/** Alternated runs of the two, `before` called (untimed) before each of ours; medians of each. */
function compare(
  ours: string[],
  theirs: string[],
  rounds: number,
  env: NodeJS.ProcessEnv,
  before: () => void = () => undefined,
): { ours: number; theirs: number; oursRss: number; theirsRss: number } {
  run(process.execPath, ours, env);
  run(KUBECONFORM, theirs);
  const a: { ms: number; rssMb: number }[] = [];
  const b: { ms: number; rssMb: number }[] = [];
  for (let i = 0; i < rounds; i++) {
    before();
    a.push(run(process.execPath, ours, env));
    b.push(run(KUBECONFORM, theirs));
  }
  return {
    ours: median(a.map((x) => x.ms)),
    theirs: median(b.map((x) => x.ms)),
    oursRss: median(a.map((x) => x.rssMb)),
    theirsRss: median(b.map((x) => x.rssMb)),
  };
}

/** Waits until a server listens in `dir` (the first run starts one as it exits). */
async function serverListening(dir: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const socket = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith(".sock")) : undefined;
    if (socket !== undefined) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no validate server started in ${dir}`);
}

async function stopServers(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  for (const socket of readdirSync(dir).filter((f) => f.endsWith(".sock"))) {
    await stopServer(join(dir, socket));
  }
}

if (!existsSync(KUBECONFORM)) {
  console.log(
    "bench: validate-vs-kubeconform skipped (no .tools/kubeconform; make bench builds it with Go >= 1.26)",
  );
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "mcpfleet-bench-kubeconform-"));
try {
  const schemas = join(work, "schemas");
  writeKubeconformSchemas(join(ROOT, "crds"), schemas);
  const corpus = join(work, "corpus");
  mkdirSync(corpus);
  const gen = spawnSync(
    process.execPath,
    ["--import", "tsx", join(ROOT, "bench/validate.bench.ts")],
    { env: { ...process.env, BENCH_CORPUS_DIR: corpus }, stdio: "inherit" },
  );
  if (gen.status !== 0) throw new Error("could not generate the corpus");
  // BENCH_CLI=path/to/bin/mcpfleet.js times another build (a worktree of an earlier commit).
  const cli = process.env.BENCH_CLI ?? join(ROOT, "bin/mcpfleet.js");
  const kc = (path: string) => [
    "-summary",
    "-ignore-missing-schemas",
    "-schema-location",
    kubeconformLocation(schemas),
    path,
  ];
  const rounds = Number(process.env.BENCH_ROUNDS ?? 7);

  // A validate server of the bench's own (XDG_RUNTIME_DIR), started by the first run as a
  // developer's first run starts it; CI turns servers off (docs/validate.md, "The validate server").
  const runtime = join(work, "runtime");
  mkdirSync(runtime, { mode: 0o700 });
  const served = { ...process.env, XDG_RUNTIME_DIR: runtime, MCPFLEET_VALIDATE_SERVER: "on" };
  const cold = { ...process.env, MCPFLEET_VALIDATE_SERVER: "off" };
  run(process.execPath, [cli, "validate", "examples"], served);
  await serverListening(join(runtime, "mcpfleet"));
  // Its first served run sets off its warm-up (src/cli/validate-server.ts), about a second of
  // CPU time in the background; measured after it, as a developer's next commit comes
  // seconds later, so that it does not slow kubeconform's runs beside ours.
  run(process.execPath, [cli, "validate", "examples"], served);
  await new Promise((r) => setTimeout(r, 3000));
  const small = compare([cli, "validate", "examples"], kc("examples"), rounds * 2, served);
  console.log(
    `bench: validate-vs-kubeconform-small ${Math.round(small.ours)} ms ratio=${(small.ours / small.theirs).toFixed(2)} ` +
      `(wall time of validate over kubeconform's on examples/ with a validate server running, ${Math.round(small.ours)} ms vs ` +
      `${Math.round(small.theirs)} ms, medians of ${rounds * 2} alternated runs; target <= 1.0)`,
  );
  // One file edited before each run: a new description of the MCPGroup, which synthesis renders.
  const edited = join(work, "edited");
  cpSync(join(ROOT, "examples"), edited, { recursive: true });
  const group = join(edited, "resources", "mcpgroup-engineering.yaml");
  const original = readFileSync(group, "utf8");
  let edits = 0;
  const edit = () =>
    writeFileSync(group, original.replace(/description: .*/, `description: edit ${++edits}`));
  const smallEdited = compare([cli, "validate", edited], kc(edited), rounds * 2, served, edit);
  console.log(
    `bench: validate-vs-kubeconform-small-edited ${Math.round(smallEdited.ours)} ms ratio=${(smallEdited.ours / smallEdited.theirs).toFixed(2)} ` +
      `(the same with one file changed before each run of ours, ${Math.round(smallEdited.ours)} ms vs ` +
      `${Math.round(smallEdited.theirs)} ms, medians of ${rounds * 2} alternated runs)`,
  );
  const smallCold = compare([cli, "validate", "examples"], kc("examples"), rounds * 2, cold);
  console.log(
    `bench: validate-vs-kubeconform-small-cold ${Math.round(smallCold.ours)} ms ratio=${(smallCold.ours / smallCold.theirs).toFixed(2)} ` +
      `(the same with no server, as in CI, ${Math.round(smallCold.ours)} ms vs ` +
      `${Math.round(smallCold.theirs)} ms, medians of ${rounds * 2} alternated runs)`,
  );
  // Served runs leave a large input to the client: this is a whole start either way.
  const big = compare([cli, "validate", corpus], kc(corpus), rounds, served);
  console.log(
    `bench: validate-vs-kubeconform-10k ${Math.round(big.ours)} ms ratio=${(big.ours / big.theirs).toFixed(2)} ` +
      `(wall time of validate over kubeconform's on 10,000 resources in 200 files, ` +
      `${Math.round(big.ours)} ms vs ${Math.round(big.theirs)} ms, medians of ${rounds} alternated runs; target < 1.0)`,
  );
  console.log(
    `bench: validate-peak-rss-10k ${Math.round(big.oursRss)} MB ratio=${(big.oursRss / TARGET_RSS_MB).toFixed(2)} ` +
      `(validate's peak resident memory on the 10,000 resources over the ${TARGET_RSS_MB} MB target, ` +
      `median of ${rounds} runs; kubeconform ${Math.round(big.theirsRss)} MB)`,
  );
} finally {
  await stopServers(join(work, "runtime", "mcpfleet"));
  rmSync(work, { recursive: true, force: true });
}

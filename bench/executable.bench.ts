// The single executable (`make release`, scripts/release.ts): its size, and its start-up next to
// the npm installation's. Reported: the file's size (ratio to the Node binary it is made of), the
// median wall time of `mcpfleet-linux-<arch> --version` (ratio to `node bin/mcpfleet.js
// --version`, target <= 1.2), and of a one-file validate, which loads the schemas and
// validators built into it (ratio to the same run through bin/mcpfleet.js).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { arch, tmpdir } from "node:os";
import { join } from "node:path";

const STARTUP_LIMIT = 1.2;
const RUNS = 21;
const root = join(import.meta.dirname, "..");
const out = mkdtempSync(join(tmpdir(), "bench-executable-"));

try {
  const built = spawnSync(
    process.execPath,
    ["--import", "tsx", join(root, "scripts", "release.ts"), "--out", out],
    { cwd: root, encoding: "utf8" },
  );
  if (built.status !== 0) throw new Error(`scripts/release.ts failed: ${built.stderr}`);
  const executable = join(out, `mcpfleet-linux-${arch()}`);
  const bin = join(root, "bin", "mcpfleet.js");
  const file = join(root, "examples", "resources", "mcpserver-sse.yaml");

  const sizeMb = statSync(executable).size / 2 ** 20;
  const nodeMb = statSync(process.execPath).size / 2 ** 20;
  console.log(
    `bench: executable-size ${sizeMb.toFixed(1)} MB ratio=${(sizeMb / nodeMb).toFixed(2)} ` +
      `(to the Node ${process.version} binary it is made of, ${nodeMb.toFixed(1)} MB)`,
  );

  const COLD = { ...process.env, MCPFLEET_VALIDATE_SERVER: "off" };
  /**
   * Median wall times of two commands, in ms, run in turns (so that the load of a shared machine
   * weighs on both alike), after one run each that warms the disk cache.
   */
  const medians = (a: string[], b: string[]): [number, number] => {
    const times: [number[], number[]] = [[], []];
    for (let i = 0; i <= RUNS; i++) {
      for (const [k, argv] of [a, b].entries()) {
        const t = performance.now();
        // Start-up is what is measured: no validate server answers for either.
        const r = spawnSync(argv[0]!, argv.slice(1), { cwd: out, env: COLD, encoding: "utf8" });
        const ms = performance.now() - t;
        if (r.status !== 0 && r.status !== 1) throw new Error(`${argv.join(" ")}: ${r.stderr}`);
        if (i > 0) times[k]!.push(ms);
      }
    }
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    return [median(times[0]), median(times[1])];
  };

  const [exeVersion, nodeVersion] = medians(
    [executable, "--version"],
    [process.execPath, bin, "--version"],
  );
  console.log(
    `bench: executable-startup ${Math.round(exeVersion)} ms ratio=${(exeVersion / nodeVersion).toFixed(2)} ` +
      `(--version, to node bin/mcpfleet.js --version at ${Math.round(nodeVersion)} ms; ` +
      `target <= ${STARTUP_LIMIT})`,
  );
  const [exeValidate, nodeValidate] = medians(
    [executable, "validate", "--allow-missing-refs", file],
    [process.execPath, bin, "validate", "--allow-missing-refs", file],
  );
  console.log(
    `bench: executable-validate-one-file ${Math.round(exeValidate)} ms ` +
      `ratio=${(exeValidate / nodeValidate).toFixed(2)} ` +
      `(to node bin/mcpfleet.js at ${Math.round(nodeValidate)} ms)`,
  );
} finally {
  rmSync(out, { recursive: true, force: true });
}

// `make bench`: runs every bench/*.bench.ts in its own process, one after another, so one
// benchmark's heap and JIT state never colour another's figures. Each prints lines of the form
// `bench: NAME VALUE UNIT ratio=R (WHAT THE RATIO COMPARES)`.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const dir = import.meta.dirname;
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const file of files) {
  const result = spawnSync(process.execPath, ["--import", "tsx", join(dir, file)], {
    stdio: "inherit",
  });
  if (result.status !== 0) {
    failed++;
    console.error(`bench: ${file} failed with exit code ${String(result.status)}`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;

#!/usr/bin/env node
// Entry point installed as `mcpfleet`; the CLI it runs is the bundle in build/cli/ (made from
// the compiled build/src by scripts/bundle.ts). The Node check runs
// before anything is imported: on an older Node the CLI's modules fail in ways that name no
// version (a missing node:sqlite, a method of undefined). Keep it equal to engines.node in
// package.json (test/cli/floor.test.ts checks both).
/* global process, console */
const FLOOR = [22, 20, 0];
const found = process.versions.node.split(".").map(Number);
const older = FLOOR.findIndex((n, i) => found[i] !== n);
if (older >= 0 && found[older] < FLOOR[older]) {
  console.error(
    `mcpfleet: needs Node >= ${FLOOR.join(".")}, found Node ${process.versions.node} (${process.execPath})`,
  );
  process.exit(1);
}
// Node's compile cache, on before the first module of ours loads (the CLI's main turns it on
// too, for the single executable, but by then the modules main imports were compiled without
// it). NODE_DISABLE_COMPILE_CACHE=1 turns it off; NODE_COMPILE_CACHE=DIR moves it.
const { default: nodeModule } = await import("node:module");
nodeModule.enableCompileCache?.();
// `validate` on a large input starts again with less memory; every validate run holds V8's
// young generation small while the CLI loads (src/cli/validate-launch.ts).
if (process.argv[2] === "validate") {
  const { prepareValidate } = await import("../build/cli/validate-launch.js");
  prepareValidate(process.argv.slice(2));
}
await import("../build/cli/main.js");

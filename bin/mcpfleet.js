#!/usr/bin/env node
// Entry point installed as `mcpfleet`; the CLI it runs is the bundle in build/cli/ (made from
// the compiled build/src by scripts/bundle.ts). The Node check runs
// before anything is imported: on an older Node the CLI's modules fail in ways that name no
// version (a missing node:sqlite, a method of undefined). Keep it equal to engines.node in
// package.json (test/cli/floor.test.ts checks both).
/* global process, console, URL */
const FLOOR = [22, 20, 0];
const found = process.versions.node.split(".").map(Number);
const older = FLOOR.findIndex((n, i) => found[i] !== n);
if (older >= 0 && found[older] < FLOOR[older]) {
  console.error(
    `mcpfleet: needs Node >= ${FLOOR.join(".")}, found Node ${process.versions.node} (${process.execPath})`,
  );
  process.exit(1);
}
const main = new URL("../build/cli/main.js", import.meta.url);
// `validate` goes to this installation's validate server when one runs (src/cli/validate-client.ts).
let served = false;
if (process.argv[2] === "validate") {
  const { validatedOnServer } = await import("../build/cli/validate-client.js");
  const { fileURLToPath } = await import("node:url");
  served = await validatedOnServer(process.argv.slice(3), fileURLToPath(main), [
    ...process.execArgv,
    process.argv[1],
  ]);
}
if (!served) {
  // Node's compile cache, on before the CLI's modules load (the CLI's main turns it on too, for
  // the single executable, but by then the modules main imports were compiled without it); not
  // for a served run, which loads one small module. NODE_DISABLE_COMPILE_CACHE=1 turns it off;
  // NODE_COMPILE_CACHE=DIR moves it.
  const { default: nodeModule } = await import("node:module");
  nodeModule.enableCompileCache?.();
  // validate on its own: a large input starts again with less memory, and every run holds V8's
  // young generation small while the CLI loads (src/cli/validate-launch.ts).
  if (process.argv[2] === "validate") {
    const { prepareValidate } = await import("../build/cli/validate-launch.js");
    prepareValidate(process.argv.slice(2));
  }
  await import(main.href);
}

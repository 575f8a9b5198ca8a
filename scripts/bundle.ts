// The CLI as bin/mcpfleet.js runs it: build/cli/, one ESM bundle of the compiled build/src and
// the packages it imports, split at every dynamic import so that a command loads its own code
// only. A registry server's start loaded some 400 modules one by one (Node resolves, reads and
// links each: about a third of its start); it now loads a handful of files.
// build/src stays the package's library and what the tests import; `make build` and `npm pack`
// (prepack) run this after tsc.
//
//   node --import tsx scripts/bundle.ts [--build DIR]     (DIR: tsc's output, default build/)
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build, type BuildOptions } from "esbuild";
import { projectRoot } from "../src/project.js";
import { userlandPunycode } from "./userland-punycode.js";

const { values } = parseArgs({ options: { build: { type: "string" } } });
const buildDir = resolve(values.build ?? join(projectRoot(), "build"));
const outdir = join(buildDir, "cli");

rmSync(outdir, { recursive: true, force: true });
const shared: BuildOptions = {
  bundle: true,
  format: "esm",
  platform: "node",
  // engines.node's floor (test/cli/floor.test.ts runs the bundle there).
  target: "node22",
  plugins: [userlandPunycode(projectRoot())],
  logLevel: "warning",
};
const result = await build({
  ...shared,
  entryPoints: ["main", "validate-launch"].map((e) => join(buildDir, "src", "cli", `${e}.js`)),
  outdir,
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  // CommonJS packages inside an ES module still call require() for Node's built-ins and for
  // what is resolved at run time (kubernetes-models' schemas, the yaml package on demand).
  banner: {
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
});
// The validate server's client, the first module of every validate run: one file, all of it
// used, which Node loads faster than the same code split into chunks.
const client = await build({
  ...shared,
  entryPoints: [join(buildDir, "src", "cli", "validate-client.js")],
  outdir,
});
if (result.errors.length > 0 || client.errors.length > 0) process.exit(1);

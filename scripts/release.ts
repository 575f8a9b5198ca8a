// `make release`: the single executable, release/mcpfleet-linux-<arch>: one file that runs every
// command with no Node installed (docs/install.md). Node's single executable application
// support runs one CommonJS script, so the CLI is bundled with esbuild into one, together with
// what it reads at run time (schemas/, crds/, generated/, docs/, kubernetes-models: see
// src/assets.ts), and injected with postject into a copy of the Node running this script.
//
//   node --import tsx scripts/release.ts [--out DIR]
//
// Built once per input: the result is kept under .tools/release/<digest>/, keyed by the bundle
// and the Node binary, so a test run that asks again only copies it.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { arch } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { Script } from "node:vm";
import { type Plugin, build } from "esbuild";
import { inject } from "postject";
import { projectRoot } from "../src/project.js";
import { userlandPunycode } from "./userland-punycode.js";
import { PRECOMPILED_DIR } from "../src/schema/precompiled.js";
import { withCodeCacheFlags } from "../src/young-generation-growth.js";

const root = projectRoot();
const { values } = parseArgs({ options: { out: { type: "string", default: "release" } } });
const outDir = resolve(root, values.out ?? "release");
const name = `mcpfleet-linux-${arch()}`;

/** Files of the package under `dir` (relative to the root) whose names end in `ext`. */
function filesUnder(dir: string, ext: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(join(root, d), { withFileTypes: true })) {
      const path = `${d}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(ext)) out.push(path);
    }
  };
  walk(dir);
  return out.sort();
}

// What the CLI reads from its installation (src/assets.ts), as the npm package ships it: SEA
// assets, read when asked for.
const files = [
  "package.json",
  "generated/schemas.json",
  ...filesUnder("schemas", ".yaml"),
  ...filesUnder("crds", ".yaml"),
  ...filesUnder("docs", ".md"),
];

// kubernetes-models' group and version directories, each module with its loader; the package's
// own index and schema modules are reached through those.
const modelsDir = join(root, "node_modules", "kubernetes-models");
const models = filesUnder("node_modules/kubernetes-models", ".js")
  .map((p) => relative(modelsDir, join(root, p)).split(sep).join("/"))
  .filter((p) => p.includes("/") && !p.startsWith("_schemas/"));
const loaders = models.map((p) => {
  const specifier = `kubernetes-models/${p.endsWith("/index.js") ? p.slice(0, -"/index.js".length) : p.slice(0, -".js".length)}`;
  return `${JSON.stringify(p)}: () => import(${JSON.stringify(specifier)})`;
});

// The models (thousands of modules) and the precompiled validators are bundles of their own,
// SEA assets compiled on first use: in the main script, V8 would load them at every start,
// --version included.
/** A lazy bundle as the function the main script calls. */
const WRAPPER = ["(function (exports, require, module) {", "\n})"];
/** How the main script asks for a package (see lazyPackages below). */
const PACKAGE_HOOK = `globalThis[Symbol.for("mcpfleet.package")]`;
const LAZY_BUNDLES: Record<string, string> = {
  "kube-models.cjs": `module.exports = {${loaders.join(",\n")}};`,
};
// A bundle per precompiled validator, as the package has a module per schema.
for (const name of readdirSync(join(root, PRECOMPILED_DIR))) {
  LAZY_BUNDLES[`validators/${name}`] =
    `module.exports = require(${JSON.stringify(`./${PRECOMPILED_DIR}/${name}`)});`;
}

const entry = `
import { provideBundledInstallation } from "./src/assets.ts";
import { withCodeCacheFlags } from "./src/young-generation-growth.ts";
import { validatedOnServer } from "./src/cli/validate-client.ts";
const sea = require("node:sea");
const vm = require("node:vm");
const lazyBundles = new Map();
function lazyBundle(name) {
  let loaded = lazyBundles.get(name);
  if (loaded === undefined) {
    const module = { exports: {} };
    // V8's code cache of the bundle, made at build time, spares parsing all of it. Taken with
    // the flags it was made with: V8 refuses it otherwise, and a run changes one of them.
    const script = withCodeCacheFlags(() => new vm.Script(${JSON.stringify(WRAPPER[0])} + sea.getAsset(name, "utf8") + ${JSON.stringify(WRAPPER[1])}, {
      filename: name,
      cachedData: new Uint8Array(sea.getAsset(name + ".cache")),
    }));
    script.runInThisContext()(module.exports, require, module);
    lazyBundles.set(name, (loaded = module.exports));
  }
  return loaded;
}
provideBundledInstallation({
  paths: ${JSON.stringify(files)},
  read: (path) => sea.getAsset(path, "utf8"),
  validators: (name) => lazyBundle("validators/" + name),
  kubeModels: Object.fromEntries(
    ${JSON.stringify(models)}.map((p) => [p, async () => lazyBundle("kube-models.cjs")[p]()]),
  ),
});
${PACKAGE_HOOK} = (name) => lazyBundle("packages.cjs")[name]();
// Started only once the installation is in place; validate goes to a validate server first.
const start = () => import("./src/cli/main.ts");
if (process.argv[2] === "validate") {
  validatedOnServer(process.argv.slice(3), process.execPath, []).then((served) => served || start());
} else {
  start();
}
`;

// The modules that load CommonJS packages on demand do it with a require of their own
// (createRequire(import.meta.url)), which a bundler does not follow: in the bundle the plain
// require is the bundler's, so those packages come along.
const OWN_REQUIRE = "const require = createRequire(import.meta.url);";
const bundledRequire: Plugin = {
  name: "bundled-require",
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("createRequire(import.meta.url)")) return undefined;
      const contents = text.replace(OWN_REQUIRE, "");
      if (contents.includes("createRequire(import.meta.url)")) {
        throw new Error(`${args.path}: a createRequire the bundle cannot follow`);
      }
      return { contents, loader: "ts" };
    });
  },
};

const work = join(root, ".tools", "release");
mkdirSync(work, { recursive: true });
const bundlePath = join(work, `${name}.cjs`);
const options = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: `node${process.versions.node.split(".")[0]}`,
  minify: true,
  keepNames: true,
  legalComments: "none",
  // Optional native or peer modules the packages try and do without.
  external: ["pg-native", "pino-pretty"] as string[],
  // Read only outside the executable (src/project-root.ts, src/assets.ts); in it, a path that says so.
  define: { "import.meta.url": JSON.stringify("file:///mcpfleet-single-executable/") },
  plugins: [bundledRequire, userlandPunycode(root)],
  logLevel: "error",
} as const;
// The npm packages our code imports are one more such bundle: the main script keeps the CLI's
// own modules, and a package is compiled and run when a command first imports it.
const packageSpecifiers = new Set<string>();
const lazyPackages: Plugin = {
  name: "lazy-packages",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (isBuiltin(args.path) || !/[\\/]src[\\/]/.test(args.importer)) return undefined;
      packageSpecifiers.add(args.path);
      return { path: args.path, namespace: "lazy-package" };
    });
    b.onLoad({ filter: /.*/, namespace: "lazy-package" }, (args) => ({
      contents: `module.exports = ${PACKAGE_HOOK}(${JSON.stringify(args.path)});`,
      loader: "js",
    }));
  },
};
// The packages bundle requires each package, resolved as an import would be (some export
// nothing for require).
const importResolution: Plugin = {
  name: "import-resolution",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== "require-call" || args.pluginData === "inner" || isBuiltin(args.path)) {
        return undefined;
      }
      if (!args.importer.includes("sea-entry")) return undefined;
      const r = await b.resolve(args.path, {
        kind: "import-statement",
        resolveDir: args.resolveDir,
        pluginData: "inner",
      });
      return r.errors.length > 0 ? undefined : { path: r.path };
    });
  },
};

async function bundle(path: string, contents: string, plugins: Plugin[] = []): Promise<void> {
  const result = await build({
    ...options,
    plugins: [...plugins, ...options.plugins],
    stdin: { contents, resolveDir: root, sourcefile: "sea-entry.ts", loader: "ts" },
    outfile: path,
  });
  if (result.errors.length > 0) process.exit(1);
}
await bundle(bundlePath, entry, [lazyPackages]);
LAZY_BUNDLES["packages.cjs"] = `module.exports = {${[...packageSpecifiers]
  .sort()
  .map((s) => `${JSON.stringify(s)}: () => require(${JSON.stringify(s)})`)
  .join(",\n")}};`;
for (const [name, contents] of Object.entries(LAZY_BUNDLES)) {
  await bundle(join(work, name), contents, name === "packages.cjs" ? [importResolution] : []);
}
const assets: Record<string, string> = Object.fromEntries(files.map((f) => [f, join(root, f)]));
for (const name of Object.keys(LAZY_BUNDLES)) {
  const path = join(work, name);
  const script = new Script(WRAPPER[0] + readFileSync(path, "utf8") + WRAPPER[1], {
    filename: name,
  });
  // The cache holds what V8 has compiled when it is made. Each bundle's top level is run first:
  // it only defines its modules (packages and models are required later, by name), and the
  // esbuild wrapper around a module is compiled at its first call; the validators' large
  // function, compiled with it, would otherwise be compiled again by every run (about 30 ms).
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    createRequire(path),
    module,
  );
  writeFileSync(
    `${path}.cache`,
    withCodeCacheFlags(() => script.createCachedData()),
  );
  assets[name] = path;
  assets[`${name}.cache`] = `${path}.cache`;
}

const nodeBinary = process.execPath;
const hash = createHash("sha256").update(readFileSync(bundlePath));
for (const [name, path] of Object.entries(assets)) hash.update(name).update(readFileSync(path));
const digest = hash
  .update(process.version)
  .update(readFileSync(nodeBinary))
  .digest("hex")
  .slice(0, 16);
const cached = join(work, digest, name);
if (!existsSync(cached)) {
  const dir = join(work, digest);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const blob = join(dir, "sea-prep.blob");
  writeFileSync(
    join(dir, "sea-config.json"),
    JSON.stringify({
      main: bundlePath,
      output: blob,
      disableExperimentalSEAWarning: true,
      assets,
      // V8's compiled code of the bundle: start-up parses next to nothing.
      useCodeCache: true,
    }),
  );
  const prep = spawnSync(nodeBinary, ["--experimental-sea-config", join(dir, "sea-config.json")], {
    stdio: "inherit",
  });
  if (prep.status !== 0) process.exit(1);
  const partial = `${cached}.partial`;
  copyFileSync(nodeBinary, partial);
  chmodSync(partial, 0o755);
  await inject(partial, "NODE_SEA_BLOB", readFileSync(blob), {
    sentinelFuse: "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2",
  });
  rmSync(blob);
  renameSync(partial, cached);
  // Executables of earlier inputs: about 135 MB each, never used again.
  for (const entry of readdirSync(work)) {
    if (/^[0-9a-f]{16}$/.test(entry) && entry !== digest) {
      rmSync(join(work, entry), { recursive: true, force: true });
    }
  }
}
mkdirSync(outDir, { recursive: true });
const out = join(outDir, name);
copyFileSync(cached, `${out}.partial`);
chmodSync(`${out}.partial`, 0o755);
renameSync(`${out}.partial`, out);
// The checksum file the Action and the pre-commit hook check a download against
// (scripts/fetch-executable.sh), in sha256sum's format.
const sum = createHash("sha256").update(readFileSync(out)).digest("hex");
writeFileSync(`${out}.sha256`, `${sum}  ${name}\n`);
console.log(relative(process.cwd(), out) || out);

// The validators of this installation's schemas, compiled by `make generate` into
// generated/validators/ (ajv's standalone code): a run that uses them loads neither ajv nor
// compiles anything, which was most of the start of a one-file `mcpfleet validate`. One module
// holds every validator (the kinds share most of their definitions, compiled once there for
// all); the registry server's configuration has a module of its own as well, so that the server,
// which checks nothing else, loads 200 KB of validator rather than 3 MB. They are used only for
// the schemas they were compiled from: each module carries the digest of the schema sources,
// and the schema set must have been read from the snapshot of the same digest.
import type { FuncKeywordDefinition, ValidateFunction } from "ajv/dist/2020.js";
import { installedValidators } from "../assets.js";
import { requireWithCodeCache } from "./code-cache.js";
import {
  KINDS,
  REGISTRY_CONFIG_SCHEMA_ID,
  SCHEMA_BASE,
  VMCP_CONFIG_SCHEMA_ID,
  kindSchemaId,
} from "./kinds.js";
import type { StructuralBounds } from "./cel.js";
import { type SchemaFile, snapshotDigest } from "./load.js";

/** Where `make generate` writes the compiled validators. */
export const PRECOMPILED_DIR = "generated/validators";

/** The schemas compiled ahead: every kind and the two embedded configurations. */
export const PRECOMPILED_REFS: readonly string[] = [
  ...KINDS.map(kindSchemaId),
  REGISTRY_CONFIG_SCHEMA_ID,
  VMCP_CONFIG_SCHEMA_ID,
];

/** The module of generated/validators/ with every validator. */
const ALL_MODULE = "all.cjs";

/** The modules of one validator each, for a process that uses only that one. */
const OWN_MODULES: Readonly<Record<string, string>> = {
  [REGISTRY_CONFIG_SCHEMA_ID]: "registry-server.cjs",
};

/** The modules of generated/validators/, each with the `$id`s of the validators it holds. */
export function precompiledModuleRefs(refs: readonly string[]): Map<string, string[]> {
  const modules = new Map<string, string[]>([[ALL_MODULE, [...refs]]]);
  for (const [ref, file] of Object.entries(OWN_MODULES)) {
    if (refs.includes(ref)) modules.set(file, [ref]);
  }
  return modules;
}

type KeywordValidate = NonNullable<FuncKeywordDefinition["validate"]>;

/**
 * What the compiled code calls for our keywords (`runtime.*` in it): the same functions a
 * schema set hands to ajv, so that a precompiled validator behaves as a freshly compiled one.
 */
export interface KeywordRuntime {
  /** The validate function of one schema node's CEL rules (bounds: see structuralBounds). */
  cel(rules: readonly unknown[], bounds?: StructuralBounds): KeywordValidate;
  listType: KeywordValidate;
  intOrString: KeywordValidate;
}

/** The shape of a module in generated/validators/. */
interface PrecompiledModule {
  digest: string;
  validators(runtime: KeywordRuntime): Record<string, ValidateFunction>;
}

/** The precompiled validator of a schema `$id`, loaded on first use; undefined when there is none. */
export type Precompiled = (ref: string) => ValidateFunction | undefined;

/**
 * The precompiled validators, bound to `runtime`; undefined when `files` are not the snapshot
 * the modules were compiled from. A schema whose module is missing, or was compiled from other
 * sources, has none: its validator is compiled on first use.
 */
export function loadPrecompiled(
  files: readonly SchemaFile[],
  runtime: KeywordRuntime,
): Precompiled | undefined {
  const digest = snapshotDigest(files);
  if (digest === undefined) return undefined;
  const modules = new Map<string, Record<string, ValidateFunction> | undefined>();
  // The schemas whose validators were taken, by module, for its code cache (see code-cache.ts).
  const used = new Map<string, Set<string>>();
  const take = (file: string, ref: string): ValidateFunction | undefined => {
    const fn = modules.get(file)?.[ref];
    if (fn !== undefined) used.get(file)?.add(ref);
    return fn;
  };
  return (ref) => {
    if (!ref.startsWith(SCHEMA_BASE) || ref.includes("#")) return undefined;
    // A module loaded already serves it; else its own module, or the one with every validator.
    for (const file of modules.keys()) {
      const fn = take(file, ref);
      if (fn !== undefined) return fn;
    }
    const file = OWN_MODULES[ref] ?? ALL_MODULE;
    if (modules.has(file)) return undefined;
    const taken = new Set<string>();
    used.set(file, taken);
    modules.set(
      file,
      loadModule(file, digest, runtime, () => taken),
    );
    return take(file, ref);
  };
}

function loadModule(
  file: string,
  digest: string,
  runtime: KeywordRuntime,
  used: () => Iterable<string>,
): Record<string, ValidateFunction> | undefined {
  let module: PrecompiledModule;
  try {
    // Loaded with a code cache made after an earlier run, which is made again when this run uses
    // a validator it does not cover: see code-cache.ts.
    module = installedValidators(file, (path) =>
      requireWithCodeCache(path, used),
    ) as PrecompiledModule;
  } catch {
    return undefined; // not generated: compiled on first use
  }
  return module.digest === digest ? module.validators(runtime) : undefined;
}

/**
 * The text of one module of generated/validators/: ajv's standalone code for some validators,
 * wrapped in a function of the keyword runtime.
 */
export function precompiledModuleText(standaloneCode: string, digest: string): string {
  return [
    "// Generated by `make generate` (scripts/generate.ts) from schemas/: do not edit.",
    '"use strict";',
    `exports.digest = ${JSON.stringify(digest)};`,
    // In parentheses, V8 compiles the function as the module loads, not at its first call, so
    // the code cache the single executable's build makes holds it (3 MB, about 25 ms of a run).
    "exports.validators = (function validators(runtime) {",
    "const exports = {};",
    // Keyword functions are called with ajv's instance as `this`; none of ours uses it.
    "const self = undefined;",
    standaloneCode.replace(/^"use strict";/, ""),
    "return exports;",
    "});",
    "",
  ].join("\n");
}

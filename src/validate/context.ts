// What one validation run shares across its files: the options, the schema set, and the
// levels that see every resource (references, enforceServers).
import type { Kind, SchemaSet } from "../schema/index.js";
import { type CrdSchemas, loadCrds } from "./crds.js";
import { EnforceServersLevel } from "./enforce-servers.js";
import { type ReferencePattern, referencePatternsOf } from "./reference-table.js";
import { ReferenceLevel } from "./references.js";
import type { ValidateOptions } from "./types.js";
import { detached } from "../yaml/values.js";

export interface Context {
  options: ValidateOptions;
  set: SchemaSet;
  references: ReferenceLevel;
  /** enforceServers: MCPServer images against the catalogs of the namespace's MCPRegistries. */
  enforce: EnforceServersLevel;
  /** The one string of each namespace met (the run keeps one per resource). */
  namespaceOf: (namespace: string) => string;
  /** The reference patterns of a kind in this schema set. */
  patterns: (kind: Kind) => readonly ReferencePattern[];
  /** Other projects' kinds, from the CRDs given (`--crd`). */
  crds: CrdSchemas | undefined;
}

export function newContext(options: ValidateOptions, set: SchemaSet): Context {
  return {
    options,
    set,
    references: new ReferenceLevel({ allowMissingRefs: options.allowMissingRefs }),
    enforce: new EnforceServersLevel(),
    namespaceOf: interner(),
    patterns: referencePatternsOf(set.files),
    crds: options.crdPaths.length > 0 ? loadCrds(options.crdPaths) : undefined,
  };
}

/**
 * A context for validating one file alone, within `run`: its own reference and enforceServers
 * levels, whose resources and notes are adopted into the run's afterwards (file-verdict.ts).
 */
export function fileContext(run: Context): Context {
  return {
    ...run,
    references: new ReferenceLevel({ allowMissingRefs: run.options.allowMissingRefs }),
    enforce: new EnforceServersLevel(),
  };
}

/** A function that returns the first string equal to each one it is given (a copy of its own). */
function interner(): (s: string) => string {
  const seen = new Map<string, string>();
  return (s) => {
    const known = seen.get(s);
    if (known !== undefined) return known;
    const own = detached(s);
    seen.set(own, own);
    return own;
  };
}

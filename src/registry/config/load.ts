// Loads the registry server's config file: YAML with positions, validated with the registry
// config schema and its CEL rules. Every error names the key (JSON pointer) and the line.
// The YAML is read as validate reads resource files (src/yaml/documents.ts): js-yaml's
// events for a plain file, the yaml package for anything else and for every syntax error, so
// the server's start does not load the yaml package's 72 modules for a plain configuration.
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { McpfleetError } from "../../errors.js";
import { defaultSchemaSet, REGISTRY_CONFIG_SCHEMA_ID } from "../../schema/index.js";
import { type ParsedDocument, parseDocuments } from "../../yaml/documents.js";
import { DEFAULT_PARSE_LIMITS } from "../../yaml/model.js";
import type { LoadedConfig, RegistryServerConfig } from "./types.js";

/** Clear-text secret fields: accepted (the schema does not know them) with a warning. */
const CLEAR_TEXT_SECRETS = [
  /^\/database\/password$/,
  /^\/database\/migrationPassword$/,
  /^\/sources\/\d+\/git\/auth\/password$/,
];

/** `line:column` (1-based) of the node at `pointer`, or of its nearest existing ancestor. */
function positionOf(doc: ParsedDocument, pointer: string): string {
  const at = doc.locate(pointer);
  return `${at.line}:${at.column}`;
}

/** The one document of a configuration file, or ERR_REGISTRY_CONFIG naming what is wrong. */
function configDocument(text: string, origin: string): ParsedDocument & { value: object } {
  const docs = parseDocuments(text, DEFAULT_PARSE_LIMITS);
  const problems = docs.flatMap((d) => d.errors);
  if (problems.length > 0) {
    const msgs = problems.map((e) => `${origin}:${e.line}:${e.column}: ${e.message}`);
    throw new McpfleetError("ERR_REGISTRY_CONFIG", `invalid YAML\n  ${msgs.join("\n  ")}`);
  }
  const [doc, second] = docs;
  if (second !== undefined) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `${origin}:${second.start.line}:${second.start.column}: the configuration must be one YAML document`,
    );
  }
  const value = doc?.value;
  if (doc === undefined || value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `${origin}:1: the configuration must be a mapping`,
    );
  }
  return Object.assign(doc, { value });
}

/** Each source a registry names that `sources` does not define, with where it is named. */
function undefinedSources(value: object): { at: string; message: string }[] {
  const { sources, registries } = value as Partial<RegistryServerConfig>;
  if (!Array.isArray(sources) || !Array.isArray(registries)) return [];
  const names = new Set(sources.map((src) => src?.name));
  const out: { at: string; message: string }[] = [];
  registries.forEach((r, i) => {
    if (!Array.isArray(r?.sources)) return;
    r.sources.forEach((n, j) => {
      if (typeof n === "string" && !names.has(n)) {
        out.push({
          at: `/registries/${i}/sources/${j}`,
          message: `registry "${r.name}" names source "${n}", which is not defined in sources`,
        });
      }
    });
  });
  return out;
}

/**
 * Parses and validates config text. `origin` names the file in messages. Throws
 * ERR_REGISTRY_CONFIG listing every problem; returns the config and any warnings.
 */
export function parseConfig(
  text: string,
  origin: string,
): Omit<LoadedConfig, "path" | "baseDir"> & { positions: (pointer: string) => string } {
  const doc = configDocument(text, origin);
  const value = doc.value;
  const issues = defaultSchemaSet().validateSchema(REGISTRY_CONFIG_SCHEMA_ID, value);
  const errors: string[] = undefinedSources(value).map(
    ({ at, message }) => `${origin}:${positionOf(doc, at)}: ${at}: ${message}`,
  );
  const warnings: string[] = [];
  for (const issue of issues) {
    const where = `${origin}:${positionOf(doc, issue.path)}: ${issue.path || "/"}`;
    if (issue.unknownField === true) {
      if (CLEAR_TEXT_SECRETS.some((re) => re.test(issue.path))) {
        warnings.push(
          `${where}: clear-text secret in the configuration file; prefer a password file, ` +
            `PGPASSFILE or an environment variable`,
        );
      } else {
        warnings.push(`${where}: ${issue.message} (ignored)`);
      }
      continue;
    }
    // The schema's rule names no source; the items found above do.
    if (issue.path === "/registries" && errors.length > 0 && /registry names/.test(issue.message)) {
      continue;
    }
    errors.push(`${where}: ${issue.message}`);
  }
  if (errors.length > 0) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `${origin}: ${errors.length} configuration error(s)\n  ${errors.join("\n  ")}`,
    );
  }
  return {
    config: value as RegistryServerConfig,
    warnings,
    positions: (pointer) => positionOf(doc, pointer),
  };
}

/**
 * File sources whose file is not there (relative paths from the configuration's directory),
 * each named with its position: what `registry serve --check` adds to the schema's verdict.
 */
export function missingFiles(
  loaded: LoadedConfig & { positions?: (p: string) => string },
  origin: string = loaded.path,
): string[] {
  const out: string[] = [];
  loaded.config.sources.forEach((src, i) => {
    if (src.file === undefined) return;
    const path = resolve(loaded.baseDir, src.file.path);
    if (existsSync(path)) return;
    const at = `/sources/${i}/file/path`;
    out.push(
      `${origin}:${loaded.positions?.(at) ?? "1:1"}: ${at}: source "${src.name}" reads ${src.file.path}, which does not exist`,
    );
  });
  return out;
}

/** Reads and validates a config file. */
export function loadConfigFile(
  path: string,
): LoadedConfig & { positions: (pointer: string) => string } {
  const abs = resolve(path);
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (err) {
    throw new McpfleetError("ERR_IO", `cannot read ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const parsed = parseConfig(text, path);
  return { ...parsed, path: abs, baseDir: dirname(abs) };
}

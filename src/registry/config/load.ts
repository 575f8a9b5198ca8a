// Loads the registry server's config file: YAML with positions, validated with the registry
// config schema and its CEL rules. Every error names the key (JSON pointer) and the line.
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { isNode, LineCounter, parseDocument, type Document } from "yaml";
import { McpfleetError } from "../../errors.js";
import { unescapeSegment } from "../../json-pointer.js";
import { defaultSchemaSet, REGISTRY_CONFIG_SCHEMA_ID } from "../../schema/index.js";
import type { LoadedConfig, RegistryServerConfig } from "./types.js";

/** Clear-text secret fields: accepted (the schema does not know them) with a warning. */
const CLEAR_TEXT_SECRETS = [
  /^\/database\/password$/,
  /^\/database\/migrationPassword$/,
  /^\/sources\/\d+\/git\/auth\/password$/,
];

function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === "" || pointer === "/") return [];
  return pointer
    .slice(1)
    .split("/")
    .map(unescapeSegment)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** `line:column` (1-based) of the node at `pointer`, or of its nearest existing ancestor. */
function positionOf(doc: Document, counter: LineCounter, pointer: string): string {
  const segs = pointerSegments(pointer);
  for (let n = segs.length; n >= 0; n--) {
    const node: unknown = n === 0 ? doc.contents : doc.getIn(segs.slice(0, n), true);
    if (isNode(node) && node.range) {
      const at = counter.linePos(node.range[0]);
      return `${at.line}:${at.col}`;
    }
  }
  return "1:1";
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
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: true });
  if (doc.errors.length > 0) {
    const msgs = doc.errors.map((e) => {
      const at = e.linePos?.[0];
      return `${origin}:${at?.line ?? 1}:${at?.col ?? 1}: ${e.message.split("\n")[0] ?? e.message}`;
    });
    throw new McpfleetError("ERR_REGISTRY_CONFIG", `invalid YAML\n  ${msgs.join("\n  ")}`);
  }
  const value: unknown = doc.toJS();
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `${origin}:1: the configuration must be a mapping`,
    );
  }
  const issues = defaultSchemaSet().validateSchema(REGISTRY_CONFIG_SCHEMA_ID, value);
  const errors: string[] = undefinedSources(value).map(
    ({ at, message }) => `${origin}:${positionOf(doc, counter, at)}: ${at}: ${message}`,
  );
  const warnings: string[] = [];
  for (const issue of issues) {
    const where = `${origin}:${positionOf(doc, counter, issue.path)}: ${issue.path || "/"}`;
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
    positions: (pointer) => positionOf(doc, counter, pointer),
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

// Loads the registry server's config file: YAML with positions, validated with the registry
// config schema and its CEL rules. Every error names the key (JSON pointer) and the line.
import { readFileSync } from "node:fs";
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

/** Line (1-based) of the node at `pointer`, or of its nearest existing ancestor. */
function lineOf(doc: Document, counter: LineCounter, pointer: string): number {
  const segs = pointerSegments(pointer);
  for (let n = segs.length; n >= 0; n--) {
    const node: unknown = n === 0 ? doc.contents : doc.getIn(segs.slice(0, n), true);
    if (isNode(node) && node.range) return counter.linePos(node.range[0]).line;
  }
  return 1;
}

/**
 * Parses and validates config text. `origin` names the file in messages. Throws
 * ERR_REGISTRY_CONFIG listing every problem; returns the config and any warnings.
 */
export function parseConfig(text: string, origin: string): Omit<LoadedConfig, "path" | "baseDir"> {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: true });
  if (doc.errors.length > 0) {
    const msgs = doc.errors.map((e) => {
      const line = e.linePos?.[0]?.line ?? 1;
      return `${origin}:${line}: ${e.message.split("\n")[0] ?? e.message}`;
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
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const issue of issues) {
    const where = `${origin}:${lineOf(doc, counter, issue.path)}: ${issue.path || "/"}`;
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
    errors.push(`${where}: ${issue.message}`);
  }
  if (errors.length > 0) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `${origin}: ${errors.length} configuration error(s)\n  ${errors.join("\n  ")}`,
    );
  }
  return { config: value as RegistryServerConfig, warnings };
}

/** Reads and validates a config file. */
export function loadConfigFile(path: string): LoadedConfig {
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

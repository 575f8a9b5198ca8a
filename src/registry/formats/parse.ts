// Parses registry data in either format into entries, and applies a source's filter.
import { McpfleetError } from "../../errors.js";
import type { FilterConfig } from "../config/types.js";
import { jsonLimitProblem } from "./bounds.js";
import type { ServerEntry } from "./model.js";
import { isToolhiveDocument, parseToolhive } from "./toolhive.js";
import { parseUpstream, upstreamItems } from "./upstream.js";

export type Format = "toolhive" | "upstream";

export function detectFormat(doc: unknown): Format | undefined {
  if (upstreamItems(doc) !== undefined) return "upstream";
  if (isToolhiveDocument(doc)) return "toolhive";
  return undefined;
}

export interface Parsed {
  format: Format;
  entries: ServerEntry[];
  /** Entries skipped as invalid, with why. */
  problems: string[];
}

/** Parses JSON registry data; throws ERR_SYNC_FAILED when it is not a registry at all. */
export function parseRegistryData(text: string, format?: Format): Parsed {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the data, which may be any file the source names.
    throw new McpfleetError("ERR_SYNC_FAILED", "registry data is not JSON");
  }
  const f = format ?? detectFormat(doc);
  if (f === undefined) {
    throw new McpfleetError(
      "ERR_SYNC_FAILED",
      "registry data is in no known format (neither a toolhive `servers` map nor an upstream `data.servers` list)",
    );
  }
  const r = f === "toolhive" ? withinLimits(parseToolhive(doc)) : parseUpstream(doc);
  if (r.entries.length === 0 && r.problems.length > 0) {
    throw new McpfleetError(
      "ERR_SYNC_FAILED",
      `registry data has no valid entry: ${r.problems[0]}`,
    );
  }
  return { format: f, ...r };
}

/** Converted toolhive entries the store can keep (upstream items are checked as converted). */
function withinLimits(r: { entries: ServerEntry[]; problems: string[] }): {
  entries: ServerEntry[];
  problems: string[];
} {
  const entries: ServerEntry[] = [];
  for (const e of r.entries) {
    const problem = jsonLimitProblem(e.server);
    if (problem === undefined) entries.push(e);
    else r.problems.push(`${e.name}: ${problem}`);
  }
  return { entries, problems: r.problems };
}

/** A glob as in the config schema: `*` any characters (including '/'), `?` one character. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`);
}

/** name include, then name exclude, then tag include, then tag exclude. */
export function makeFilter(filter: FilterConfig | undefined): (e: ServerEntry) => boolean {
  if (filter === undefined) return () => true;
  const inc = (filter.names?.include ?? []).map(globToRegExp);
  const exc = (filter.names?.exclude ?? []).map(globToRegExp);
  const tagInc = new Set(filter.tags?.include ?? []);
  const tagExc = new Set(filter.tags?.exclude ?? []);
  return (e) => {
    if (inc.length > 0 && !inc.some((re) => re.test(e.name))) return false;
    if (exc.some((re) => re.test(e.name))) return false;
    if (tagInc.size > 0 && !e.tags.some((t) => tagInc.has(t))) return false;
    if (e.tags.some((t) => tagExc.has(t))) return false;
    return true;
  };
}

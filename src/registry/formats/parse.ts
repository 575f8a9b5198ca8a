// Parses registry data in either format into entries, and applies a source's filter.
import { McpfleetError } from "../../errors.js";
import type { FilterConfig } from "../config/types.js";
import { jsonLimitProblem } from "./bounds.js";
import {
  type MemberSpan,
  type Span,
  arrayItems,
  checkEnd,
  objectMembers,
  parseSpan,
  rootStart,
  valueEnd,
} from "./json-spans.js";
import type { ServerEntry } from "./model.js";
import { convertToolhiveRemote, convertToolhiveServer, isToolhiveDocument } from "./toolhive.js";
import { convertUpstream, upstreamItems } from "./upstream.js";
import { isObject } from "../../json.js";

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

/**
 * Registry data read one server at a time: its format, and its items, each converted as it is
 * parsed (an entry, or why it is skipped). A sync stages entries as they come, so no more than a
 * batch of them is alive beside the text. The text is checked as a whole as it is read: an item
 * that is not JSON throws when it is reached (ERR_SYNC_FAILED).
 */
export interface RegistryStream {
  format: Format;
  items: Iterable<ServerEntry | string>;
}

/** The catalog parts of the text: where the upstream items and the toolhive maps are. */
interface Shape {
  upstream?: Span[];
  servers?: MemberSpan[];
  remotes?: MemberSpan[];
}

/**
 * Finds the parts detectFormat would use (data.servers or servers as a list, or the root list;
 * servers and remote_servers maps) without parsing them; every other value is parsed, so the
 * whole text is checked.
 */
function shapeOf(text: string): Shape {
  const start = rootStart(text);
  const first = text[start];
  if (first === "[") {
    const { items, end } = arrayItems(text, start);
    checkEnd(text, end);
    return { upstream: items };
  }
  if (first !== "{") {
    const end = valueEnd(text, start);
    checkEnd(text, end);
    parseSpan(text, { start, end });
    return {};
  }
  const root = objectMembers(text, start);
  checkEnd(text, root.end);
  const members = new Map(root.members.map((m) => [m.key, m]));
  const shape: Shape = {};
  const used = new Set<string>();
  const data = members.get("data");
  if (data !== undefined && text[data.start] === "{") {
    const inner = new Map(objectMembers(text, data.start).members.map((m) => [m.key, m]));
    const list = inner.get("servers");
    if (list !== undefined && text[list.start] === "[") {
      shape.upstream = arrayItems(text, list.start).items;
      for (const m of inner.values()) if (m !== list) parseSpan(text, m);
      used.add("data");
    }
  }
  const servers = members.get("servers");
  if (servers !== undefined && text[servers.start] === "[" && shape.upstream === undefined) {
    shape.upstream = arrayItems(text, servers.start).items;
    used.add("servers");
  } else if (servers !== undefined && text[servers.start] === "{") {
    shape.servers = objectMembers(text, servers.start).members;
    used.add("servers");
  }
  const remotes = members.get("remote_servers");
  if (remotes !== undefined && text[remotes.start] === "{") {
    shape.remotes = objectMembers(text, remotes.start).members;
    used.add("remote_servers");
  }
  for (const [key, m] of members) if (!used.has(key)) parseSpan(text, m);
  return shape;
}

function* upstreamEntries(text: string, shape: Shape): Generator<ServerEntry | string> {
  if (shape.upstream === undefined) {
    yield "not an upstream registry: expected data.servers, servers or a list";
    return;
  }
  for (const [i, span] of shape.upstream.entries()) {
    const r = convertUpstream(parseSpan(text, span));
    yield typeof r === "string" ? `servers[${i}]: ${r}` : r;
  }
}

function* toolhiveEntries(text: string, shape: Shape): Generator<ServerEntry | string> {
  if (shape.servers === undefined && shape.remotes === undefined) {
    yield "not a toolhive registry: expected a `servers` map";
    return;
  }
  const limited = (e: ServerEntry): ServerEntry | string => {
    const problem = jsonLimitProblem(e.server);
    return problem === undefined ? e : `${e.name}: ${problem}`;
  };
  for (const m of shape.servers ?? []) {
    const value = parseSpan(text, m);
    yield isObject(value) && typeof value.image === "string"
      ? limited(convertToolhiveServer(m.key, value))
      : `servers.${m.key}: needs an image`;
  }
  for (const m of shape.remotes ?? []) {
    const value = parseSpan(text, m);
    yield isObject(value) && typeof value.url === "string"
      ? limited(convertToolhiveRemote(m.key, value))
      : `remote_servers.${m.key}: needs a url`;
  }
}

/** Reads JSON registry data; throws ERR_SYNC_FAILED when it is not a registry at all. */
export function streamRegistryData(text: string, format?: Format): RegistryStream {
  const shape = shapeOf(text);
  const f =
    format ??
    (shape.upstream !== undefined
      ? "upstream"
      : shape.servers !== undefined || shape.remotes !== undefined
        ? "toolhive"
        : undefined);
  if (f === undefined) {
    throw new McpfleetError(
      "ERR_SYNC_FAILED",
      "registry data is in no known format (neither a toolhive `servers` map nor an upstream `data.servers` list)",
    );
  }
  // The parts the chosen format does not read are still checked as JSON.
  if (f === "upstream")
    for (const m of [...(shape.servers ?? []), ...(shape.remotes ?? [])]) parseSpan(text, m);
  else for (const span of shape.upstream ?? []) parseSpan(text, span);
  return {
    format: f,
    items: {
      [Symbol.iterator]: () => (f === "toolhive" ? toolhiveEntries : upstreamEntries)(text, shape),
    },
  };
}

/** What a source holds when every item was read and none was valid. */
export function noValidEntry(firstProblem: string): McpfleetError {
  return new McpfleetError("ERR_SYNC_FAILED", `registry data has no valid entry: ${firstProblem}`);
}

/** Parses JSON registry data whole (small catalogs); throws as streamRegistryData and its items. */
export function parseRegistryData(text: string, format?: Format): Parsed {
  const stream = streamRegistryData(text, format);
  const entries: ServerEntry[] = [];
  const problems: string[] = [];
  for (const item of stream.items) {
    if (typeof item === "string") problems.push(item);
    else entries.push(item);
  }
  if (entries.length === 0 && problems.length > 0) throw noValidEntry(problems[0]!);
  return { format: stream.format, entries, problems };
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

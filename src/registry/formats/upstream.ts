// The upstream format: MCP server.json documents, either wrapped
// (`{version, meta, data: {servers: [...]}}`), as a `{servers: [...]}` object (items may be
// bare server.json or the API's `{server, _meta}`), or as a bare array.
import { OFFICIAL_META, PUBLISHER_META, type ServerEntry, type ServerJson } from "./model.js";
import { jsonLimitProblem } from "./bounds.js";
import { nameProblem, versionProblem } from "./names.js";
import { isObject } from "../../json.js";

type Obj = Record<string, unknown>;

/** The list of server items of an upstream document, or undefined when it is not one. */
export function upstreamItems(doc: unknown): unknown[] | undefined {
  if (Array.isArray(doc)) return doc as unknown[];
  if (!isObject(doc)) return undefined;
  if (isObject(doc.data) && Array.isArray(doc.data.servers)) return doc.data.servers as unknown[];
  if (Array.isArray(doc.servers)) return doc.servers as unknown[];
  return undefined;
}

/** Tags found in the publisher-provided metadata (any `tags` list inside it). */
export function publisherTags(server: ServerJson): string[] {
  const meta = server._meta?.[PUBLISHER_META];
  const tags = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (!isObject(v) || depth > 3) return;
    for (const [k, x] of Object.entries(v)) {
      if (k === "tags" && Array.isArray(x)) {
        for (const t of x) if (typeof t === "string") tags.add(t);
      } else walk(x, depth + 1);
    }
  };
  walk(meta, 0);
  return [...tags];
}

/** `deprecated` when the publisher-provided metadata says so (toolhive's status field). */
export function publisherStatus(server: ServerJson): string | undefined {
  const meta = server._meta?.[PUBLISHER_META];
  let found: string | undefined;
  const walk = (v: unknown, depth: number): void => {
    if (!isObject(v) || depth > 3 || found !== undefined) return;
    for (const [k, x] of Object.entries(v)) {
      if (k === "status" && typeof x === "string") found = x.toLowerCase();
      else walk(x, depth + 1);
    }
  };
  walk(meta, 0);
  return found === "deprecated" ? "deprecated" : undefined;
}

/** One upstream item to an entry, or a problem. */
export function convertUpstream(item: unknown): ServerEntry | string {
  let server: unknown = item;
  let official: Obj | undefined;
  if (isObject(item) && isObject(item.server)) {
    server = item.server;
    const m = isObject(item._meta) ? item._meta[OFFICIAL_META] : undefined;
    if (isObject(m)) official = m;
  }
  if (!isObject(server)) return "server entry is not an object";
  const np = nameProblem(server.name);
  if (np !== undefined) return np;
  const vp = versionProblem(server.version);
  if (vp !== undefined) return `${String(server.name)}: ${vp}`;
  if (server.description !== undefined && typeof server.description !== "string") {
    return `${String(server.name)}: description must be a string`;
  }
  const limit = jsonLimitProblem(server);
  if (limit !== undefined) return `${String(server.name)}: ${limit}`;
  const s = server as ServerJson;
  const status =
    typeof official?.status === "string" ? official.status : (publisherStatus(s) ?? "active");
  return { name: s.name, version: s.version, server: s, tags: publisherTags(s), status };
}

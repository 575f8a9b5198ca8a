// The internal model: every source's data becomes a list of ServerEntry, whatever its format.
// `server` is an MCP server.json document (the official registry's shape): consumers get it
// back unchanged, so the upstream format is the model and toolhive data is converted into it.
import type { Claims } from "../config/types.js";

export type ServerJson = Record<string, unknown> & {
  name: string;
  version: string;
  description?: string;
  title?: string;
  _meta?: Record<string, unknown>;
};

export interface ServerEntry {
  name: string;
  version: string;
  server: ServerJson;
  /** Tags used by filters (from the publisher-provided metadata). */
  tags: string[];
  /** active | deprecated | deleted (the official registry's statuses). */
  status: string;
  claims?: Claims;
}

export const OFFICIAL_META = "io.modelcontextprotocol.registry/official";
export const PUBLISHER_META = "io.modelcontextprotocol.registry/publisher-provided";

/** Text searched by `search=` (lower case): name, title and description. */
export function searchText(server: ServerJson): string {
  return [server.name, server.title ?? "", server.description ?? ""].join("\n").toLowerCase();
}

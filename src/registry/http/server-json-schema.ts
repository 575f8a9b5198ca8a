// The server.json rules (schemas/registry/server-json.yaml, which publishing checks) as shared
// schemas of the OpenAPI document, one per definition, and the publish bodies built on them:
// what the document says a publish must hold is what the checks hold it to.
import { SERVER_JSON_SCHEMAS } from "../formats/publish.js";
import { installedDefs, type Schema } from "./schema-defs.js";
import { CLAIMS } from "./schemas.js";

/** Each definition of the server.json schema, named by its own $id (ServerJson, ...). */
export function serverJsonSchemas(): Schema[] {
  const text = JSON.stringify(installedDefs("registry/server-json.yaml")).replace(
    /"#\/\$defs\/([A-Za-z]+)"/g,
    '"$1#"',
  );
  const defs = JSON.parse(text) as Record<string, Schema>;
  return Object.entries(defs).map(([id, def]) => ({ $id: id, ...def }));
}

/** JavaScript's `\s`, spelled out: the version rule's regular expression uses it. */
const WS =
  "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";

/** One exact version (formats/names.ts): not a range, not `latest` or `all`, no space or '/'. */
const EXACT_VERSION = {
  type: "string",
  minLength: 1,
  maxLength: 255,
  pattern: `^(?!latest$)(?!all$)(?![\\^~<>=*])(?!.*\\|\\|)(?!.*\\.[xX]$)[^${WS}/]+$`,
  description: "One exact version: not a range (^1, ~1, >=1, 1.x, a || b), not `latest` or `all`.",
} as const;

/** `url`: a streamable-http remote at this http(s) URL (when `remotes` is absent). */
const REMOTE_URL = {
  type: "string",
  format: "uri",
  pattern: "^https?://[^\\s]+$",
  description: "URL of the MCP server: a streamable-http remote (when `remotes` is absent).",
} as const;

/** A server.json with the publish payload's own fields: what publishing reads from a body. */
function publishable(description: string, extra: Schema = {}, required: string[] = []) {
  return {
    type: "object",
    description,
    allOf: [{ $ref: "ServerJson#" }],
    required: ["name", "description", "version", ...required],
    properties: {
      ...extra,
      version: EXACT_VERSION,
      url: REMOTE_URL,
      claims: {
        ...CLAIMS,
        description: "Claims of the entry; every later version must carry the same.",
      },
    },
    // How clients reach the server.
    anyOf: [{ required: ["url"] }, { required: ["remotes"] }, { required: ["packages"] }],
    additionalProperties: true,
  } as const;
}

/** The official publish: a server.json naming one of the schemas the rules are written from. */
export const PUBLISH_BODY = publishable(
  "A server.json document (the official rules: name, description of at most 100 characters, exact package versions, a transport for each package, http(s) remotes of type streamable-http or sse) plus `url` (a streamable-http remote) and the entry's `claims`. `_meta` is limited to the store's maxMetaSize (413).",
  { $schema: { type: "string", enum: SERVER_JSON_SCHEMAS } },
  ["$schema"],
);

/** ToolHive's publish: `server` (a server.json), `claims`; skills and plugins are not kept. */
export const ENTRY_PUBLISH_BODY = {
  type: "object",
  required: ["server"],
  properties: {
    server: publishable("The server.json (the same rules as the official publish)."),
    claims: CLAIMS,
    skill: { not: {}, description: "ToolHive's skill entries are not kept here (400)." },
    plugin: { not: {}, description: "ToolHive's plugin entries are not kept here (400)." },
  },
  additionalProperties: true,
} as const;

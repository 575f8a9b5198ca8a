// The toolhive registry format: `{version, last_updated, servers: {short: {...}},
// remote_servers: {short: {...}}}`. Each entry becomes an MCP server.json: the image becomes
// an OCI package, a remote server a remote, and toolhive-only fields (args, tier, status,
// tools, tags, metadata, permissions, provenance, ...) go to the publisher-provided _meta, keyed by
// namespace and then image or URL, as the official registry's toolhive publisher does.
import { PUBLISHER_META, type ServerEntry, type ServerJson } from "./model.js";
import { isObject } from "../../json.js";

/** Namespace given to toolhive entries (they have short names only). */
export const TOOLHIVE_NAMESPACE = "io.github.stacklok";
/** Version given to toolhive entries (the format has no versions). */
export const TOOLHIVE_VERSION = "1.0.0";

const SERVER_JSON_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/** Fields that become publisher-provided metadata, in this order. */
const META_FIELDS = [
  "args",
  "custom_metadata",
  "metadata",
  "oauth_config",
  "permissions",
  "provenance",
  "status",
  "tags",
  "tier",
  "tools",
] as const;

type Obj = Record<string, unknown>;

function repository(url: unknown): Obj | undefined {
  if (typeof url !== "string" || url === "") return undefined;
  let source: string;
  try {
    const host = new URL(url).hostname;
    source = host.replace(/^www\./, "").split(".")[0] ?? "";
  } catch {
    source = "";
  }
  return source === "" ? { url } : { url, source };
}

function envVars(list: unknown): Obj[] | undefined {
  if (!Array.isArray(list) || list.length === 0) return undefined;
  return list.filter(isObject).map((e) => {
    const out: Obj = {};
    if (typeof e.description === "string") out.description = e.description;
    if (e.default !== undefined) out.default = e.default;
    if (e.required === true) out.isRequired = true;
    if (e.secret === true) out.isSecret = true;
    out.name = e.name;
    return out;
  });
}

function headers(list: unknown): Obj[] | undefined {
  if (!Array.isArray(list) || list.length === 0) return undefined;
  return list.filter(isObject).map((h) => {
    const out: Obj = { name: h.name };
    if (typeof h.description === "string") out.description = h.description;
    if (h.required === true) out.isRequired = true;
    if (h.secret === true) out.isSecret = true;
    if (h.default !== undefined) out.default = h.default;
    return out;
  });
}

function publisherMeta(key: string, src: Obj): Obj | undefined {
  const meta: Obj = {};
  for (const f of META_FIELDS) if (src[f] !== undefined) meta[f] = src[f];
  if (Object.keys(meta).length === 0) return undefined;
  return { [PUBLISHER_META]: { [TOOLHIVE_NAMESPACE]: { [key]: meta } } };
}

function statusOf(src: Obj): string {
  return typeof src.status === "string" && src.status.toLowerCase() === "deprecated"
    ? "deprecated"
    : "active";
}

function tagsOf(src: Obj): string[] {
  return Array.isArray(src.tags) ? src.tags.filter((t): t is string => typeof t === "string") : [];
}

/** Converts one toolhive container server. */
export function convertToolhiveServer(short: string, src: Obj): ServerEntry {
  const transportType = typeof src.transport === "string" ? src.transport : "stdio";
  const transport: Obj = { type: transportType };
  if (transportType !== "stdio") {
    transport.url = `http://localhost:${typeof src.target_port === "number" ? src.target_port : 8080}`;
  }
  const pkg: Obj = { registryType: "oci", identifier: src.image, transport };
  const env = envVars(src.env_vars);
  if (env !== undefined) pkg.environmentVariables = env;
  return toolhiveEntry(short, src, { packages: [pkg] }, String(src.image));
}

/** Converts one toolhive remote server. */
export function convertToolhiveRemote(short: string, src: Obj): ServerEntry {
  const remote: Obj = {
    type: typeof src.transport === "string" ? src.transport : "streamable-http",
    url: src.url,
  };
  const h = headers(src.headers);
  if (h !== undefined) remote.headers = h;
  return toolhiveEntry(short, src, { remotes: [remote] }, String(src.url));
}

/**
 * What a container and a remote server of a toolhive catalog share: the entry, its name, text,
 * repository and publisher metadata (keyed by `where`: the image or the URL); `delivery` is its
 * `packages` or its `remotes`.
 */
function toolhiveEntry(
  short: string,
  src: Obj,
  delivery: Partial<Pick<ServerJson, "packages" | "remotes">>,
  where: string,
): ServerEntry {
  const name = `${TOOLHIVE_NAMESPACE}/${typeof src.name === "string" ? src.name : short}`;
  const server: ServerJson = {
    $schema: SERVER_JSON_SCHEMA,
    name,
    description: typeof src.description === "string" ? src.description : "",
    title: short,
    version: TOOLHIVE_VERSION,
  };
  const repo = repository(src.repository_url);
  if (repo !== undefined) server.repository = repo;
  Object.assign(server, delivery);
  const meta = publisherMeta(where, src);
  if (meta !== undefined) server._meta = meta;
  return { name, version: TOOLHIVE_VERSION, server, tags: tagsOf(src), status: statusOf(src) };
}

export function isToolhiveDocument(doc: unknown): boolean {
  return isObject(doc) && (isObject(doc.servers) || isObject(doc.remote_servers));
}

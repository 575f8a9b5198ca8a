// The entry a publish body describes: the server.json it gives (checked against the official
// server.json rules, schemas/registry/server-json.yaml), a streamable-http remote from `url`,
// and the entry's claims.
import { defaultSchemaSet, SCHEMA_BASE } from "../../schema/index.js";
import { fail, FieldsError, type FieldError } from "../http/problem.js";
import type { ServerEntry, ServerJson } from "./model.js";
import { versionProblem } from "./names.js";

export const SERVER_JSON_SCHEMA_ID = `${SCHEMA_BASE}registry/server-json.yaml`;

/** Body fields that are server.json's; `url` and `claims` are the publish payload's own. */
const SERVER_FIELDS = new Set([
  "$schema",
  "name",
  "version",
  "description",
  "title",
  "repository",
  "websiteUrl",
  "icons",
  "packages",
  "remotes",
  "_meta",
]);

function isHttpUrl(url: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

/** `/packages/0/version` as `body.packages[0].version`. */
function bodyLocation(pointer: string): string {
  let out = "body";
  for (const seg of pointer.split("/").slice(1)) {
    const key = seg.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(key) ? `[${key}]` : `.${key}`;
  }
  return out;
}

/** Where a server.json document breaks the official rules (empty when it keeps them). */
export function serverJsonProblems(server: unknown): FieldError[] {
  return defaultSchemaSet()
    .validateSchema(SERVER_JSON_SCHEMA_ID, server)
    .filter((i) => i.unknownField !== true)
    .map((i) => ({ location: bodyLocation(i.path), message: i.message }));
}

function refuse(errors: FieldError[]): never {
  throw new FieldsError(
    "ERR_INVALID_ENTRY",
    `the server.json breaks the registry's rules: ${errors.map((e) => `${e.location}: ${e.message}`).join("; ")}`,
    errors,
  );
}

/** The claims of a request body (`body.claims`): 400 naming each bad value. */
export function entryClaimsOf(raw: unknown): Record<string, string | string[]> | undefined {
  if (raw === undefined) return undefined;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    refuse([{ location: "body.claims", message: "must be an object of strings or string lists" }]);
  }
  const bad = Object.entries(raw).filter(
    ([, v]) =>
      !(typeof v === "string" || (Array.isArray(v) && v.every((x) => typeof x === "string"))),
  );
  if (bad.length > 0) {
    refuse(
      bad.map(([k]) => ({
        location: `body.claims.${k}`,
        message: "must be a string or a list of strings",
      })),
    );
  }
  return raw as Record<string, string | string[]>;
}

/** The server.json schemas the rules are written from; a publish must name one of them. */
export const SERVER_JSON_SCHEMAS = ["2025-12-11", "2025-10-17"].map(
  (v) => `https://static.modelcontextprotocol.io/schemas/${v}/server.schema.json`,
);

/**
 * Where a publish's `$schema` is missing or names a schema the rules are not written from: the
 * official registry's publish requires it, and a document for another schema is checked by
 * rules that are not its own.
 */
function schemaProblem(schema: unknown): FieldError | undefined {
  if (schema === undefined) return { location: "body.$schema", message: "is required" };
  if (typeof schema !== "string" || !SERVER_JSON_SCHEMAS.includes(schema)) {
    return {
      location: "body.$schema",
      message: `must be one of the server.json schemas ${SERVER_JSON_SCHEMAS.join(", ")}`,
    };
  }
  return undefined;
}

export interface PublishRules {
  /** `$schema` must name a known server.json schema (the official publish API's rule). */
  requireSchema?: boolean;
}

/** The entry a publish payload describes; 400 naming each bad field, 413 on a large _meta. */
export function publishedEntry(
  body: unknown,
  maxMetaSize: number,
  rules: PublishRules = {},
): ServerEntry {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    fail("ERR_INVALID_ENTRY", "the body must be a JSON object");
  }
  const b = body as Record<string, unknown>;
  if (b._meta !== undefined) {
    const size = Buffer.byteLength(JSON.stringify(b._meta));
    if (size > maxMetaSize) {
      fail("ERR_META_TOO_LARGE", `_meta is ${size} bytes; the limit is ${maxMetaSize}`);
    }
  }
  const server: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) if (SERVER_FIELDS.has(k)) server[k] = v;
  const errors: FieldError[] = [];
  const sp = rules.requireSchema === true ? schemaProblem(b.$schema) : undefined;
  if (sp !== undefined) errors.push(sp);
  if (b.url !== undefined) {
    if (typeof b.url !== "string" || !isHttpUrl(b.url)) {
      errors.push({ location: "body.url", message: "must be an http(s) URL" });
    } else if (b.remotes === undefined) {
      server.remotes = [{ type: "streamable-http", url: b.url }];
    }
  }
  errors.push(...serverJsonProblems(server));
  // The version names one release: not a range and not `latest` (which reads resolve).
  const vp = typeof b.version === "string" ? versionProblem(b.version) : undefined;
  if (vp !== undefined) errors.push({ location: "body.version", message: vp });
  // `all` names every version in the status operations: no version may be called that.
  if (b.version === "all") {
    errors.push({ location: "body.version", message: `"all" is reserved and cannot be a version` });
  }
  if (server.remotes === undefined && server.packages === undefined) {
    errors.push({
      location: "body.url",
      message: "give url (or remotes or packages): how clients reach the server",
    });
  }
  const claims = entryClaimsOf(b.claims);
  if (errors.length > 0) refuse(errors);
  const doc = server as ServerJson;
  const entry: ServerEntry = {
    name: doc.name,
    version: doc.version,
    server: doc,
    tags: [],
    status: "active",
  };
  if (claims !== undefined) entry.claims = claims;
  return entry;
}

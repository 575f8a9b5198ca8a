// The entry a publish body describes: the server.json fields it gives, a streamable-http
// remote from `url`, and the entry's claims.
import { fail } from "../http/problem.js";
import type { ServerEntry, ServerJson } from "./model.js";
import { nameProblem, versionProblem } from "./names.js";

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

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isHttpUrl(url: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

/** The entry a publish payload describes; 400 / 413 on a bad payload. */
export function publishedEntry(body: unknown, maxMetaSize: number): ServerEntry {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    fail("ERR_INVALID_ENTRY", "the body must be a JSON object");
  }
  const b = body as Record<string, unknown>;
  const np = nameProblem(b.name);
  if (np !== undefined) fail("ERR_INVALID_ENTRY", np);
  const vp = versionProblem(b.version);
  if (vp !== undefined) fail("ERR_INVALID_ENTRY", vp);
  for (const f of ["description", "title", "url"]) {
    if (b[f] !== undefined && typeof b[f] !== "string")
      fail("ERR_INVALID_ENTRY", `${f} must be a string`);
  }
  if (typeof b.url === "string" && !isHttpUrl(b.url)) {
    fail("ERR_INVALID_ENTRY", `url must be an http(s) URL, got "${b.url.slice(0, 200)}"`);
  }
  if (b._meta !== undefined) {
    if (b._meta === null || typeof b._meta !== "object" || Array.isArray(b._meta)) {
      fail("ERR_INVALID_ENTRY", "_meta must be an object");
    }
    const size = Buffer.byteLength(JSON.stringify(b._meta));
    if (size > maxMetaSize) {
      fail("ERR_META_TOO_LARGE", `_meta is ${size} bytes; the limit is ${maxMetaSize}`);
    }
  }
  for (const f of ["packages", "remotes", "icons"]) {
    if (b[f] === undefined) continue;
    if (!Array.isArray(b[f])) fail("ERR_INVALID_ENTRY", `${f} must be a list`);
    if (!(b[f] as unknown[]).every(isObject)) fail("ERR_INVALID_ENTRY", `${f} must be objects`);
  }
  // A remote is what clients connect to: an http(s) URL, never javascript: or file:.
  for (const [i, r] of ((b.remotes as Record<string, unknown>[] | undefined) ?? []).entries()) {
    if (typeof r.type !== "string" || typeof r.url !== "string" || !isHttpUrl(r.url)) {
      fail("ERR_INVALID_ENTRY", `remotes[${i}] needs a type and an http(s) url`);
    }
  }
  let claims: Record<string, string | string[]> | undefined;
  if (b.claims !== undefined) {
    if (b.claims === null || typeof b.claims !== "object" || Array.isArray(b.claims)) {
      fail("ERR_INVALID_ENTRY", "claims must be an object of strings or string lists");
    }
    for (const [k, v] of Object.entries(b.claims)) {
      const okv =
        typeof v === "string" || (Array.isArray(v) && v.every((x) => typeof x === "string"));
      if (!okv) fail("ERR_INVALID_ENTRY", `claims.${k} must be a string or a list of strings`);
    }
    claims = b.claims as Record<string, string | string[]>;
  }
  const server: ServerJson = { name: b.name as string, version: b.version as string };
  for (const [k, v] of Object.entries(b)) if (SERVER_FIELDS.has(k)) server[k] = v;
  if (b.url !== undefined && b.remotes === undefined) {
    server.remotes = [{ type: "streamable-http", url: b.url }];
  }
  if (server.remotes === undefined && server.packages === undefined) {
    fail("ERR_INVALID_ENTRY", "give url (or remotes or packages): how clients reach the server");
  }
  const entry: ServerEntry = {
    name: server.name,
    version: server.version,
    server,
    tags: [],
    status: "active",
  };
  if (claims !== undefined) entry.claims = claims;
  return entry;
}

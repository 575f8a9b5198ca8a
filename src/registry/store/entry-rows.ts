// An entry as the columns the store writes (name, version, server JSON, search text, claims,
// status, digest), and the content digest that tells a changed entry from an unchanged one.
import { createHash } from "node:crypto";
import type { Claims } from "../config/types.js";
import { searchText, type ServerEntry } from "../formats/model.js";

/**
 * An entry's content digest: sha256 of `JSON.stringify([server, claims ?? null, status])`,
 * hashed from the server's JSON text the caller already has (the same bytes, no second copy).
 */
export function digestOfJson(
  serverJson: string,
  claims: Claims | undefined,
  status: string,
): string {
  return createHash("sha256")
    .update("[")
    .update(serverJson)
    .update(`,${JSON.stringify(claims ?? null)},${JSON.stringify(status)}]`)
    .digest("base64url");
}

/** An entry's stored columns: name, version, server JSON, search text, claims, status, digest. */
export function rowValues(
  e: ServerEntry,
): [string, string, string, string, string | null, string, string] {
  const json = JSON.stringify(e.server);
  const claims = e.claims === undefined ? null : JSON.stringify(e.claims);
  return [
    e.name,
    e.version,
    json,
    searchText(e.server),
    claims,
    e.status,
    digestOfJson(json, e.claims, e.status),
  ];
}

/** Columns of one staged row. */
export const STAGE_COLUMNS = 7;

/**
 * Entries turned into staging rows as they come: each entry's columns as the text the INSERT
 * binds (name, version, server JSON, search text, claims JSON, status, digest). A sync keeps
 * these compact strings rather than the parsed documents while a batch waits to be written.
 */
export class StageRows {
  /** STAGE_COLUMNS values per row. */
  readonly columns: (string | null)[] = [];

  get count(): number {
    return this.columns.length / STAGE_COLUMNS;
  }

  add(e: ServerEntry): void {
    this.columns.push(...rowValues(e));
  }
}

/**
 * Rows per staging INSERT. Each row is 7 bind parameters passed as they are (no array literal
 * to build and escape on either side), so one statement's message stays around a megabyte.
 */
export const STAGE_ROWS = 500;

// The registries: ordered views over sources, with the claims that gate who reads them.
import type { Claims } from "../config/types.js";
import { McpfleetError } from "../../errors.js";
import { TOPOLOGY_LOCK, type StoreAccess } from "./access.js";
import type { Queryable } from "./queryable.js";
import type { Origin, RegistryRecord } from "./records.js";
import { toRegistry } from "./rows.js";

export async function listRegistries(s: StoreAccess): Promise<RegistryRecord[]> {
  const r = await s.db.query(`SELECT * FROM registries ORDER BY name`);
  return r.rows.map(toRegistry);
}

export async function getRegistry(
  s: StoreAccess,
  name: string,
): Promise<RegistryRecord | undefined> {
  const r = await s.db.query(`SELECT * FROM registries WHERE name = $1`, [name]);
  return r.rows[0] === undefined ? undefined : toRegistry(r.rows[0]);
}

/** See Store.putRegistry. */
export async function putRegistry(
  s: StoreAccess,
  name: string,
  sources: string[],
  claims: Claims | undefined,
  origin: Origin,
  guard?: (existing: RegistryRecord | undefined) => void,
): Promise<{ created: boolean }> {
  return s.write(async (tx) => {
    await s.sql.lock(tx, TOPOLOGY_LOCK);
    if (guard !== undefined) {
      const r = await tx.query(`SELECT * FROM registries WHERE name = $1`, [name]);
      guard(r.rows[0] === undefined ? undefined : toRegistry(r.rows[0]));
    }
    const known = await tx.query<{ name: string }>(
      `SELECT name FROM sources WHERE ${s.sql.inList("name", "$1")}`,
      [sources],
    );
    const missing = sources.filter((src) => !known.rows.some((k) => k.name === src));
    if (missing.length > 0) {
      throw new McpfleetError(
        "ERR_INVALID_RESOURCE",
        `registry "${name}" names unknown source(s): ${missing.join(", ")}`,
      );
    }
    const existed = await tx.query(`SELECT 1 FROM registries WHERE name = $1`, [name]);
    await upsertRegistry(s, tx, name, sources, claims, origin);
    return { created: existed.rows.length === 0 };
  });
}

/** Writes a registry row inside the caller's transaction. */
export async function upsertRegistry(
  s: StoreAccess,
  tx: Queryable,
  name: string,
  sources: string[],
  claims: Claims | undefined,
  origin: Origin,
): Promise<void> {
  const list = s.sql.cast("$2", "text[]");
  const json = s.sql.cast("$3", "jsonb");
  await tx.query(
    `INSERT INTO registries (name, sources, claims, origin) VALUES ($1, ${list}, ${json}, $4)
       ON CONFLICT (name) DO UPDATE SET sources = ${list}, claims = ${json}, origin = $4,
         updated_at = now()`,
    [name, sources, claims === undefined ? null : JSON.stringify(claims), origin],
  );
}

export async function deleteRegistry(s: StoreAccess, name: string): Promise<boolean> {
  return s.write(async (tx) => {
    const r = await tx.query(`DELETE FROM registries WHERE name = $1 RETURNING name`, [name]);
    return r.rows.length > 0;
  });
}

// The sources the store knows: their kind and configuration, and where they were defined.
import { McpfleetError } from "../../errors.js";
import { TOPOLOGY_LOCK, type StoreAccess } from "./access.js";
import type { Origin, SourceRecord } from "./records.js";
import { toSource } from "./rows.js";

export async function listSources(s: StoreAccess): Promise<SourceRecord[]> {
  const r = await s.db.query(`SELECT * FROM sources ORDER BY name`);
  return r.rows.map(toSource);
}

export async function getSource(s: StoreAccess, name: string): Promise<SourceRecord | undefined> {
  const r = await s.db.query(`SELECT * FROM sources WHERE name = $1`, [name]);
  return r.rows[0] === undefined ? undefined : toSource(r.rows[0]);
}

/** See Store.putSource. */
export async function putSource(
  s: StoreAccess,
  name: string,
  kind: string,
  config: Record<string, unknown>,
  origin: Origin,
  guard?: (existing: SourceRecord | undefined, all: SourceRecord[]) => void,
): Promise<{ created: boolean }> {
  return s.write(async (tx) => {
    await s.sql.lock(tx, TOPOLOGY_LOCK);
    if (guard !== undefined) {
      const all = (await tx.query(`SELECT * FROM sources ORDER BY name`)).rows.map(toSource);
      guard(
        all.find((src) => src.name === name),
        all,
      );
    }
    const existed = await tx.query(`SELECT 1 FROM sources WHERE name = $1`, [name]);
    const json = s.sql.cast("$3", "jsonb");
    await tx.query(
      `INSERT INTO sources (name, kind, config, origin) VALUES ($1, $2, ${json}, $4)
         ON CONFLICT (name) DO UPDATE SET kind = $2, config = ${json}, origin = $4,
           updated_at = now()`,
      [name, kind, JSON.stringify(config), origin],
    );
    await tx.query(
      `INSERT INTO source_status (source, phase) VALUES ($1, $2)
         ON CONFLICT (source) DO NOTHING`,
      [name, kind === "managed" ? "Ready" : "Pending"],
    );
    return { created: existed.rows.length === 0 };
  });
}

/** Deletes a source with its entries and status; refuses while a registry uses it. */
export async function deleteSource(s: StoreAccess, name: string): Promise<boolean> {
  return s.write(async (tx) => {
    await s.sql.lock(tx, TOPOLOGY_LOCK);
    const users = await tx.query<{ name: string }>(
      `SELECT name FROM registries WHERE ${s.sql.listHas("sources", "$1")} ORDER BY name`,
      [name],
    );
    if (users.rows.length > 0) {
      throw new McpfleetError(
        "ERR_SOURCE_IN_USE",
        `source "${name}" is used by registr${users.rows.length > 1 ? "ies" : "y"} ` +
          users.rows.map((u) => `"${u.name}"`).join(", "),
      );
    }
    const r = await tx.query(`DELETE FROM sources WHERE name = $1 RETURNING name`, [name]);
    await tx.query(`DELETE FROM entries WHERE source = $1`, [name]);
    await tx.query(`DELETE FROM source_status WHERE source = $1`, [name]);
    return r.rows.length > 0;
  });
}

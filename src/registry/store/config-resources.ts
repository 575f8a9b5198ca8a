// The sources and registries the configuration file defines, made the store's `config`-origin
// resources in one transaction.
import type { Claims } from "../config/types.js";
import { TOPOLOGY_LOCK, type StoreAccess } from "./access.js";
import { upsertRegistry } from "./registries.js";

/** See Store.applyConfigResources. */
export async function applyConfigResources(
  s: StoreAccess,
  sources: { name: string; kind: string; config: Record<string, unknown> }[],
  registries: { name: string; sources: string[]; claims?: Claims }[],
): Promise<void> {
  await s.write(async (tx) => {
    await s.sql.lock(tx, TOPOLOGY_LOCK);
    const regNames = registries.map((r) => r.name);
    const json = s.sql.cast("$3", "jsonb");
    await tx.query(
      `DELETE FROM registries WHERE origin = 'config' AND NOT (${s.sql.inList("name", "$1")})`,
      [regNames],
    );
    for (const src of sources) {
      await tx.query(
        `INSERT INTO sources (name, kind, config, origin) VALUES ($1, $2, ${json}, 'config')
           ON CONFLICT (name) DO UPDATE SET kind = $2, config = ${json}, origin = 'config',
             updated_at = CASE WHEN sources.config = ${json} THEN sources.updated_at ELSE now() END`,
        [src.name, src.kind, JSON.stringify(src.config)],
      );
      await tx.query(
        `INSERT INTO source_status (source, phase) VALUES ($1, $2)
           ON CONFLICT (source) DO NOTHING`,
        [src.name, src.kind === "managed" ? "Ready" : "Pending"],
      );
    }
    const srcNames = sources.map((src) => src.name);
    const gone = await tx.query<{ name: string }>(
      `SELECT name FROM sources WHERE origin = 'config' AND NOT (${s.sql.inList("name", "$1")})`,
      [srcNames],
    );
    for (const g of gone.rows) {
      await tx.query(`DELETE FROM entries WHERE source = $1`, [g.name]);
      await tx.query(`DELETE FROM source_status WHERE source = $1`, [g.name]);
      await tx.query(`DELETE FROM sources WHERE name = $1`, [g.name]);
    }
    for (const r of registries) {
      await upsertRegistry(s, tx, r.name, r.sources, r.claims, "config");
    }
  });
}

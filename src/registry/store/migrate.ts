// Applies MIGRATIONS in order, each in its own transaction, recording what ran in
// mcpfleet_migrations. Callers serialize concurrent replicas (PostgreSQL: an advisory lock).
import type { Queryable } from "./db.js";
import { MIGRATIONS } from "./migrations.js";

export const MIGRATION_LOCK_ID = 727_100_001;

/** Runs the pending migrations; `begin`/`commit` are plain statements on one connection. */
export async function applyMigrations(conn: Queryable): Promise<number> {
  await conn.query(
    `CREATE TABLE IF NOT EXISTS mcpfleet_migrations (
       version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  const done = await conn.query<{ version: number }>(`SELECT version FROM mcpfleet_migrations`);
  const applied = new Set(done.rows.map((r) => Number(r.version)));
  let count = 0;
  for (const m of MIGRATIONS) {
    if (applied.has(m.version)) continue;
    await conn.query("BEGIN");
    try {
      for (const stmt of splitStatements(m.sql)) await conn.query(stmt);
      await conn.query(`INSERT INTO mcpfleet_migrations (version, name) VALUES ($1, $2)`, [
        m.version,
        m.name,
      ]);
      await conn.query("COMMIT");
      count++;
    } catch (err) {
      await conn.query("ROLLBACK");
      throw err;
    }
  }
  return count;
}

/** Splits a migration into statements (our migrations hold no semicolons inside literals). */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*\n/)
    .map((s) => s.trim().replace(/;$/, ""))
    .filter((s) => s !== "");
}

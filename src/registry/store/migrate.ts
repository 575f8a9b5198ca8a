// Applies a dialect's migrations in order, each in its own transaction, recording what ran in
// mcpfleet_migrations. Callers serialize concurrent replicas (PostgreSQL: an advisory lock).
import type { Queryable } from "./db.js";
import type { Dialect } from "./dialect.js";

export const MIGRATION_LOCK_ID = 727_100_001;

/** Runs the pending migrations; `begin`/`commit` are plain statements on one connection. */
export async function applyMigrations(conn: Queryable, dialect: Dialect): Promise<number> {
  await conn.query(dialect.migrationsTable);
  const done = await conn.query<{ version: number }>(`SELECT version FROM mcpfleet_migrations`);
  const applied = new Set(done.rows.map((r) => Number(r.version)));
  let count = 0;
  for (const m of dialect.migrations) {
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

/**
 * Splits a migration into statements at a semicolon ending a line (our migrations hold no
 * semicolons inside literals, and a trigger's body is written on one line).
 */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*\n/)
    .map((s) => s.trim().replace(/;$/, ""))
    .filter((s) => s !== "");
}

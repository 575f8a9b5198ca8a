// The embedded store's driver: a data directory that outlives the process, and transactions
// taken one at a time, with reads never seeing what an open transaction has not committed.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SQLITE_FILE, SqliteDb } from "../../src/registry/store/sqlite.js";
import { Store } from "../../src/registry/store/store.js";
import { entry } from "./helpers.js";

describe("embedded store (SQLite)", () => {
  const dir = mkdtempSync(join(tmpdir(), "store-sqlite-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps sources and entries in its data directory across a reopen", async () => {
    const dataDir = join(dir, "data");
    const first = new Store(SqliteDb.open(dataDir));
    await first.init();
    await first.putSource("team", "managed", { managed: {} }, "api");
    await first.publish("team", entry("io.t/kept", "1.0.0"));
    const gen = first.generation;
    await first.close();
    expect(existsSync(join(dataDir, SQLITE_FILE))).toBe(true);

    const again = new Store(SqliteDb.open(dataDir));
    await again.init();
    try {
      expect((await again.listSources()).map((s) => s.name)).toEqual(["team"]);
      const [kept] = await again.listVersions(["team"], "io.t/kept");
      expect(kept).toMatchObject({ version: "1.0.0", isLatest: true, status: "active" });
      expect(again.generation).toBe(gen);
      const applied = await again.db.query<{ n: number }>(
        `SELECT count(*) AS n FROM mcpfleet_migrations`,
      );
      expect(applied.rows[0]?.n).toBe(again.db.dialect.migrations.length);
    } finally {
      await again.close();
    }
  });

  it("makes a read wait for an open transaction instead of seeing its rows", async () => {
    const db = SqliteDb.open();
    const store = new Store(db);
    await store.init();
    try {
      let release = (): void => undefined;
      const held = new Promise<void>((r) => (release = r));
      const writing = db.transaction(async (tx) => {
        await tx.query(`INSERT INTO store_generation (value) VALUES (100)`);
        await held;
      });
      let seen: number[] | undefined;
      const reading = db
        .query<{ value: number }>(`SELECT value FROM store_generation ORDER BY value`)
        .then((r) => (seen = r.rows.map((x) => x.value)));
      await new Promise((r) => setTimeout(r, 20));
      expect(seen).toBeUndefined();
      release();
      await Promise.all([writing, reading]);
      expect(seen).toEqual([0, 100]);
    } finally {
      await store.close();
    }
  });

  it("rolls a failed transaction back and takes the next one", async () => {
    const db = SqliteDb.open();
    const store = new Store(db);
    await store.init();
    try {
      await expect(
        db.transaction(async (tx) => {
          await tx.query(`INSERT INTO store_generation (value) VALUES (7)`);
          throw new Error("refused");
        }),
      ).rejects.toThrow("refused");
      await db.transaction(async (tx) => {
        await tx.query(`INSERT INTO store_generation (value) VALUES (8)`);
      });
      const r = await db.query<{ value: number }>(
        `SELECT value FROM store_generation ORDER BY value`,
      );
      expect(r.rows.map((x) => x.value)).toEqual([0, 8]);
    } finally {
      await store.close();
    }
  });
});

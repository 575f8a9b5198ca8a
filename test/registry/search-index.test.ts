// Uncached search (`search` over name, title and description, case-insensitive substring) is
// answered through the trigram index of migration 2 on both stores, with the same semantics:
// `%` and `_` in a term match themselves.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/registry/store/store.js";
import { entry, storeFactories } from "./helpers.js";

for (const factory of storeFactories()) {
  describe(`search index (${factory.driver})`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await factory.open();
      await store.putSource("many", "file", { file: { path: "m.json" } }, "api");
      const entries = Array.from({ length: 20_000 }, (_, i) =>
        entry(`io.many/s-${String(i).padStart(5, "0")}`, "1.0.0", {
          server: {
            name: `io.many/s-${String(i).padStart(5, "0")}`,
            version: "1.0.0",
            title: `Server ${i}`,
            description: i === 4321 ? "Counts 100% of_the Widgets" : `plain server number ${i}`,
          },
        }),
      );
      entries.push(
        entry("io.many/pct", "1.0.0", {
          server: { name: "io.many/pct", version: "1.0.0", description: "100x ofXthe widgets" },
        }),
      );
      const id = store.beginStaging();
      await store.stageBatch(id, entries);
      await store.commitStaging(id, "many", "h");
      // Planner statistics, as autovacuum would gather them (on PostgreSQL only the owner, the
      // migration user, may ANALYZE).
      if (factory.lastOptions === undefined) {
        await store.db.query(`ANALYZE entries`);
      } else {
        const o = factory.lastOptions();
        const owner = new pg.Client({
          host: o.host,
          port: o.port,
          database: o.database,
          user: o.migrationUser,
          password: o.migrationPassword,
        });
        await owner.connect();
        await owner.query(`ANALYZE entries`).finally(() => owner.end());
      }
    });
    afterAll(async () => {
      await factory.teardown();
    });

    it("matches % and _ in a term literally, case-insensitively", async () => {
      const hit = await store.listEntries(["many"], { limit: 10, search: "100% OF_THE widgets" });
      expect(hit.map((e) => e.name)).toEqual(["io.many/s-04321"]);
      expect(await store.listEntries(["many"], { limit: 10, search: "100%x" })).toEqual([]);
      const title = await store.listEntries(["many"], { limit: 10, search: "SERVER 4999" });
      expect(title.map((e) => e.name)).toEqual(["io.many/s-04999"]);
    });

    it("plans a search through the trigram index", async () => {
      const plan = await store.db.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT name FROM entries e WHERE e.source = ANY($1::text[]) AND e.search LIKE $2
         ORDER BY e.name, e.version LIMIT 30`,
        [["many"], "%counts 100\\% of\\_the widgets%"],
      );
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("entries_search_trgm");
    });
  });
}

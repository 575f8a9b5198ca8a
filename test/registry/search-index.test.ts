// Uncached search (`search` over name, title and description, case-insensitive substring) is
// answered through a trigram index on both stores (pg_trgm on PostgreSQL, FTS5's trigram
// tokenizer on SQLite), with the same semantics: `%`, `_` and `"` in a term match themselves,
// and terms shorter than a trigram still match.
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
            description:
              i === 4321
                ? "Counts 100% of_the Widgets"
                : i === 777
                  ? 'Says "quoted" ÄÖ things'
                  : `plain server number ${i}`,
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
      // No ANALYZE: right after a sync the planner has no statistics on the new rows (and on
      // PostgreSQL only the owner may gather them), which is when search must still use the
      // index.
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

    it("matches quotes and non-ASCII letters, and terms shorter than a trigram", async () => {
      const quoted = await store.listEntries(["many"], { limit: 10, search: '"QUOTED" äö' });
      expect(quoted.map((e) => e.name)).toEqual(["io.many/s-00777"]);
      const short = await store.listEntries(["many"], { limit: 3, search: "Ö" });
      expect(short.map((e) => e.name)).toEqual(["io.many/s-00777"]);
      const two = await store.listEntries(["many"], { limit: 3, search: "r 1" });
      expect(two.map((e) => e.name)).toEqual([
        "io.many/s-00001",
        "io.many/s-00010",
        "io.many/s-00011",
      ]);
    });

    it("keeps the index in step when entries change and go", async () => {
      const id = store.beginStaging();
      await store.stageBatch(id, [
        entry("io.many/pct", "1.0.0", {
          server: { name: "io.many/pct", version: "1.0.0", description: "now about gadgets" },
        }),
      ]);
      await store.putSource("other", "file", { file: { path: "o.json" } }, "api");
      await store.commitStaging(id, "other", "h");
      expect(
        (await store.listEntries(["other"], { limit: 3, search: "gadgets" })).map((e) => e.name),
      ).toEqual(["io.many/pct"]);
      const again = store.beginStaging();
      await store.stageBatch(again, [
        entry("io.many/pct", "1.0.0", {
          server: { name: "io.many/pct", version: "1.0.0", description: "now about sprockets" },
        }),
      ]);
      await store.commitStaging(again, "other", "h2");
      expect(await store.listEntries(["other"], { limit: 3, search: "gadgets" })).toEqual([]);
      expect(
        (await store.listEntries(["other"], { limit: 3, search: "sprockets" })).map((e) => e.name),
      ).toEqual(["io.many/pct"]);
      expect(await store.deleteSource("other")).toBe(true);
      expect(await store.listEntries(["other"], { limit: 3, search: "sprockets" })).toEqual([]);
    });

    it("plans a search through the trigram index without statistics", async () => {
      const params: unknown[] = [["many"]];
      const where = store.db.dialect.search("counts 100% of_the widgets", params);
      const explain = factory.driver === "sqlite" ? "EXPLAIN QUERY PLAN" : "EXPLAIN";
      const plan = await store.db.query<Record<string, unknown>>(
        `${explain} SELECT name FROM entries e WHERE ${store.db.dialect.view(1)} AND ${where}
         ORDER BY e.name, e.version LIMIT 30`,
        params,
      );
      const text = plan.rows.map((r) => String(r.detail ?? r["QUERY PLAN"])).join("\n");
      expect(text).toContain(
        factory.driver === "sqlite" ? "entries_search" : "entries_search_trgm",
      );
      if (factory.driver === "sqlite") expect(text).toContain("INTEGER PRIMARY KEY");
    });
  });
}

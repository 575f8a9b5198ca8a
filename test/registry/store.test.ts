import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { latestVersion, type Store } from "../../src/registry/store/store.js";
import { entry, storeFactories } from "./helpers.js";

for (const factory of storeFactories()) {
  describe(`store (${factory.driver})`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await factory.open();
    });
    afterAll(async () => {
      await factory.teardown();
    });

    async function sync(source: string, entries: ReturnType<typeof entry>[], hash = "h") {
      const id = store.beginStaging();
      await store.stageBatch(id, entries);
      return store.commitStaging(id, source, hash);
    }

    it("runs migrations once and again without change", async () => {
      await store.init();
      const r = await store.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM mcpfleet_migrations`,
      );
      expect(Number(r.rows[0]?.n)).toBe(store.db.dialect.migrations.length);
    });

    it("keeps sources and registries; refuses to delete a source in use", async () => {
      await store.putSource("alpha", "file", { file: { path: "a.json" } }, "config");
      await store.putSource("beta", "managed", { managed: {} }, "api");
      await store.putRegistry("main", ["alpha", "beta"], { team: "x" }, "config");
      expect((await store.listSources()).map((s) => s.name)).toEqual(["alpha", "beta"]);
      const reg = await store.getRegistry("main");
      expect(reg).toMatchObject({ sources: ["alpha", "beta"], claims: { team: "x" } });
      await expect(store.deleteSource("beta")).rejects.toMatchObject({ code: "ERR_SOURCE_IN_USE" });
      await expect(store.putRegistry("bad", ["nope"], undefined, "api")).rejects.toMatchObject({
        code: "ERR_INVALID_RESOURCE",
      });
      expect((await store.getStatus("alpha"))?.phase).toBe("Pending");
    });

    it("replaces a source's entries in one sync, keeping publishedAt and unchanged updatedAt", async () => {
      await sync("alpha", [
        entry("io.x/a", "1.0.0"),
        entry("io.x/a", "1.10.0"),
        entry("io.x/b", "2.0.0"),
      ]);
      let page = await store.listEntries(["alpha"], { limit: 10 });
      expect(page.map((e) => `${e.name}@${e.version}:${e.isLatest}`)).toEqual([
        "io.x/a@1.0.0:false",
        "io.x/a@1.10.0:true",
        "io.x/b@2.0.0:true",
      ]);
      const before = page;
      await new Promise((r) => setTimeout(r, 20));
      const changed = entry("io.x/b", "2.0.0", {
        server: { name: "io.x/b", version: "2.0.0", description: "changed" },
      });
      const n = await sync("alpha", [entry("io.x/a", "1.10.0"), changed], "h2");
      expect(n).toBe(2);
      page = await store.listEntries(["alpha"], { limit: 10 });
      expect(page.map((e) => e.name + "@" + e.version)).toEqual(["io.x/a@1.10.0", "io.x/b@2.0.0"]);
      const a = page[0];
      const b = page[1];
      expect(a?.updatedAt).toBe(before[1]?.updatedAt);
      expect(a?.publishedAt).toBe(before[1]?.publishedAt);
      expect(b?.publishedAt).toBe(before[2]?.publishedAt);
      expect(b?.updatedAt).not.toBe(before[2]?.updatedAt);
      const st = await store.getStatus("alpha");
      expect(st).toMatchObject({ phase: "Ready", entryCount: 2, contentHash: "h2" });
      expect(await store.db.query(`SELECT * FROM entries_staging`)).toMatchObject({ rows: [] });
    });

    it("keeps the last good data when a sync fails", async () => {
      await store.markFailed("alpha", "fetch failed: boom");
      const st = await store.getStatus("alpha");
      expect(st).toMatchObject({ phase: "Failed", message: "fetch failed: boom", entryCount: 2 });
      expect(await store.listEntries(["alpha"], { limit: 10 })).toHaveLength(2);
    });

    it("counts the sync attempts since the last success", async () => {
      const attempts = async () => (await store.getStatus("alpha"))?.attemptCount;
      await store.markSyncing("alpha");
      await store.markFailed("alpha", "fetch failed: one");
      await store.markSyncing("alpha");
      expect(await attempts()).toBe(2);
      await store.markFailed("alpha", "fetch failed: two");
      expect(await attempts()).toBe(2);
      await store.markUnchanged("alpha");
      expect(await attempts()).toBe(0);
      await store.markSyncing("alpha");
      await store.markFailed("alpha", "fetch failed: three");
      expect(await attempts()).toBe(1);
      // The same entries as the sync before: only the status changes.
      const b = entry("io.x/b", "2.0.0", {
        server: { name: "io.x/b", version: "2.0.0", description: "changed" },
      });
      await sync("alpha", [entry("io.x/a", "1.10.0"), b], "h2");
      expect(await attempts()).toBe(0);
    });

    it("serves a name from the first source of a registry that has it", async () => {
      await store.putSource("gamma", "file", { file: { path: "g.json" } }, "config");
      await sync("gamma", [entry("io.x/a", "9.0.0"), entry("io.x/c", "1.0.0")]);
      const page = await store.listEntries(["alpha", "gamma"], { limit: 10 });
      expect(page.map((e) => `${e.source}:${e.name}@${e.version}`)).toEqual([
        "alpha:io.x/a@1.10.0",
        "alpha:io.x/b@2.0.0",
        "gamma:io.x/c@1.0.0",
      ]);
      const rev = await store.listEntries(["gamma", "alpha"], { limit: 10 });
      expect(rev.map((e) => `${e.source}:${e.name}`)).toEqual([
        "gamma:io.x/a",
        "alpha:io.x/b",
        "gamma:io.x/c",
      ]);
      expect(
        (await store.listVersions(["gamma", "alpha"], "io.x/a")).map((e) => e.version),
      ).toEqual(["9.0.0"]);
    });

    it("pages by keyset, searches and filters", async () => {
      const p1 = await store.listEntries(["alpha", "gamma"], { limit: 2 });
      const last = p1[1];
      expect(last).toBeDefined();
      const p2 = await store.listEntries(["alpha", "gamma"], {
        limit: 2,
        after: { name: last?.name ?? "", version: last?.version ?? "" },
      });
      expect([...p1, ...p2].map((e) => e.name)).toEqual(["io.x/a", "io.x/b", "io.x/c"]);
      expect(
        (await store.listEntries(["alpha", "gamma"], { limit: 9, search: "CHANGED" })).map(
          (e) => e.name,
        ),
      ).toEqual(["io.x/b"]);
      expect(await store.listEntries(["alpha"], { limit: 9, search: "100%_" })).toEqual([]);
      const future = new Date(Date.now() + 60_000);
      expect(await store.listEntries(["alpha"], { limit: 9, updatedSince: future })).toEqual([]);
    });

    it("publishes immutable versions with semver-aware latest, and deletes", async () => {
      await store.putSource("team", "managed", { managed: {} }, "config");
      const claims = { org: "acme" };
      await store.publish("team", entry("io.t/x", "1.9.0", { claims }));
      const e = await store.publish("team", entry("io.t/x", "1.10.0", { claims }));
      expect(e.isLatest).toBe(true);
      await store.publish("team", entry("io.t/x", "2.0.0-rc.1", { claims }));
      await expect(
        store.publish("team", entry("io.t/x", "1.9.0", { claims })),
      ).rejects.toMatchObject({
        code: "ERR_VERSION_EXISTS",
      });
      await expect(
        store.publish("team", entry("io.t/x", "3.0.0", { claims: { org: "other" } })),
      ).rejects.toMatchObject({ code: "ERR_CLAIMS_MISMATCH" });
      let versions = await store.listVersions(["team"], "io.t/x");
      expect(versions.filter((v) => v.isLatest).map((v) => v.version)).toEqual(["1.10.0"]);
      expect(await store.deleteVersion("team", "io.t/x", "1.10.0")).toBe(true);
      expect(await store.deleteVersion("team", "io.t/x", "1.10.0")).toBe(false);
      versions = await store.listVersions(["team"], "io.t/x");
      expect(versions.filter((v) => v.isLatest).map((v) => v.version)).toEqual(["1.9.0"]);
      await store.deleteVersion("team", "io.t/x", "1.9.0");
      await store.deleteVersion("team", "io.t/x", "2.0.0-rc.1");
      expect(await store.listVersions(["team"], "io.t/x")).toEqual([]);
      expect((await store.getStatus("team"))?.entryCount).toBe(0);
    });

    it("bumps the generation on every write", async () => {
      const g = store.generation;
      await store.putSource("delta", "managed", { managed: {} }, "api");
      expect(store.generation).toBeGreaterThan(g);
      expect(await store.deleteSource("delta")).toBe(true);
    });

    if (factory.driver === "postgres") {
      it("gives the application user no DDL rights", async () => {
        const o = factory.lastOptions?.();
        const c = new pg.Client({
          host: o?.host,
          port: o?.port,
          database: o?.database,
          user: o?.user,
          password: o?.password,
        });
        await c.connect();
        try {
          await expect(c.query(`CREATE TABLE evil (x int)`)).rejects.toThrow(/permission denied/);
          await expect(c.query(`DROP TABLE entries`)).rejects.toThrow(/must be owner/);
          await expect(c.query(`SELECT count(*) FROM entries`)).resolves.toBeDefined();
        } finally {
          await c.end();
        }
      });

      it("stays consistent with two replicas publishing concurrently", async () => {
        const other = await factory.openReplica();
        const versions = Array.from({ length: 20 }, (_, i) => `1.${i}.0`);
        const results = await Promise.allSettled(
          versions.flatMap((v) => [
            store.publish("team", entry("io.t/race", v)),
            other.publish("team", entry("io.t/race", v)),
          ]),
        );
        const ok = results.filter((r) => r.status === "fulfilled").length;
        const conflicts = results.filter(
          (r) =>
            r.status === "rejected" &&
            (r.reason as { code?: string }).code === "ERR_VERSION_EXISTS",
        ).length;
        expect(ok).toBe(20);
        expect(conflicts).toBe(20);
        const all = await other.listVersions(["team"], "io.t/race");
        expect(all).toHaveLength(20);
        expect(all.filter((e) => e.isLatest).map((e) => e.version)).toEqual(["1.19.0"]);
      });
    }
  });
}

describe("latestVersion", () => {
  it("prefers the highest stable semver", () => {
    expect(latestVersion(["1.9.0", "1.10.0", "2.0.0-beta"])).toBe("1.10.0");
    expect(latestVersion(["2.0.0-beta", "2.0.0-alpha"])).toBe("2.0.0-beta");
    expect(latestVersion(["b", "a"])).toBe("b");
    expect(latestVersion(["b", "0.1.0"])).toBe("0.1.0");
  });
});

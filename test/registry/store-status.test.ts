// Version lifecycle status in the store: active, deprecated and deleted versions, set for one
// version or all versions of a name; deleted versions are hidden unless asked for and are never
// latest, on every store.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store, StoredEntry } from "../../src/registry/store/store.js";
import { entry, storeFactories } from "./helpers.js";

const describeVersions = (list: StoredEntry[]) =>
  list.map((e) => `${e.version}:${e.status}${e.isLatest ? ":latest" : ""}`);

for (const factory of storeFactories()) {
  describe(`version status (${factory.driver})`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await factory.open();
      await store.putSource("team", "managed", { managed: {} }, "api");
      for (const v of ["1.0.0", "1.1.0", "2.0.0"]) await store.publish("team", entry("io.t/s", v));
      await store.publish("team", entry("io.t/other", "1.0.0"));
    });
    afterAll(async () => {
      await factory.teardown();
    });

    it("deprecates one version with a message and the time it changed", async () => {
      const before = (await store.listVersions(["team"], "io.t/s")).find(
        (e) => e.version === "1.0.0",
      );
      expect(before?.statusChangedAt).toBeUndefined();
      const gen = store.generation;
      const [changed, ...rest] = await store.setVersionStatus(
        "team",
        "io.t/s",
        "1.0.0",
        "deprecated",
        "use 2.0.0",
      );
      expect(rest).toEqual([]);
      expect(changed).toMatchObject({ version: "1.0.0", status: "deprecated" });
      expect(changed?.statusMessage).toBe("use 2.0.0");
      expect(changed?.statusChangedAt).toBeDefined();
      expect(changed?.updatedAt).not.toBe(before?.updatedAt);
      expect(store.generation).toBeGreaterThan(gen);
      // Deprecated versions stay listed.
      expect(describeVersions(await store.listVersions(["team"], "io.t/s"))).toEqual([
        "2.0.0:active:latest",
        "1.1.0:active",
        "1.0.0:deprecated",
      ]);
    });

    it("hides a deleted version unless asked, and moves latest off it", async () => {
      await store.setVersionStatus("team", "io.t/s", "2.0.0", "deleted", "broken release");
      expect(describeVersions(await store.listVersions(["team"], "io.t/s"))).toEqual([
        "1.1.0:active:latest",
        "1.0.0:deprecated",
      ]);
      expect(
        describeVersions(await store.listVersions(["team"], "io.t/s", { includeDeleted: true })),
      ).toEqual(["2.0.0:deleted", "1.1.0:active:latest", "1.0.0:deprecated"]);
      const page = await store.listEntries(["team"], { limit: 10 });
      expect(page.map((e) => `${e.name}@${e.version}`)).toEqual([
        "io.t/other@1.0.0",
        "io.t/s@1.0.0",
        "io.t/s@1.1.0",
      ]);
      const all = await store.listEntries(["team"], { limit: 10, includeDeleted: true });
      expect(all.map((e) => e.version)).toEqual(["1.0.0", "1.0.0", "1.1.0", "2.0.0"]);
      const latest = await store.listEntries(["team"], { limit: 10, latestOnly: true });
      expect(latest.map((e) => `${e.name}@${e.version}`)).toEqual([
        "io.t/other@1.0.0",
        "io.t/s@1.1.0",
      ]);
    });

    it("filters a listing by exact version", async () => {
      const one = await store.listEntries(["team"], { limit: 10, version: "1.0.0" });
      expect(one.map((e) => e.name)).toEqual(["io.t/other", "io.t/s"]);
      expect(await store.listEntries(["team"], { limit: 10, version: "2.0.0" })).toEqual([]);
      const deleted = await store.listEntries(["team"], {
        limit: 10,
        version: "2.0.0",
        includeDeleted: true,
      });
      expect(deleted.map((e) => `${e.name}@${e.version}:${e.status}`)).toEqual([
        "io.t/s@2.0.0:deleted",
      ]);
    });

    it("changes all versions at once; a name with every version deleted has no latest", async () => {
      const changed = await store.setVersionStatus("team", "io.t/s", "all", "deleted");
      expect(describeVersions(changed)).toEqual([
        "2.0.0:deleted",
        "1.1.0:deleted",
        "1.0.0:deleted",
      ]);
      // No message given: the earlier one is cleared.
      expect(changed.map((e) => e.statusMessage)).toEqual([undefined, undefined, undefined]);
      expect(await store.listVersions(["team"], "io.t/s")).toEqual([]);
      const restored = await store.setVersionStatus("team", "io.t/s", "all", "active");
      expect(describeVersions(restored)).toEqual([
        "2.0.0:active:latest",
        "1.1.0:active",
        "1.0.0:active",
      ]);
    });

    it("publishes past a deleted latest without making the new version hide behind it", async () => {
      await store.setVersionStatus("team", "io.t/s", "2.0.0", "deleted");
      const e = await store.publish("team", entry("io.t/s", "1.2.0"));
      expect(e.isLatest).toBe(true);
      expect(
        describeVersions(await store.listVersions(["team"], "io.t/s", { includeDeleted: true })),
      ).toEqual(["2.0.0:deleted", "1.2.0:active:latest", "1.1.0:active", "1.0.0:active"]);
    });

    it("answers nothing for a version or name that does not exist", async () => {
      expect(await store.setVersionStatus("team", "io.t/s", "9.9.9", "deprecated")).toEqual([]);
      expect(await store.setVersionStatus("team", "io.t/none", "all", "deleted")).toEqual([]);
    });

    it("never makes a synced deleted version latest", async () => {
      await store.putSource("up", "file", { file: { path: "u.json" } }, "api");
      const id = store.beginStaging();
      await store.stageBatch(id, [
        entry("io.u/a", "1.0.0"),
        entry("io.u/a", "2.0.0", { status: "deleted" }),
        entry("io.u/gone", "1.0.0", { status: "deleted" }),
      ]);
      await store.commitStaging(id, "up", "h");
      expect(
        describeVersions(await store.listVersions(["up"], "io.u/a", { includeDeleted: true })),
      ).toEqual(["2.0.0:deleted", "1.0.0:active:latest"]);
      expect(
        describeVersions(await store.listVersions(["up"], "io.u/gone", { includeDeleted: true })),
      ).toEqual(["1.0.0:deleted"]);
    });
  });
}

// Version lookups made at the same time, read in one statement. On PostgreSQL a lookup by
// (name, version) costs the index a few pages, and the round trip around it (a write and a read
// on both sides of the connection, the statement's start and end in the server) several times
// that: lookups that arrive together, as concurrent clients' do, share one round trip instead.
// PostgreSQL's only (its SQL too): SQLite answers in process, where a lookup has no round trip.
import type { StoreAccess } from "./access.js";
import type { StoredEntry } from "./records.js";
import { ENTRY_COLUMNS, toEntry } from "./rows.js";

interface Lookup {
  name: string;
  version: string;
  resolve(e: StoredEntry | undefined): void;
  reject(err: unknown): void;
}

/** At most this many lookups per statement (a few kilobytes of parameters). */
const MAX_BATCH = 200;

/**
 * Collects the lookups of one turn of the event loop per registry view, and reads each view's
 * in one statement once the turn's input has been handled (so a lone lookup waits for nothing
 * but that turn).
 */
export class VersionBatch {
  private readonly waiting = new Map<string, { sources: string[]; lookups: Lookup[] }>();
  private scheduled = false;

  constructor(private readonly s: StoreAccess) {}

  get(sources: string[], name: string, version: string): Promise<StoredEntry | undefined> {
    return new Promise((resolve, reject) => {
      const key = JSON.stringify(sources);
      let view = this.waiting.get(key);
      if (view === undefined) {
        view = { sources, lookups: [] };
        this.waiting.set(key, view);
      }
      view.lookups.push({ name, version, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const views = [...this.waiting.values()];
    this.waiting.clear();
    for (const { sources, lookups } of views) {
      for (let i = 0; i < lookups.length; i += MAX_BATCH) {
        const part = lookups.slice(i, i + MAX_BATCH);
        this.read(sources, part).catch((err: unknown) => {
          for (const l of part) l.reject(err);
        });
      }
    }
  }

  private async read(sources: string[], lookups: Lookup[]): Promise<void> {
    const r = await this.s.db.query(
      `SELECT k.i, ${ENTRY_COLUMNS}
         FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS k(name, version, i)
         JOIN entries e ON e.name = k.name AND e.version = k.version
         WHERE ${this.s.sql.view(sources.length)}`,
      [sources, lookups.map((l) => l.name), lookups.map((l) => l.version)],
    );
    const found = new Map<number, StoredEntry>();
    for (const row of r.rows) found.set(Number(row.i) - 1, toEntry(row));
    lookups.forEach((l, i) => l.resolve(found.get(i)));
  }
}

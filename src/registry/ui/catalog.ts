// What the catalog lists: each registry's latest versions as compact summaries, read from the
// store once per store generation (every write bumps it) and then filtered per request, so a
// page of a large registry costs a filter over summaries, not a scan of the store.
import type { Claims } from "../config/types.js";
import type { Store, StoredEntry } from "../store/store.js";

export const TRANSPORTS = ["stdio", "streamable-http", "sse"] as const;
export const PACKAGE_TYPES = ["oci", "npm", "pypi", "remote"] as const;
export const STATUSES = ["active", "deprecated"] as const;
export const SORTS = ["name", "updated"] as const;
export const PAGE_SIZE = 20;

export interface Summary {
  name: string;
  title: string;
  description: string;
  version: string;
  status: string;
  updatedAt: string;
  transports: string[];
  types: string[];
  claims: Claims | undefined;
  /** Lower-cased name, title and description: what search matches, as the API's does. */
  search: string;
}

export interface Filters {
  q: string;
  transport: string;
  type: string;
  status: string;
  sort: (typeof SORTS)[number];
  page: number;
}

type Obj = Record<string, unknown>;

export function objects(v: unknown): Obj[] {
  return Array.isArray(v)
    ? v.filter((x): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x))
    : [];
}

export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** The transports and package types an entry offers. */
export function offers(server: Obj): { transports: string[]; types: string[] } {
  const transports = new Set<string>();
  const types = new Set<string>();
  for (const p of objects(server.packages)) {
    const t = str(p.registryType);
    if (t !== undefined) types.add(t);
    const tr = str((p.transport as Obj | undefined)?.type);
    if (tr !== undefined) transports.add(tr);
  }
  for (const r of objects(server.remotes)) {
    types.add("remote");
    const tr = str(r.type);
    if (tr !== undefined) transports.add(tr);
  }
  return { transports: [...transports], types: [...types] };
}

function summarize(e: StoredEntry): Summary {
  const s = e.server;
  const title = s.title ?? "";
  const description = s.description ?? "";
  return {
    name: e.name,
    title,
    description,
    version: e.version,
    status: e.status,
    updatedAt: e.updatedAt,
    ...offers(s),
    claims: e.claims,
    search: [e.name, title, description].join("\n").toLowerCase(),
  };
}

const BATCH = 1000;

export class CatalogCache {
  private generation = -1;
  private lists = new Map<string, Promise<Summary[]>>();

  constructor(private readonly store: Store) {}

  /** The latest live version of every name the sources serve, in name order. */
  summaries(registry: string, sources: string[]): Promise<Summary[]> {
    if (this.store.generation !== this.generation) {
      this.generation = this.store.generation;
      this.lists.clear();
    }
    const key = `${registry}\0${sources.join("\0")}`;
    let hit = this.lists.get(key);
    if (hit === undefined) {
      hit = this.load(sources);
      this.lists.set(key, hit);
      // A failed read is not kept: the next request tries again.
      hit.catch(() => this.lists.delete(key));
    }
    return hit;
  }

  private async load(sources: string[]): Promise<Summary[]> {
    const out: Summary[] = [];
    let after: { name: string; version: string } | undefined;
    for (;;) {
      const rows = await this.store.listEntries(sources, {
        limit: BATCH,
        latestOnly: true,
        ...(after !== undefined ? { after } : {}),
      });
      for (const r of rows) out.push(summarize(r));
      const tail = rows[rows.length - 1];
      if (rows.length < BATCH || tail === undefined) return out;
      after = { name: tail.name, version: tail.version };
    }
  }
}

/** Parses the address's filters; anything unknown falls back to its default. */
export function parseFilters(q: Record<string, string | undefined>): Filters {
  const pick = (v: string | undefined, allowed: readonly string[]): string =>
    v !== undefined && allowed.includes(v) ? v : "";
  const page = Number(q.page);
  return {
    q: (q.q ?? "").slice(0, 200),
    transport: pick(q.transport, TRANSPORTS),
    type: pick(q.type, PACKAGE_TYPES),
    status: pick(q.status, STATUSES),
    sort: q.sort === "updated" ? "updated" : "name",
    page: Number.isInteger(page) && page >= 1 && page <= 100_000 ? page : 1,
  };
}

export interface Page {
  total: number;
  items: Summary[];
  pages: number;
  page: number;
}

/** Applies visibility, search, filters and sort, and cuts out the requested page. */
export function selectPage(
  all: readonly Summary[],
  visible: (claims: Claims | undefined) => boolean,
  f: Filters,
): Page {
  const needle = f.q.toLowerCase();
  const matched = all.filter(
    (s) =>
      (needle === "" || s.search.includes(needle)) &&
      (f.transport === "" || s.transports.includes(f.transport)) &&
      (f.type === "" || s.types.includes(f.type)) &&
      (f.status === "" || s.status === f.status) &&
      visible(s.claims),
  );
  if (f.sort === "updated") {
    matched.sort((a, b) =>
      a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.name < b.name ? -1 : 1,
    );
  }
  const pages = Math.max(1, Math.ceil(matched.length / PAGE_SIZE));
  const page = Math.min(f.page, pages);
  return {
    total: matched.length,
    items: matched.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE),
    pages,
    page,
  };
}

const MAX_RENDERED = 2000;

/** Rendered content by key, dropped whenever the store's generation moves on. */
export class RenderCache<T> {
  private generation = -1;
  private readonly items = new Map<string, T>();

  constructor(private readonly store: Store) {}

  get(key: string): T | undefined {
    if (this.store.generation !== this.generation) {
      this.generation = this.store.generation;
      this.items.clear();
    }
    return this.items.get(key);
  }

  /** Keeps content computed at generation `gen` (not when the store moved on since). */
  put(key: string, gen: number, value: T): void {
    if (gen !== this.generation || gen !== this.store.generation) return;
    if (this.items.size >= MAX_RENDERED) this.items.clear();
    this.items.set(key, value);
  }
}

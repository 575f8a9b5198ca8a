// Answers of the consumer API, cached per registry and query and invalidated by the store's
// generation (bumped by every write, here or on another replica; see Store.refreshGeneration).
// A cached answer carries its bytes and a strong ETag, so a hot read is a map lookup.
import { createHash } from "node:crypto";
import { serverJsonOf, type Store, type RegistryRecord, type StoredEntry } from "../store/store.js";
import { OFFICIAL_META } from "../formats/model.js";

export interface CachedBody {
  body: Buffer;
  etag: string;
  status: number;
}

/**
 * Bounds of the cached answers, by bytes rather than by count: one answer per server version
 * of a 10,000-entry catalog (about 15 MB) fits, where 2,000 answers of any size made version
 * lookups across a large catalog misses; a few lists of 100 items each cost as much.
 */
const MAX_CACHED_BYTES = 32 * 1024 * 1024;
const MAX_CACHED = 50_000;

/** Slots of AskedBefore's table: 256 KiB, a few times the keys a cache's worth of answers has. */
const ASKED_SLOTS = 1 << 16;

/**
 * Which keys were asked for before, by a 32-bit fingerprint per slot (no key is kept): an answer
 * is cached on its second request. Answers asked for once, as when clients walk every version
 * of a catalog larger than the cache, are then not cached only to be dropped unused, which
 * cost a quarter of such a lookup's time (their bodies outlived the young generation). A slot
 * shared by two keys at most delays one's caching, or caches it a request early.
 */
class AskedBefore {
  private readonly slots = new Uint32Array(ASKED_SLOTS);

  /** Records `key`; true when it was recorded before. */
  again(key: string): boolean {
    // FNV-1a over the UTF-16 code units, never 0 (an empty slot).
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    const fingerprint = h >>> 0 || 1;
    const slot = fingerprint & (ASKED_SLOTS - 1);
    if (this.slots[slot] === fingerprint) return true;
    this.slots[slot] = fingerprint;
    return false;
  }
}

export class ViewCache {
  private generation = -1;
  private registries = new Map<string, RegistryRecord | null>();
  private bodies = new Map<string, CachedBody>();
  private bytes = 0;
  private readonly asked = new AskedBefore();

  constructor(private readonly store: Store) {}

  private sync(): void {
    if (this.store.generation !== this.generation) {
      this.generation = this.store.generation;
      this.registries.clear();
      this.bodies.clear();
      this.bytes = 0;
    }
  }

  async registry(name: string): Promise<RegistryRecord | undefined> {
    this.sync();
    const hit = this.registries.get(name);
    if (hit !== undefined) return hit ?? undefined;
    const gen = this.generation;
    const found = await this.store.getRegistry(name);
    const r = found === undefined ? undefined : await this.servingOrder(found);
    if (gen === this.store.generation) this.registries.set(name, r ?? null);
    return r;
  }

  /**
   * The registry with its sources in serving order: the configured order, except that the
   * managed source comes last. A name is served from the first source that has it, so a
   * publisher can add names but never replace or hide one a synced or Kubernetes source
   * provides, wherever the managed source is listed (docs/registry.md, "Name ownership").
   */
  private async servingOrder(r: RegistryRecord): Promise<RegistryRecord> {
    const managed = new Set(
      (await this.store.listSources()).filter((s) => s.kind === "managed").map((s) => s.name),
    );
    const sources = [
      ...r.sources.filter((s) => !managed.has(s)),
      ...r.sources.filter((s) => managed.has(s)),
    ];
    return { ...r, sources };
  }

  get(key: string): CachedBody | undefined {
    this.sync();
    return this.bodies.get(key);
  }

  /**
   * Caches an answer computed at generation `gen` (dropped when the store moved on since), once
   * its key has been asked for before (see AskedBefore).
   */
  put(key: string, gen: number, value: CachedBody): void {
    this.sync();
    if (gen !== this.generation || !this.asked.again(key)) return;
    if (this.bodies.size >= MAX_CACHED || this.bytes + value.body.length > MAX_CACHED_BYTES) {
      this.bodies.clear();
      this.bytes = 0;
    }
    const old = this.bodies.get(key);
    this.bytes += value.body.length - (old?.body.length ?? 0);
    this.bodies.set(key, value);
  }
}

export function etagOf(body: Buffer): string {
  return `"${createHash("sha1").update(body).digest("base64url")}"`;
}

/**
 * The official registry's item shape (statusMessage only when set). statusChangedAt is always
 * there, as the official registry has it: a version never changed has had its status since it
 * was published.
 */
export function itemOf(e: StoredEntry): Record<string, unknown> {
  return { server: e.server, _meta: metaOf(e) };
}

function metaOf(e: StoredEntry): Record<string, unknown> {
  return {
    [OFFICIAL_META]: {
      status: e.status,
      ...(e.statusMessage !== undefined ? { statusMessage: e.statusMessage } : {}),
      statusChangedAt: e.statusChangedAt ?? e.publishedAt,
      publishedAt: e.publishedAt,
      updatedAt: e.updatedAt,
      isLatest: e.isLatest,
    },
  };
}

/**
 * `JSON.stringify(itemOf(e))`, with the server document's stored text copied as it is rather
 * than parsed and written again.
 */
export function itemJsonOf(e: StoredEntry): string {
  return `{"server":${serverJsonOf(e)},"_meta":${JSON.stringify(metaOf(e))}}`;
}

/** `JSON.stringify({ servers: entries.map(itemOf), metadata })`, as itemJsonOf writes items. */
export function listJsonOf(entries: StoredEntry[], metadata: Record<string, unknown>): string {
  return `{"servers":[${entries.map(itemJsonOf).join(",")}],"metadata":${JSON.stringify(metadata)}}`;
}

export function encodeCursor(e: { name: string; version: string }): string {
  return Buffer.from(JSON.stringify([e.name, e.version])).toString("base64url");
}

/** Decodes a cursor; undefined when it is not one of ours. */
export function decodeCursor(c: string): { name: string; version: string } | undefined {
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(c)) return undefined;
    const v: unknown = JSON.parse(Buffer.from(c, "base64url").toString("utf8"));
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      typeof v[0] === "string" &&
      typeof v[1] === "string" &&
      v[0].length <= 200 &&
      v[1].length <= 255 &&
      !`${v[0]}${v[1]}`.includes("\u0000")
    ) {
      return { name: v[0], version: v[1] };
    }
  } catch {
    return undefined;
  }
  return undefined;
}

// Reads objects straight from a repository's object store (loose objects and packs with a
// version 2 index), learning an object's type and size from its header before anything is
// inflated. Nothing loads a whole pack to read one object from it, and a blob larger than the
// caller's limit is refused after reading a few header bytes, so a 200 MB file in the
// repository costs no more than a small one. Packs are read with positioned reads of exactly one object's compressed bytes.
import * as fs from "node:fs";
import { join } from "node:path";
import { constants as zlibConstants, inflateSync } from "node:zlib";
import { McpfleetError } from "../../errors.js";

export type ObjectType = "commit" | "tree" | "blob" | "tag";

export interface ObjectInfo {
  type: ObjectType;
  /** Inflated size in bytes, as the object's header declares it. */
  size: number;
}

export interface ObjectStoreOptions {
  /**
   * Largest object inflated to serve a read: commits, trees and delta bases. Blobs are read
   * against the caller's own, usually smaller, limit.
   */
  maxObjectBytes?: number;
}

/** An object larger than the limit it was read against: it was not inflated. */
export class ObjectTooLargeError extends McpfleetError {
  constructor(
    readonly oid: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super("ERR_GIT_FAILED", `git object ${oid} is ${size} bytes, over the ${limit}-byte limit`);
  }
}

const TYPES: Record<number, ObjectType | "ofs-delta" | "ref-delta"> = {
  1: "commit",
  2: "tree",
  3: "blob",
  4: "tag",
  6: "ofs-delta",
  7: "ref-delta",
};
const IDX_MAGIC = 0xff744f63;
/** Pack reads go through windows of this size, a few kept: small objects cost no read each. */
const WINDOW = 1024 * 1024;
const WINDOWS = 8;
const DEFAULT_MAX_OBJECT = 64 * 1024 * 1024;
/** Inflated packed objects kept as bases for the deltas read next (trees mostly). */
const BASE_CACHE_BYTES = 32 * 1024 * 1024;

function corrupt(what: string): McpfleetError {
  return new McpfleetError("ERR_GIT_FAILED", `corrupt git object store: ${what}`);
}

/** One pack: its index in memory, the pack itself read by position. */
class Pack {
  private readonly count: number;
  private readonly fanout: Uint32Array;
  private readonly idx: Buffer;
  /** Sorted object offsets, to find where each object's compressed bytes end. */
  private ends: Float64Array | undefined;
  private fd: number | undefined;
  private readonly packSize: number;

  constructor(
    readonly idxPath: string,
    readonly packPath: string,
  ) {
    this.idx = fs.readFileSync(idxPath);
    if (this.idx.length < 8 + 1024 || this.idx.readUInt32BE(0) !== IDX_MAGIC) {
      throw corrupt(`${idxPath} is not a version 2 pack index`);
    }
    if (this.idx.readUInt32BE(4) !== 2) throw corrupt(`${idxPath}: unsupported index version`);
    this.fanout = new Uint32Array(256);
    for (let i = 0; i < 256; i++) this.fanout[i] = this.idx.readUInt32BE(8 + i * 4);
    this.count = this.fanout[255]!;
    this.packSize = fs.statSync(packPath).size;
  }

  private shaAt(i: number): Buffer {
    const at = 8 + 1024 + i * 20;
    return this.idx.subarray(at, at + 20);
  }

  private offsetAt(i: number): number {
    const base = 8 + 1024 + this.count * 24;
    const v = this.idx.readUInt32BE(base + i * 4);
    if ((v & 0x80000000) === 0) return v;
    const large = base + this.count * 4 + (v & 0x7fffffff) * 8;
    return Number(this.idx.readBigUInt64BE(large));
  }

  /** The object's offset in the pack, or undefined when this pack lacks it. */
  find(oid: Buffer): number | undefined {
    const first = oid[0]!;
    let lo = first === 0 ? 0 : this.fanout[first - 1]!;
    let hi = this.fanout[first]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.shaAt(mid).compare(oid);
      if (c === 0) return this.offsetAt(mid);
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return undefined;
  }

  /** The ids in this pack starting with `prefix` (hex). */
  withPrefix(prefix: string): string[] {
    const first = Number.parseInt(prefix.slice(0, 2), 16);
    const out: string[] = [];
    for (let i = first === 0 ? 0 : this.fanout[first - 1]!; i < this.fanout[first]!; i++) {
      const oid = this.shaAt(i).toString("hex");
      if (oid.startsWith(prefix)) out.push(oid);
    }
    return out;
  }

  /** Where the object at `offset` ends: the next object's offset, or the pack's trailer. */
  end(offset: number): number {
    if (this.ends === undefined) {
      const all = new Float64Array(this.count);
      for (let i = 0; i < this.count; i++) all[i] = this.offsetAt(i);
      this.ends = all.sort();
    }
    const ends = this.ends;
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ends[mid]! <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo < ends.length ? ends[lo]! : this.packSize - 20;
  }

  /** Recently read stretches of the pack: neighbouring small objects share one read. */
  private readonly windows = new Map<number, Buffer>();

  /** `length` bytes from `offset` (fewer at the end of the pack). */
  read(offset: number, length: number): Buffer {
    const end = Math.min(offset + length, this.packSize);
    const start = offset - (offset % WINDOW);
    if (end <= start + WINDOW) {
      let window = this.windows.get(start);
      if (window === undefined) {
        window = this.readAt(start, Math.min(WINDOW, this.packSize - start));
        this.windows.set(start, window);
        if (this.windows.size > WINDOWS) this.windows.delete(this.windows.keys().next().value!);
      }
      return window.subarray(offset - start, end - start);
    }
    return this.readAt(offset, end - offset);
  }

  private readAt(offset: number, length: number): Buffer {
    this.fd ??= fs.openSync(this.packPath, "r");
    const buf = Buffer.allocUnsafe(Math.max(0, length));
    let done = 0;
    while (done < buf.length) {
      const n = fs.readSync(this.fd, buf, done, buf.length - done, offset + done);
      if (n === 0) break;
      done += n;
    }
    return buf.subarray(0, done);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    this.windows.clear();
  }
}

/** A pack entry's header: its raw type, declared size and where its zlib data starts. */
interface EntryHeader {
  kind: ObjectType | "ofs-delta" | "ref-delta";
  size: number;
  data: number;
  /** For deltas: where the base is. */
  base?: { offset: number } | { oid: string };
}

/** Inflates the start of a zlib stream: at least `want` bytes when the stream has them. */
function inflatePrefix(read: (n: number) => Buffer, want: number, available: number): Buffer {
  for (let n = 64; ; n *= 4) {
    const chunk = read(Math.min(n, available));
    const out = inflateSync(chunk, { finishFlush: zlibConstants.Z_SYNC_FLUSH, chunkSize: 1024 });
    if (out.length >= want || chunk.length >= available) return out;
  }
}

/**
 * zlib's output buffer for an object of `size` bytes: room for all of it in one (zlib's default
 * is 16 KiB for every call, most of it wasted on small objects), within zlib's bounds.
 */
function chunkFor(size: number): number {
  return Math.min(Math.max(size + 64, 64), 1024 * 1024);
}

/** Reads a delta's little-endian base-128 size at `pos`. */
function deltaVarint(buf: Buffer, pos: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let i = pos;
  for (;;) {
    const c = buf[i++];
    if (c === undefined) throw corrupt("truncated delta header");
    value += (c & 0x7f) * 2 ** shift;
    shift += 7;
    if ((c & 0x80) === 0) return { value, next: i };
  }
}

/** Applies a git delta to its base. */
function applyDelta(base: Buffer, delta: Buffer): Buffer {
  const src = deltaVarint(delta, 0);
  const dst = deltaVarint(delta, src.next);
  if (src.value !== base.length) throw corrupt("delta base size mismatch");
  const out = Buffer.alloc(dst.value);
  let o = 0;
  let i = dst.next;
  while (i < delta.length) {
    const op = delta[i++]!;
    if ((op & 0x80) !== 0) {
      let off = 0;
      let len = 0;
      for (let b = 0; b < 4; b++) if ((op & (1 << b)) !== 0) off += delta[i++]! * 2 ** (8 * b);
      for (let b = 0; b < 3; b++) if ((op & (0x10 << b)) !== 0) len |= delta[i++]! << (8 * b);
      if (len === 0) len = 0x10000;
      if (off + len > base.length || o + len > out.length) throw corrupt("delta copy out of range");
      base.copy(out, o, off, off + len);
      o += len;
    } else if (op !== 0) {
      if (i + op > delta.length || o + op > out.length) throw corrupt("delta insert out of range");
      delta.copy(out, o, i, i + op);
      o += op;
      i += op;
    } else {
      throw corrupt("delta opcode 0");
    }
  }
  if (o !== out.length) throw corrupt("delta result size mismatch");
  return out;
}

/** Read-only access to one repository's objects. Create one per use; close it after. */
export class ObjectStore {
  private readonly objectsDir: string;
  private readonly maxObject: number;
  private packs: Pack[] | undefined;
  private readonly bases = new Map<string, Buffer>();
  private baseBytes = 0;
  /** Bytes inflated so far: what reading cost, for tests and benchmarks. */
  inflatedBytes = 0;

  constructor(gitdir: string, opts: ObjectStoreOptions = {}) {
    this.objectsDir = join(gitdir, "objects");
    this.maxObject = opts.maxObjectBytes ?? DEFAULT_MAX_OBJECT;
  }

  close(): void {
    for (const p of this.packs ?? []) p.close();
    this.packs = undefined;
    this.loose.clear();
    this.bases.clear();
    this.baseBytes = 0;
  }

  private allPacks(): Pack[] {
    if (this.packs === undefined) {
      const dir = join(this.objectsDir, "pack");
      let names: string[];
      try {
        names = fs.readdirSync(dir).filter((n) => n.endsWith(".idx"));
      } catch {
        names = [];
      }
      this.packs = names
        .map((n) => ({ idx: join(dir, n), pack: join(dir, `${n.slice(0, -4)}.pack`) }))
        .filter((p) => fs.existsSync(p.pack))
        .map((p) => new Pack(p.idx, p.pack));
    }
    return this.packs;
  }

  /** Loose objects by fan-out directory, listed once: one readdir instead of a stat per object. */
  private readonly loose = new Map<string, Set<string>>();

  private looseFile(oid: string): string | undefined {
    const fan = oid.slice(0, 2);
    let names = this.loose.get(fan);
    if (names === undefined) {
      try {
        names = new Set(fs.readdirSync(join(this.objectsDir, fan)));
      } catch {
        names = new Set();
      }
      this.loose.set(fan, names);
    }
    return names.has(oid.slice(2)) ? join(this.objectsDir, fan, oid.slice(2)) : undefined;
  }

  private locate(oid: string, loose = true): { loose: string } | { pack: Pack; offset: number } {
    if (!/^[0-9a-f]{40}$/.test(oid)) throw corrupt(`${oid} is not an object id`);
    const file = loose ? this.looseFile(oid) : undefined;
    if (file !== undefined) return { loose: file };
    const bin = Buffer.from(oid, "hex");
    for (const pack of this.allPacks()) {
      const offset = pack.find(bin);
      if (offset !== undefined) return { pack, offset };
    }
    throw new McpfleetError("ERR_GIT_FAILED", `git object ${oid} is missing from the repository`);
  }

  /**
   * Runs `use` on the object's place. A loose object that vanishes meanwhile was packed by a
   * `git gc` in the repository (a file:// repository is read in place): look in the packs anew.
   */
  private at<T>(oid: string, use: (where: ReturnType<ObjectStore["locate"]>) => T): T {
    const where = this.locate(oid);
    try {
      return use(where);
    } catch (err) {
      if (!("loose" in where) || (err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      for (const p of this.packs ?? []) p.close();
      this.packs = undefined;
      this.loose.clear();
      return use(this.locate(oid, false));
    }
  }

  /** True when the object is here (its header readable), of `type` when one is given. */
  has(oid: string, type?: ObjectType): boolean {
    try {
      const info = this.info(oid);
      return type === undefined || info.type === type;
    } catch {
      return false;
    }
  }

  /** The ids of the objects here that start with `prefix` (hex, at least 4 digits). */
  expand(prefix: string): string[] {
    if (!/^[0-9a-f]{4,40}$/.test(prefix)) return [];
    const found = new Set<string>();
    const fan = prefix.slice(0, 2);
    this.looseFile(`${prefix}${"0".repeat(40 - prefix.length)}`); // lists the fan-out directory
    for (const name of this.loose.get(fan) ?? []) {
      if (`${fan}${name}`.startsWith(prefix)) found.add(`${fan}${name}`);
    }
    for (const pack of this.allPacks()) for (const oid of pack.withPrefix(prefix)) found.add(oid);
    return [...found].sort();
  }

  /** Type and size of an object, from its header only. */
  info(oid: string): ObjectInfo {
    return this.at(oid, (where) =>
      "loose" in where
        ? this.looseHeader(where.loose).info
        : this.packedInfo(where.pack, where.offset),
    );
  }

  /**
   * An object's content, refused with ObjectTooLargeError (before inflating) when its declared
   * size is over `limit`; `expect` refuses an object of another type.
   */
  read(oid: string, expect: ObjectType, limit = this.maxObject): Buffer {
    return this.at(oid, (where) => this.readAt(oid, where, expect, limit));
  }

  private readAt(
    oid: string,
    where: ReturnType<ObjectStore["locate"]>,
    expect: ObjectType,
    limit: number,
  ): Buffer {
    let info: ObjectInfo;
    if ("loose" in where) info = this.looseHeader(where.loose).info;
    else info = this.packedInfo(where.pack, where.offset);
    if (info.type !== expect) throw corrupt(`${oid} is a ${info.type}, not a ${expect}`);
    if (info.size > limit) throw new ObjectTooLargeError(oid, info.size, limit);
    if ("loose" in where) return this.readLoose(where.loose, info.size);
    return this.readPacked(where.pack, where.offset);
  }

  private looseHeader(file: string): { info: ObjectInfo; headerLength: number } {
    const fd = fs.openSync(file, "r");
    try {
      const available = fs.fstatSync(fd).size;
      const readAt = (n: number): Buffer => {
        const buf = Buffer.alloc(n);
        const got = fs.readSync(fd, buf, 0, n, 0);
        return buf.subarray(0, got);
      };
      const head = inflatePrefix(readAt, 32, available);
      const nul = head.indexOf(0);
      const m = /^(commit|tree|blob|tag) (\d+)$/.exec(head.subarray(0, nul).toString("latin1"));
      if (nul < 0 || m === null) throw corrupt(`${file}: bad loose object header`);
      return { info: { type: m[1] as ObjectType, size: Number(m[2]) }, headerLength: nul + 1 };
    } finally {
      fs.closeSync(fd);
    }
  }

  private readLoose(file: string, size: number): Buffer {
    const { headerLength } = this.looseHeader(file);
    const all = inflateSync(fs.readFileSync(file), {
      maxOutputLength: headerLength + size,
      chunkSize: chunkFor(headerLength + size),
    });
    this.inflatedBytes += all.length;
    const body = all.subarray(headerLength);
    if (body.length !== size) throw corrupt(`${file}: size does not match its header`);
    return body;
  }

  /** Parses the header of the entry at `offset`; `buf` holds the pack's bytes from there. */
  private entryHeader(pack: Pack, offset: number, buf = pack.read(offset, 32)): EntryHeader {
    let i = 0;
    let c = buf[i++];
    if (c === undefined) throw corrupt(`${pack.packPath}: no object at ${offset}`);
    const kind = TYPES[(c >> 4) & 7];
    if (kind === undefined) throw corrupt(`${pack.packPath}: bad object type at ${offset}`);
    let size = c & 15;
    let shift = 4;
    while ((c & 0x80) !== 0) {
      c = buf[i++];
      if (c === undefined) throw corrupt(`${pack.packPath}: truncated header at ${offset}`);
      size += (c & 0x7f) * 2 ** shift;
      shift += 7;
    }
    if (kind === "ofs-delta") {
      c = buf[i++]!;
      let back = c & 0x7f;
      while ((c & 0x80) !== 0) {
        c = buf[i++]!;
        back = (back + 1) * 128 + (c & 0x7f);
      }
      if (back <= 0 || back > offset) throw corrupt(`${pack.packPath}: bad delta base`);
      return { kind, size, data: offset + i, base: { offset: offset - back } };
    }
    if (kind === "ref-delta") {
      const oid = buf.subarray(i, i + 20).toString("hex");
      return { kind, size, data: offset + i + 20, base: { oid } };
    }
    return { kind, size, data: offset + i };
  }

  /** Type and inflated size of a packed object, inflating at most a delta's first bytes. */
  private packedInfo(pack: Pack, offset: number): ObjectInfo {
    let h = this.entryHeader(pack, offset);
    let size: number | undefined;
    let p = pack;
    for (let depth = 0; depth < 10_000; depth++) {
      if (h.base === undefined) return { type: h.kind as ObjectType, size: size ?? h.size };
      if (size === undefined) {
        const end = p.end(offset);
        const at = h.data;
        const start = inflatePrefix((n) => p.read(at, n), 20, end - at);
        size = deltaVarint(start, deltaVarint(start, 0).next).value;
      }
      if ("oid" in h.base) {
        const where = this.locate(h.base.oid);
        if ("loose" in where) return { type: this.looseHeader(where.loose).info.type, size };
        p = where.pack;
        offset = where.offset;
      } else {
        offset = h.base.offset;
      }
      h = this.entryHeader(p, offset);
    }
    throw corrupt(`${pack.packPath}: delta chain too long`);
  }

  /** Inflates the entry whose bytes (header included) are `entry`. */
  private inflateEntry(pack: Pack, offset: number, h: EntryHeader, entry: Buffer): Buffer {
    if (h.size > this.maxObject) {
      throw new ObjectTooLargeError(`at ${pack.packPath}:${offset}`, h.size, this.maxObject);
    }
    const compressed = entry.subarray(h.data - offset);
    const out = inflateSync(compressed, {
      maxOutputLength: Math.max(1, h.size),
      chunkSize: chunkFor(h.size),
    });
    this.inflatedBytes += out.length;
    if (out.length !== h.size) throw corrupt(`${pack.packPath}: object at ${offset} has bad size`);
    return out;
  }

  /** A packed object; `base`: read as a delta's base, kept for the deltas read next. */
  private readPacked(pack: Pack, offset: number, base = false): Buffer {
    const key = `${pack.packPath}:${offset}`;
    const cached = this.bases.get(key);
    if (cached !== undefined) return cached;
    // The caller has checked the size: the whole entry in one read.
    const entry = pack.read(offset, pack.end(offset) - offset);
    const h = this.entryHeader(pack, offset, entry);
    const data = this.inflateEntry(pack, offset, h, entry);
    if (h.base === undefined) {
      if (base) this.remember(key, data);
      return data;
    }
    let source: Buffer;
    if ("offset" in h.base) {
      source = this.readPacked(pack, h.base.offset, true);
    } else {
      source = this.at(h.base.oid, (where) =>
        "loose" in where
          ? this.readLoose(where.loose, this.looseHeader(where.loose).info.size)
          : this.readPacked(where.pack, where.offset, true),
      );
    }
    const out = applyDelta(source, data);
    if (base) this.remember(key, out);
    return out;
  }

  /** Keeps an object read from a pack: the next delta is likely one against it. */
  private remember(key: string, data: Buffer): void {
    if (data.length > BASE_CACHE_BYTES / 4) return;
    this.bases.set(key, data);
    this.baseBytes += data.length;
    for (const [k, v] of this.bases) {
      if (this.baseBytes <= BASE_CACHE_BYTES) break;
      this.bases.delete(k);
      this.baseBytes -= v.length;
    }
  }
}

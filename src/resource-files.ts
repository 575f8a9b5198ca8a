// What counts as a resource file and how its bytes become text: shared by the file walk of
// `mcpfleet validate` and the reader of a Git tree, so that a directory and the same directory
// in a commit yield the same files and the same refusals.

/** The size limit of one resource file unless configured otherwise (validate's maxFileBytes). */
export const MAX_RESOURCE_FILE_BYTES = 16 * 1024 * 1024;

const EXTENSIONS = [".yaml", ".yml", ".json"];
/** Directories a recursive walk never enters: version control, tooling, dependencies. */
const SKIPPED_DIRS = new Set(["node_modules"]);

/** True for a directory entry a recursive walk leaves alone (hidden entries, node_modules). */
export function isSkippedEntry(name: string): boolean {
  return name.startsWith(".") || SKIPPED_DIRS.has(name);
}

export function hasResourceExtension(name: string): boolean {
  const lower = name.toLowerCase();
  return EXTENSIONS.some((ext) => lower.endsWith(ext));
}

export type ReadOutcome =
  /**
   * `again`, for a regular file: its text read once more, for a lookup made after its own
   * validation (positions of the reference level's late issues), so that a run need not keep
   * every file's text; undefined when the file changed since (its size or modification time).
   */
  | { ok: true; text: string; again?: () => string | undefined }
  /** `io`: the file could not be read; `content`: it was read and is not text we accept. */
  | { ok: false; kind: "io" | "content"; message: string };

export function tooLarge(maxBytes: number): string {
  return `file is larger than the ${formatBytes(maxBytes)} limit; split it into smaller files`;
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * The text of a file, or why it is not text: a NUL byte (binary content), a UTF-16 or UTF-32
 * byte order mark, or bytes that are not UTF-8 (reported with the offset of the first one).
 */
export function decodeText(buf: Buffer): ReadOutcome {
  if (
    (buf[0] === 0xff && buf[1] === 0xfe) ||
    (buf[0] === 0xfe && buf[1] === 0xff) ||
    (buf[0] === 0 && buf[1] === 0 && buf[2] === 0xfe && buf[3] === 0xff)
  ) {
    return {
      ok: false,
      kind: "content",
      message: "file is UTF-16 or UTF-32 encoded; save it as UTF-8",
    };
  }
  const nul = buf.indexOf(0);
  if (nul !== -1) {
    return {
      ok: false,
      kind: "content",
      message: `binary file (NUL byte at offset ${nul}); expected YAML or JSON text`,
    };
  }
  try {
    return { ok: true, text: utf8.decode(buf) };
  } catch {
    return {
      ok: false,
      kind: "content",
      message: `file is not valid UTF-8 (first invalid byte at offset ${firstInvalidUtf8(buf)})`,
    };
  }
}

/** Offset of the first byte that does not belong to a well-formed UTF-8 sequence. */
export function firstInvalidUtf8(buf: Uint8Array): number {
  let i = 0;
  while (i < buf.length) {
    const b = buf[i] ?? 0;
    let need: number;
    let min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else {
      return i;
    }
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = buf[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return buf.length;
}

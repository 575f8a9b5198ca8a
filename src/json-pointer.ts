// JSON Pointer (RFC 6901): the paths every level, every issue and the registry's config errors
// are given as. One place for its escaping: `~` is written `~0` and `/` is written `~1`.

/** A reference token as it appears in a pointer. */
export function escapeSegment(segment: string): string {
  // Most segments need no escape, and pointers are built for every issue and reference.
  if (!segment.includes("~") && !segment.includes("/")) return segment;
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** A reference token as the key it stands for. */
export function unescapeSegment(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** The pointer of a path given as keys (`[]` is the whole document, ""). */
export function toPointer(path: readonly string[]): string {
  return path.length === 0 ? "" : "/" + path.map(escapeSegment).join("/");
}

/** The keys of a pointer ("" is the whole document, []). */
export function splitPointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer.slice(1).split("/").map(unescapeSegment);
}

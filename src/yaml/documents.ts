// Multi-document YAML (and JSON, which is YAML) with source positions. Each document can map a
// JSON pointer found by a later level back to the line and column of the node it names.
// Everything that can go wrong in a document becomes a `parse` issue on it. Files are read
// through js-yaml's event parser when it reads them exactly as the yaml package would
// (events.ts), else through the yaml package itself (tree.ts).
import { eventsDocument, parseWithEvents } from "./events.js";
import { parseWithTree, treeLocator } from "./tree.js";
import { LineIndex, type ParsedDocument, type ParseLimits, type Position } from "./model.js";

export type { LocateTarget, ParsedDocument, ParseLimits, Position, ScalarOrigin } from "./model.js";
export { splitPointer } from "../json-pointer.js";

/**
 * Splits a file into documents and parses each with positions. Never throws: a failure of the
 * YAML library itself (stack exhaustion on absurd input) becomes an error on the first document.
 * With `again` (the file's text read once more; undefined once it changed), a document released
 * does not keep the text: a later lookup reads it again, or gives the document's start.
 */
export function parseDocuments(
  text: string,
  limits: ParseLimits,
  again?: () => string | undefined,
): ParsedDocument[] {
  return parseWithEvents(text, limits, again) ?? parseWithTree(text, limits);
}

/**
 * A document validated elsewhere (in a worker thread), rebuilt from its file's text, its index
 * and its range for the reference level: positions are found by parsing its text again when asked.
 */
export function reparsedDocument(
  text: string,
  index: number,
  range: readonly [number, number],
  start: Position,
): ParsedDocument {
  // Parsed on the first lookup only: most documents never need a position.
  let inner: Pick<ParsedDocument, "locate" | "scalarOrigin" | "release"> | undefined;
  const get = () => {
    if (inner === undefined) {
      inner = eventsDocument(text, index, start);
      if (inner === undefined) {
        const lines = new LineIndex(text);
        inner = treeLocator(text, (offset) => lines.position(offset), range, start);
      }
    }
    return inner;
  };
  return {
    index,
    start,
    range,
    empty: false,
    nullFields: true,
    errors: [],
    warnings: [],
    locate: (pointer, target) => get().locate(pointer, target),
    scalarOrigin: (pointer) => get().scalarOrigin(pointer),
    release: () => inner?.release(),
  };
}

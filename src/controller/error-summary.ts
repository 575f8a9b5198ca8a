// A failure's lines (a revision's validation errors, refusals, workloads not rolled out) as one
// bounded text. The status recorded on the inventory and the Warning Events must fit the API
// server's limits whatever a revision holds (thousands of invalid documents, huge messages): the
// first lines in full, each clipped, then how many more, counted by level (schema, reference...).

export interface SummaryLimits {
  /** How many lines are quoted. */
  shown: number;
  /** Characters kept of each quoted line. */
  lineChars: number;
  /** UTF-8 bytes of the whole text, counts included: fewer lines are quoted to fit. */
  maxBytes: number;
}

/** For the status on the inventory: well under the 1 MiB object limit, whatever else it holds. */
export const STATUS_SUMMARY: SummaryLimits = { shown: 20, lineChars: 400, maxBytes: 12_000 };
/** For a Warning Event, whose message is kept under 1 KiB. */
export const EVENT_SUMMARY: SummaryLimits = { shown: 3, lineChars: 200, maxBytes: 700 };
/** The most an Event message holds, in UTF-8 bytes. */
export const EVENT_MESSAGE_BYTES = 1000;

const numberFormat = new Intl.NumberFormat("en-US");
export const formatCount = (n: number): string => numberFormat.format(n);

/** `text` cut to `max` characters, an ellipsis marking the cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** `text` cut to `max` UTF-8 bytes (never inside a character), an ellipsis marking the cut. */
export function clipBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let kept = "";
  let bytes = 0;
  const room = max - Buffer.byteLength("…");
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > room) break;
    kept += ch;
    bytes += size;
  }
  return `${kept}…`;
}

/** The level a line ends with: `... (schema)`, `... (reference, warning)`; undefined for none. */
export function levelOf(line: string): string | undefined {
  const m = /\(([\w.-]+)(?:, warning)?\)$/.exec(line);
  return m?.[1];
}

/** "8,000 schema, 983 reference": lines counted by level, most first; "" when none has a level. */
function countsByLevel(lines: readonly string[]): string {
  const counts = new Map<string, number>();
  let unlabelled = 0;
  for (const line of lines) {
    const level = levelOf(line);
    if (level === undefined) unlabelled++;
    else counts.set(level, (counts.get(level) ?? 0) + 1);
  }
  if (counts.size === 0) return "";
  const parts = [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([level, n]) => `${formatCount(n)} ${level}`);
  if (unlabelled > 0) parts.push(`${formatCount(unlabelled)} other`);
  return parts.join(", ");
}

function compose(lines: readonly string[], shown: number, lineChars: number): string {
  const quoted = lines.slice(0, shown).map((l) => clip(l, lineChars));
  const rest = lines.slice(quoted.length);
  if (rest.length === 0) return quoted.join("; ");
  const counts = countsByLevel(rest);
  const more = `and ${formatCount(rest.length)} more${counts !== "" ? `: ${counts}` : ""}`;
  return [...quoted, more].join("; ");
}

/**
 * The lines as one text within `limits`: the first `shown` (each clipped), then "and N more"
 * with the rest counted by level. A single line is given as it is, clipped.
 */
export function summarizeLines(lines: readonly string[], limits: SummaryLimits): string {
  let shown = Math.min(limits.shown, lines.length);
  let text = compose(lines, shown, limits.lineChars);
  while (Buffer.byteLength(text) > limits.maxBytes && shown > 1) {
    shown--;
    text = compose(lines, shown, limits.lineChars);
  }
  return clipBytes(text, limits.maxBytes);
}

/** "1 error" or "10,000 errors". */
export function countOf(n: number, noun: string): string {
  return `${formatCount(n)} ${noun}${n === 1 ? "" : "s"}`;
}

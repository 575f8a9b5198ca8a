// What a run worked out from a file's text, kept for the next runs of the same process (the
// validate server): a later run that reads the same text under the same settings takes a copy
// instead of working it out again. Keyed by the whole text, not by a modification time: a file
// rewritten with other content within one tick of the clock is never taken for the old one.
// Copies go in and out, so that a run may change what it is given (the reference level adds
// its issues to the results) without changing what the next run gets; what is kept must be
// plain data (see plainCopy).
import { plainCopy } from "../json.js";

/** What a process keeps at most, in characters of text: the oldest entries go first. */
const MAX_KEPT_CHARS = 8 * 1024 * 1024;

interface Entry<T> {
  text: string;
  settings: string;
  value: T;
}

export class KeptByText<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private chars = 0;

  constructor(private readonly maxChars = MAX_KEPT_CHARS) {}

  /** A copy of what was kept for `name` when it had `text` under `settings`, else undefined. */
  find(name: string, text: string, settings: string): T | undefined {
    const entry = this.entries.get(name);
    if (entry === undefined || entry.text !== text || entry.settings !== settings) return undefined;
    // Used again: it goes to the end of the line to be let go.
    this.entries.delete(name);
    this.entries.set(name, entry);
    return plainCopy(entry.value);
  }

  /** Keeps a copy of `value`, worked out from `text` under `settings`, in place of any before. */
  keep(name: string, text: string, settings: string, value: T): void {
    this.drop(name);
    if (text.length > this.maxChars) return;
    this.entries.set(name, { text, settings, value: plainCopy(value) });
    this.chars += text.length;
    for (const [oldest, entry] of this.entries) {
      if (this.chars <= this.maxChars) break;
      this.drop(oldest, entry);
    }
  }

  /** How many files are kept (for tests). */
  get size(): number {
    return this.entries.size;
  }

  private drop(name: string, entry = this.entries.get(name)): void {
    if (entry === undefined) return;
    this.entries.delete(name);
    this.chars -= entry.text.length;
  }
}

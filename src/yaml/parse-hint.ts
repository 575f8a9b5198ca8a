// Hints appended to the yaml package's parse errors: what the error code usually means in a
// hand-written file and how to fix it.
/**
 * A hint to append to a parse error of the yaml package (by its error code), or "". `key`: the
 * duplicated key's text and column for DUPLICATE_KEY.
 */
export function parseHint(code: string, key?: { text: string; column: number }): string {
  switch (code) {
    case "TAB_AS_INDENT":
      return "; YAML indents with spaces only: replace the tabs";
    case "BAD_INDENT":
    case "BLOCK_AS_IMPLICIT_KEY":
    case "MULTILINE_IMPLICIT_KEY":
      return "; check this line's indentation against the lines above it";
    case "DUPLICATE_KEY":
      return key !== undefined &&
        key.column === 1 &&
        (key.text === '"apiVersion"' || key.text === '"kind"')
        ? '; two resources in one document? separate them with a line "---"'
        : "";
    default:
      return "";
  }
}

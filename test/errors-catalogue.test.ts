// The error catalogue (src/errors.ts), its page (docs/errors.md) and the code kept in step both
// ways: every catalogue code is raised somewhere and documented with its status and title; every
// code the sources or the docs name is in the catalogue; every error class carries a code.
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../src/errors.js";

const ROOT = join(import.meta.dirname, "..");
const CATALOGUE_FILE = "src/errors.ts";
const CODES_PAGE = "docs/errors.md";

/** Codes Node.js sets on its own errors: the sources match them, never raise them. */
const PLATFORM_CODES = new Set(["ERR_TLS_CERT_ALTNAME_INVALID"]);

/** An ERR_ code standing alone (not the tail of FST_ERR_... or UND_ERR_...). */
const CODE = /(?<![A-Za-z0-9_])ERR_[A-Z0-9_]+/g;

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(ext))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
}

const sources = new Map(
  filesUnder("src", ".ts").map((path) => [path, readFileSync(join(ROOT, path), "utf8")]),
);
const docs = new Map(
  filesUnder("docs", ".md").map((path) => [path, readFileSync(join(ROOT, path), "utf8")]),
);
const catalogue = new Set(Object.keys(ERROR_CODES));

/** Each code named in `texts`, with the first file that names it. */
function codesIn(texts: ReadonlyMap<string, string>, skip?: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [path, text] of texts) {
    if (path === skip) continue;
    for (const [code] of text.matchAll(CODE)) if (!found.has(code)) found.set(code, path);
  }
  return found;
}

/** The rows of the codes page: `| \`ERR_X\` | status | title |`. */
function documentedRows(): Map<string, { status: number; title: string }> {
  const rows = new Map<string, { status: number; title: string }>();
  for (const line of (docs.get(CODES_PAGE) ?? "").split("\n")) {
    const m = /^\|\s*`(ERR_[A-Z0-9_]+)`\s*\|\s*(\d+)\s*\|\s*(.*?)\s*\|\s*$/.exec(line);
    if (m) rows.set(m[1]!, { status: Number(m[2]), title: m[3]! });
  }
  return rows;
}

describe("error catalogue", () => {
  it("has every code raised somewhere in src/, as a string literal outside the catalogue", () => {
    const raised = new Set<string>();
    for (const [path, text] of sources) {
      if (path === CATALOGUE_FILE) continue;
      for (const [, code] of text.matchAll(/["'`](ERR_[A-Z0-9_]+)["'`]/g)) raised.add(code!);
    }
    expect([...catalogue].filter((code) => !raised.has(code))).toEqual([]);
  });

  it("has every code src/ names, and none of Node's own", () => {
    const unknown = [...codesIn(sources, CATALOGUE_FILE)]
      .filter(([code]) => !catalogue.has(code) && !PLATFORM_CODES.has(code))
      .map(([code, path]) => `${code} (${path})`);
    expect(unknown).toEqual([]);
    expect([...PLATFORM_CODES].filter((code) => catalogue.has(code))).toEqual([]);
  });

  it(`is documented in ${CODES_PAGE}, code by code, with its status and title`, () => {
    const rows = documentedRows();
    const expected = Object.entries(ERROR_CODES).map(([code, { status, title }]) => [
      code,
      { status, title },
    ]);
    expect([...rows].sort()).toEqual(expected.sort());
  });

  it("has every code the docs name", () => {
    const unknown = [...codesIn(docs)]
      .filter(([code]) => !catalogue.has(code))
      .map(([code, path]) => `${code} (${path})`);
    expect(unknown).toEqual([]);
  });

  it("is the code of every error class in src/ (an internal one says it never escapes)", () => {
    const codeless: string[] = [];
    for (const [path, text] of sources) {
      for (const m of text.matchAll(/class (\w+) extends Error \{(\})?/g)) {
        const body = m[2] === undefined ? text.slice(m.index, text.indexOf("\n}", m.index)) : "";
        if (/\breadonly code\b/.test(body)) continue;
        const before = text.slice(Math.max(0, m.index - 300), m.index);
        if (/Never escapes/.test(before)) continue;
        codeless.push(`${m[1]} (${path})`);
      }
    }
    expect(codeless).toEqual([]);
  });
});

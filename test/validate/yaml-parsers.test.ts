// The two ways a file is read (src/yaml/events.ts, fast; src/yaml/tree.ts, the reference) must give the
// same documents: values, where each starts, and the line and column of every node a pointer
// can name. Whenever the fast reader takes a file, the yaml package must agree with it exactly.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { parseWithEvents } from "../../src/yaml/events.js";
import type { ParsedDocument } from "../../src/yaml/model.js";
import { parseWithTree } from "../../src/yaml/tree.js";
import { ROOT } from "./helpers.js";
import { hasSharedData, sharedPath } from "../support/shared-data.js";
import { applyText, applyValue, textMutation } from "./mutations.js";

const LIMITS = { maxDepth: 64, maxAliasCount: 100 };

function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...yamlFiles(path));
    else if (/\.(ya?ml|json)$/.test(name)) out.push(path);
  }
  return out;
}

const SHARED = sharedPath("reference-resources");
// The examples always; the reference resources too where they are.
const withReference = hasSharedData(SHARED, "yaml-parsers on the reference resources");
const files = [...yamlFiles(join(ROOT, "examples")), ...(withReference ? yamlFiles(SHARED) : [])];
const texts = files.map((f) => readFileSync(f, "utf8"));

function escape(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Every pointer into `value`, and one that goes one step past each container. */
function pointers(value: unknown, prefix = ""): string[] {
  const out = [prefix];
  if (Array.isArray(value)) {
    value.forEach((v, i) => out.push(...pointers(v, `${prefix}/${i}`)));
    out.push(`${prefix}/${value.length}`, `${prefix}/-`);
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) out.push(...pointers(v, `${prefix}/${escape(k)}`));
    out.push(`${prefix}/not-a-key`);
  }
  return out;
}

function hasNullField(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasNullField);
  if (value === null || typeof value !== "object") return false;
  return Object.values(value).some((v) => v === null || hasNullField(v));
}

function contentDocs(docs: ParsedDocument[]): ParsedDocument[] {
  return docs.filter((d) => !d.empty);
}

/** Compares the two readings of `text`; false when the fast reader declines the file. */
function sameReading(text: string): boolean {
  // Given a way to read the file again, as files are read: a released document keeps no text.
  const fast = parseWithEvents(text, LIMITS, () => text);
  if (fast === undefined) return false;
  const tree = contentDocs(parseWithTree(text, LIMITS));
  const events = contentDocs(fast);
  expect(events.map((d) => d.start)).toEqual(tree.map((d) => d.start));
  for (const [i, doc] of events.entries()) {
    const ref = tree[i]!;
    expect(doc.errors).toEqual(ref.errors);
    expect(doc.warnings).toEqual(ref.warnings);
    expect(doc.value).toStrictEqual(ref.value);
    const value = doc.value ?? ref.value;
    // A document said to hold no null field (so validation need not look for one) holds none.
    if (!doc.nullFields) expect(hasNullField(value)).toBe(false);
    // Lookups walk the file's events, and after release the document's own text, read again.
    for (const phase of ["shared", "released"]) {
      if (phase === "released") doc.release();
      for (const p of pointers(value)) {
        expect([p, doc.locate(p, "value")]).toEqual([p, ref.locate(p, "value")]);
        expect([p, doc.locate(p, "key")]).toEqual([p, ref.locate(p, "key")]);
        expect([p, doc.scalarOrigin(p)]).toEqual([p, ref.scalarOrigin(p)]);
      }
    }
  }
  return true;
}

describe("lookups after release", () => {
  const text = "a: 1\n---\nkind: X\nspec:\n  image: registry.example/team/server:1.0\n";

  it("read the file's text again, not a copy kept", () => {
    let reads = 0;
    const again = () => (reads++, text);
    const [first, doc] = parseWithEvents(text, LIMITS, again)! as [ParsedDocument, ParsedDocument];
    expect(doc.locate("/spec/image")).toEqual({ line: 5, column: 10 });
    expect(reads).toBe(0);
    // The events (and the text) go when every document of the file is released.
    first.release();
    doc.release();
    expect(doc.locate("/spec/image")).toEqual({ line: 5, column: 10 });
    expect(doc.scalarOrigin("/spec/image")).toEqual({ line: 5, column: 10, lines: false });
    expect(reads).toBe(1);
  });

  it("give the document's start when the file changed since it was read", () => {
    const docs = parseWithEvents(text, LIMITS, () => undefined)!;
    for (const d of docs) d.release();
    const doc = docs[1]!;
    expect(doc.locate("/spec/image")).toEqual({ line: 3, column: 1 });
    expect(doc.scalarOrigin("/spec/image")).toBeUndefined();
  });
});

describe("null fields", () => {
  it("a file's documents say whether a mapping in it maps a key to null", () => {
    const read = (text: string) => parseWithEvents(text, LIMITS)!.map((d) => d.nullFields);
    expect(read("a: 1\nb: [null, ~]\n---\nc: {d: x}\n")).toEqual([false, false]);
    expect(read("a: 1\nb:\n---\nc: x\n")).toEqual([true, true]);
    expect(read("a: {b: {c: ~}}\n")).toEqual([true]);
  });
});

/** Constructs a resource repository holds, in the styles people write them. */
const SNIPPETS = [
  'a: 1\nb:\nc: "q"\nd: |\n  x\n  y\ne: >-\n  folded\n  text\nf: [1, {g: h}]\n',
  "l:\n- x\n-   y: 1\n    z: 2\n- - nested\n  - list\n- {}\n- []\n- \n- ''\n",
  "# leading comment\n---\napiVersion: v1\nkind: ConfigMap # trailing\n---\n# only a comment\n",
  "---\n---\n--- {a: 1}\n--- [x]\n---\nkey: value\n...\n",
  "  indented: root\n  second: key\n",
  "'quoted key': 1\n\"double\\tkey\": 2\nplain key: 3\n",
  "s: 'it''s'\nd: \"\\u00e9\\x41\\n\"\nu: é ü 中文\nempty: ''\nnull1: ~\nnull2: null\n",
  "n: [1, -2, 0o17, 0x1F, 1.5, -.5, .inf, -.inf, .nan, 1e3, +12]\nb: [true, false, True, FALSE]\n",
  "strs: [yes, no, on, off, 0b101, 1_000, 012, 2001-12-14, '12', 12:30]\n",
  "a: |+\n  keep\n\nb: |-\n  strip\nc: |2\n    indented\nd: >\n  folded\n\n  para\n",
  "config: |\n\n  leading blank line\n  second\n",
  'multi: this is\n  a multi line\n  plain scalar\nq: "double\n  multi"\n',
  "crlf: yes\r\nnext:\r\n  - a\r\n  - b\r\n",
  '{"json": true, "list": [1, 2, {"k": null}], "s": "x"}\n',
  "k: v # comment\n# c\nl: # c\n  - a # c\n",
  "a: b#c\nurl: http://x.example/a#frag\nglob: '*.txt'\nstar: a*b\n",
  "root: {a: [1, {b: c}], d: {e: f}}\nflow: [a, b,\n  c]\n",
  "- a\n- b\n",
  "just a scalar\n",
  "",
  "\n\n# nothing\n",
];

describe("the fast reader reads files exactly as the yaml package does", () => {
  it("examples/ and the reference resources, all taken by the fast reader", () => {
    expect(texts.length).toBeGreaterThan(withReference ? 50 : 20);
    const declined = files.filter((_, i) => !sameReading(texts[i]!));
    expect(declined).toEqual([]);
  });

  it.each(SNIPPETS.map((s, i) => [i, s] as const))("snippet %i", (_i, text) => {
    expect(sameReading(text)).toBe(true);
  });

  it("nesting: taken up to the depth limit, left to the yaml package from it on", () => {
    const nested = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}\n`;
    expect(sameReading(nested(63))).toBe(true);
    for (const n of [64, 65, 200]) expect(parseWithEvents(nested(n), LIMITS)).toBeUndefined();
    expect(parseWithTree(nested(65), LIMITS)[0]?.errors[0]?.message).toMatch(/nests deeper/);
  });

  it("files it must leave to the yaml package: it declines them", () => {
    const declined = [
      "a: &x 1\nb: *x\n", // anchors and aliases
      "a: !custom 1\n", // tags
      "%YAML 1.1\n---\na: yes\n", // directives
      "1: one\n", // a key that is not a string
      "a: 1\na: 2\n", // duplicate keys
      "a: [1, 2\n", // a syntax error
      "? [complex]\n: key\n",
      "\ufeffa: 1\n", // a byte order mark
      "__proto__: x\n",
      "a:\n\t- tab\n", // tabs: the yaml package refuses some placements js-yaml accepts
      "%-\na: 1\n", // a line that looks like a directive
      "--- |\n  a block scalar as the document\n",
    ];
    for (const text of declined)
      expect([text, parseWithEvents(text, LIMITS)]).toEqual([text, undefined]);
  });

  it("mutated texts: whenever the fast reader takes one, the readings agree", () => {
    let taken = 0;
    fc.assert(
      fc.property(
        fc.nat({ max: texts.length - 1 }),
        fc.array(textMutation, { minLength: 1, maxLength: 3 }),
        (seed, mutations) => {
          const text = mutations.reduce(applyText, texts[seed] ?? "");
          if (sameReading(text)) taken++;
        },
      ),
      { numRuns: 2500 },
    );
    // The property says something only if the fast reader takes many of them.
    expect(taken).toBeGreaterThan(500);
  }, 60_000);

  it("values of every shape, written by the yaml package, read the same", () => {
    const docs = texts.slice(0, 40).map((t) => parse(t.split(/^---$/m)[0] ?? "") as unknown);
    fc.assert(
      fc.property(
        fc.nat({ max: docs.length - 1 }),
        fc.array(fc.nat({ max: 50 }), { maxLength: 5 }),
        fc.jsonValue({ maxDepth: 3 }),
        (i, path, value) => {
          const text = stringify(applyValue(docs[i], path, value));
          // `__proto__` as a key is the one value the fast reader leaves to the yaml package.
          expect(sameReading(text) || text.includes("__proto__")).toBe(true);
        },
      ),
      { numRuns: 1500 },
    );
  }, 60_000);
});

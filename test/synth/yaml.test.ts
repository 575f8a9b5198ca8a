// toYaml writes exactly what the `yaml` package's stringify writes, only faster: compared on
// every rendered example object, every example resource and edge cases of strings; and
// sortedYamlDocument what it writes with sorted keys (the vmcp configuration file).
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../src/project.js";
import { loadPaths } from "../../src/synth/load.js";
import { synthesize } from "../../src/synth/render.js";
import { sortedYamlDocument, toYaml, yamlDocument } from "../../src/synth/yaml.js";

function library(value: unknown): string {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

const EDGE = {
  multi: "x\ny\n",
  strip: ["p\nq", "r\n\n", "\n", "\n\n", "\nx", "a\n\nb\n", "x\n y\n", "trail\n  "],
  nested: [{ block: "m\nn\n", emptySeq: [], emptyMap: {} }, [["deep", "er"], []], {}],
  image: "ghcr.io/x:1.0",
  colonSpace: "a: b",
  empty: "",
  lead: " lead",
  numberLike: ["1.0", "8080", "0x1F", "1e3", ".inf", "-1"],
  words: ["yes", "no", "on", "true", "False", "null", "~", "NULL"],
  flag: '--k8s-pod-patch={"a":1,"b":[true]}',
  hash: ["#x", "a #b", "a#b"],
  tab: "tab\there",
  punct: [
    "ends:",
    "-",
    "- x",
    "*a",
    "&b",
    "!c",
    "%d",
    "@e",
    "`f",
    "[g",
    "{h",
    "|i",
    ">j",
    "'k",
    '"l',
  ],
  unicode: "café ☕",
  quotes: ['quote"d', "it's"],
  "key with: colon": 1,
  "123": 2,
  true: 3,
  "": 4,
  "app.kubernetes.io/name": "x",
  numbers: [0, -3, 0.5, 1e21, 12345678901234],
  nothing: null,
  bools: [true, false],
};

describe("toYaml", () => {
  it("matches the library on edge cases and parses back to the same value", () => {
    expect(yamlDocument(EDGE)).toBe(library(EDGE));
    expect(parse(yamlDocument(EDGE))).toEqual(EDGE);
  });

  it("matches the library on every rendered example object and every example resource", async () => {
    const { resources } = await loadPaths([join(projectRoot(), "examples")]);
    const { objects } = synthesize(resources);
    for (const o of [...objects, ...resources]) expect(yamlDocument(o)).toBe(library(o));
    expect(toYaml(objects)).toBe(objects.map(library).join("---\n"));
  });
});

describe("sortedYamlDocument", () => {
  const sortedLibrary = (v: unknown) =>
    stringify(v, { lineWidth: 0, sortMapEntries: true, aliasDuplicateObjects: false });
  const { "123": _index, ...noIndexKeys } = EDGE;

  it("matches the library with sorted keys, nested in sequences and with undefined values", () => {
    const value = {
      zeta: [{ b: 1, a: { d: undefined, c: [2, { y: 1, x: 2 }] } }, []],
      Alpha: { only: undefined },
      alpha: {},
      edge: noIndexKeys,
      "b-": 1,
      b: 2,
      B: 3,
    };
    expect(sortedYamlDocument(value)).toBe(sortedLibrary(value));
    expect(parse(sortedYamlDocument(value))).toEqual(parse(sortedLibrary(value)));
  });

  it("leaves a mapping with keys like 10 and 9 to the library, which sorts them as text", () => {
    const value = { backends: { "10": "ten", "9": "nine", a: 1 } };
    expect(sortedYamlDocument(value)).toBe(sortedLibrary(value));
    expect(sortedYamlDocument(value)).toMatch(/"10": ten\n\s+"9": nine/);
    expect(sortedYamlDocument(EDGE)).toBe(sortedLibrary(EDGE));
  });
});

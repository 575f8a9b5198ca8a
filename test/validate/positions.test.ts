// Every issue names the line and column of the offending node, not just of the document.
import { describe, expect, it } from "vitest";
import { check, issues } from "./helpers.js";

/** Expected positions are 1-based [line, column] of the node each issue names. */
interface Case {
  name: string;
  text: string;
  want: { path: string; line: number; column: number }[];
  options?: { strict?: boolean; allowMissingRefs?: boolean };
}

const HEADER =
  "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata:\n  name: x\n";

const cases: Case[] = [
  {
    name: "a scalar value: the value's column (the issue's own example)",
    text: HEADER + "spec:\n  image: i\n  proxyPort: abc\n",
    want: [{ path: "/spec/proxyPort", line: 7, column: 14 }],
  },
  {
    name: "a missing field: the key of the object that lacks it",
    text: HEADER + "spec:\n  transport: stdio\n",
    want: [{ path: "/spec/image", line: 5, column: 1 }],
  },
  {
    name: "an unknown field: its key",
    text: HEADER + "spec:\n  image: i\n  colour: blue\n",
    want: [{ path: "/spec/colour", line: 7, column: 3 }],
  },
  {
    name: "a rule on an object: the object's key",
    text:
      HEADER +
      "spec:\n  image: i\n  rateLimiting:\n    shared:\n      maxTokens: 3\n      refillPeriod: 1m\n",
    want: [{ path: "/spec/rateLimiting", line: 7, column: 3 }],
  },
  {
    name: "a list item",
    text: HEADER + "spec:\n  image: i\n  args:\n    - ok\n    - 42\n",
    want: [{ path: "/spec/args/1", line: 9, column: 7 }],
  },
  {
    name: "flow style",
    text: HEADER + "spec: {image: i, proxyPort: 0}\n",
    want: [{ path: "/spec/proxyPort", line: 5, column: 29 }],
  },
  {
    name: "a later document of a multi-document file",
    text:
      HEADER +
      "spec:\n  image: i\n---\n# comment\n\n" +
      HEADER.replace("name: x", "name: y") +
      "spec:\n  image: i\n  proxyPort: 0\n",
    want: [{ path: "/spec/proxyPort", line: 16, column: 14 }],
  },
  {
    name: "a missing reference: the name",
    text: HEADER + "spec:\n  image: i\n  toolConfigRef:\n    name: tools\n",
    want: [{ path: "/spec/toolConfigRef/name", line: 8, column: 11 }],
  },
  {
    name: "a duplicate key (parse level)",
    text: HEADER + "spec:\n  image: i\n  image: j\n",
    want: [{ path: "", line: 7, column: 3 }],
  },
  {
    name: "invalid YAML (parse level)",
    text: HEADER + "spec:\n  image: [unclosed\n  proxyPort: 1\n",
    want: [{ path: "", line: 7, column: 3 }],
  },
  {
    name: "a value given by an alias: the alias",
    text: HEADER + "  labels: {port: &p '99999'}\nspec:\n  image: i\n  proxyPort: *p\n",
    want: [{ path: "/spec/proxyPort", line: 8, column: 14 }],
  },
];

describe("line and column of every issue", () => {
  it.each(cases)("$name", async (c) => {
    const report = await check({ "f.yaml": c.text }, c.options);
    const got = issues(report).map((i) => ({ path: i.path, line: i.line, column: i.column }));
    expect(got).toEqual(c.want);
  });

  it("a List item: positions inside the item, paths relative to it", async () => {
    const text =
      "apiVersion: v1\nkind: List\nitems:\n" +
      "  - apiVersion: toolhive.stacklok.dev/v1alpha1\n" +
      "    kind: MCPGroup\n    metadata: {name: g}\n" +
      "  - apiVersion: toolhive.stacklok.dev/v1alpha1\n" +
      "    kind: MCPServer\n    metadata: {name: s}\n    spec: {image: i, proxyPort: -5}\n";
    const report = await check({ "l.yaml": text });
    expect(report.resources.map((r) => [r.kind, r.line])).toEqual([
      ["MCPGroup", 4],
      ["MCPServer", 7],
    ]);
    expect(issues(report).map((i) => [i.path, i.line, i.column])).toEqual([
      ["/spec/proxyPort", 10, 33],
    ]);
  });

  it("the resource line is where its document's content starts", async () => {
    const text =
      "# leading comment\n\n" + HEADER + "---\n\n" + HEADER.replace("name: x", "name: y");
    const report = await check({ "f.yaml": text });
    expect(report.resources.map((r) => r.line)).toEqual([3, 9]);
  });

  it("an MCPRegistry's configYAML: the line and column inside the block scalar", async () => {
    const text =
      "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPRegistry\nmetadata:\n  name: r\n" +
      "spec:\n  configYAML: |\n    sources:\n      - name: a\n        managed: {}\n" +
      "    registries:\n      - name: d\n        sources: [a, b]\n    auth:\n      mode: anonymous\n";
    const report = await check({ "r.yaml": text });
    expect(issues(report).map((i) => [i.path, i.line, i.column, i.level])).toEqual([
      ["/spec/configYAML", 12, 22, "runtime"],
    ]);
  });

  it("columns count characters, not bytes", async () => {
    const text = HEADER + 'spec: {image: "ünï", proxyPort: 0}\n';
    const report = await check({ "u.yaml": text });
    expect(issues(report).map((i) => [i.line, i.column])).toEqual([[5, 33]]);
  });
});

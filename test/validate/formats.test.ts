// The output formats, case by case on one report with valid, invalid, warned and skipped
// resources: text lines, the JSON contract, JUnit XML and TAP.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Report, formatReport } from "../../src/validate/index.js";
import { ROOT, check } from "./helpers.js";

const TEXT = [
  "apiVersion: toolhive.stacklok.dev/v1alpha1",
  "kind: MCPServer",
  "metadata:",
  "  name: web",
  "  namespace: team",
  "spec:",
  "  image: ghcr.io/example/web:1",
  '  proxyPort: "80"',
  "  colour: blue",
  "---",
  "apiVersion: toolhive.stacklok.dev/v1alpha1",
  "kind: MCPGroup",
  "metadata:",
  "  name: ok",
  "---",
  "apiVersion: v1",
  "kind: ConfigMap",
  "metadata:",
  "  name: cm",
  "---",
  "a: [broken",
  "",
].join("\n");

let cached: Report | undefined;
async function report(): Promise<Report> {
  // Unknown fields as warnings and core kinds skipped: one report with every kind of result.
  return (cached ??= await check({ "dir/res.yaml": TEXT }, { unknownFields: "warn", kube: false }));
}

describe("text", () => {
  it("one line per issue: FILE:LINE:COL: KIND/NAMESPACE/NAME: PATH: MESSAGE (LEVEL)", async () => {
    const out = formatReport(await report(), "text", { summary: false, color: false });
    expect(out.trimEnd().split("\n")).toEqual([
      "dir/res.yaml:8:14: MCPServer/team/web: /spec/proxyPort: must be integer, not string (schema)",
      'dir/res.yaml:9:3: MCPServer/team/web: /spec/colour: unknown field "colour" (schema, warning)',
      expect.stringMatching(/^dir\/res\.yaml:22:1: -\/-\/-: -: .+ \(parse\)$/),
    ]);
  });

  it("--summary adds a last line", async () => {
    const out = formatReport(await report(), "text", { summary: true, color: false });
    expect(out.trimEnd().split("\n").pop()).toBe(
      "4 resources: 1 valid, 2 invalid, 1 skipped; 2 errors, 1 warning",
    );
  });

  it("colours only when asked (a terminal)", async () => {
    const plain = formatReport(await report(), "text", { summary: false, color: false });
    const coloured = formatReport(await report(), "text", { summary: false, color: true });
    expect(plain).not.toContain("\x1b[");
    expect(coloured).toContain("\x1b[31m(schema)\x1b[0m");
    expect(coloured).toContain("\x1b[33m(schema, warning)\x1b[0m");
  });

  it("colours with the codes themselves, never escaped (each line starts bold)", async () => {
    const coloured = formatReport(await report(), "text", { summary: false, color: true });
    for (const line of coloured.trimEnd().split("\n")) {
      expect(line.startsWith("\x1b[1mdir/res.yaml:"), line).toBe(true);
    }
    expect(coloured).not.toContain("\\u001b");
  });

  it("prints nothing for a valid set without --summary", async () => {
    const ok = await check({ "g.yaml": TEXT.split("---\n")[1] ?? "" });
    expect(formatReport(ok, "text", { summary: false, color: false })).toBe("");
  });

  it("escapes control characters so that one issue stays one line", async () => {
    const r = await check({
      "x.yaml":
        'apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata: {name: s}\nspec: {image: i, "bad\\nkey": 1}\n',
    });
    const out = formatReport(r, "text", { summary: false, color: false });
    expect(out.trimEnd().split("\n")).toHaveLength(1);
    expect(out).toContain("bad\\nkey");
  });
});

describe("json", () => {
  it("follows the documented contract exactly", async () => {
    const parsed = JSON.parse(
      formatReport(await report(), "json", { summary: false, color: false }),
    ) as {
      resources: Record<string, unknown>[];
      summary: Record<string, number>;
    };
    expect(Object.keys(parsed)).toEqual(["resources", "summary"]);
    for (const r of parsed.resources) {
      expect(Object.keys(r)).toEqual([
        "file",
        "line",
        "kind",
        "namespace",
        "name",
        "valid",
        "skipped",
        "errors",
        "warnings",
      ]);
      for (const i of [...(r.errors as object[]), ...(r.warnings as object[])]) {
        expect(Object.keys(i)).toEqual(["path", "line", "column", "message", "level"]);
      }
    }
    expect(parsed.summary).toEqual({
      resources: 4,
      valid: 1,
      invalid: 2,
      skipped: 1,
      errors: 2,
      warnings: 1,
    });
    expect(parsed.resources[0]).toEqual({
      file: "dir/res.yaml",
      line: 1,
      kind: "MCPServer",
      namespace: "team",
      name: "web",
      valid: false,
      skipped: false,
      errors: [
        {
          path: "/spec/proxyPort",
          line: 8,
          column: 14,
          message: "must be integer, not string",
          level: "schema",
        },
      ],
      warnings: [
        {
          path: "/spec/colour",
          line: 9,
          column: 3,
          message: 'unknown field "colour"',
          level: "schema",
        },
      ],
    });
    expect(parsed.resources[2]).toMatchObject({ kind: "ConfigMap", valid: true, skipped: true });
    expect(parsed.resources[3]).toMatchObject({ kind: "", valid: false, skipped: false });
  });
});

/** A small well-formedness check: tags balance and attribute values are quoted and escaped. */
function expectWellFormedXml(xml: string): void {
  const stack: string[] = [];
  const body = xml.replace(/^<\?xml[^>]*\?>\s*/, "");
  for (const m of body.matchAll(
    /<(\/?)([A-Za-z-]+)((?:\s+[a-z]+="[^"<&]*(?:&(?:amp|lt|gt|quot);[^"<&]*)*")*)\s*(\/?)>/g,
  )) {
    const [, close, name = "", , selfClose] = m;
    if (selfClose) continue;
    if (close) expect(stack.pop()).toBe(name);
    else stack.push(name);
  }
  expect(stack).toEqual([]);
  // No raw `<` or `&` outside tags and entities.
  const text = body.replace(/<[^>]+>/g, "");
  expect(text).not.toMatch(/&(?!(amp|lt|gt|quot);)/);
}

describe("junit", () => {
  it("a test suite per file, a test case per resource, failures and skips", async () => {
    const xml = formatReport(await report(), "junit", { summary: false, color: false });
    expectWellFormedXml(xml);
    expect(xml).toContain(
      '<testsuites name="mcpfleet validate" tests="4" failures="2" errors="0" skipped="1">',
    );
    expect(xml).toContain(
      '<testsuite name="dir/res.yaml" tests="4" failures="2" errors="0" skipped="1">',
    );
    expect(xml).toContain('<testcase classname="dir/res.yaml" name="MCPServer/team/web">');
    expect(xml).toContain('<failure message="must be integer, not string" type="schema">');
    expect(xml).toContain(
      '<testcase classname="dir/res.yaml" name="ConfigMap/default/cm">\n      <skipped/>',
    );
    expect(xml).toContain(
      "<system-out>dir/res.yaml:9:3: MCPServer/team/web: /spec/colour: unknown field &quot;colour&quot; (schema, warning)</system-out>",
    );
    expect((xml.match(/<testcase /g) ?? []).length).toBe(4);
  });

  it("escapes what XML cannot carry", async () => {
    const r = await check({ 'a&b<"c>.yaml': "apiVersion: v1\nkind: x\u0001y\n" });
    const xml = formatReport(r, "junit", { summary: false, color: false });
    expectWellFormedXml(xml);
    expect(xml).toContain('name="a&amp;b&lt;&quot;c&gt;.yaml"');
    expect(xml).not.toContain(String.fromCharCode(1));
  });
});

describe("tap", () => {
  it("a test point per resource with a YAML diagnostic block", async () => {
    const out = formatReport(await report(), "tap", { summary: true, color: false });
    const lines = out.trimEnd().split("\n");
    expect(lines.slice(0, 3)).toEqual([
      "TAP version 13",
      "1..4",
      "not ok 1 - dir/res.yaml:1 MCPServer/team/web",
    ]);
    expect(lines).toContain("ok 2 - dir/res.yaml:11 MCPGroup/default/ok");
    expect(lines).toContain("ok 3 - dir/res.yaml:16 ConfigMap/default/cm # SKIP not validated");
    expect(lines).toContain("not ok 4 - dir/res.yaml:21 document at line 21");
    expect(lines).toContain("  errors:");
    expect(lines).toContain(
      '    - "dir/res.yaml:8:14: MCPServer/team/web: /spec/proxyPort: must be integer, not string (schema)"',
    );
    expect(lines.at(-1)).toBe("# 4 resources: 1 valid, 2 invalid, 1 skipped; 2 errors, 1 warning");
    const points = lines.filter((l) => /^(not )?ok \d+ /.test(l));
    expect(points).toHaveLength(4);
  });
});

describe("docs/ci.md", () => {
  it("the GitHub problem matcher matches every text line", async () => {
    const doc = readFileSync(join(ROOT, "docs/ci.md"), "utf8");
    const json = /```json\n([\s\S]*?problemMatcher[\s\S]*?)```/.exec(doc)?.[1];
    expect(json).toBeDefined();
    const matcher = JSON.parse(json ?? "{}") as {
      problemMatcher: { pattern: { regexp: string; file: number; line: number }[] }[];
    };
    const pattern = matcher.problemMatcher[0]?.pattern[0];
    const re = new RegExp(pattern?.regexp ?? "^$");
    const lines = formatReport(await report(), "text", { summary: false, color: false })
      .trimEnd()
      .split("\n");
    for (const line of lines) {
      const m = re.exec(line);
      expect(m, line).not.toBeNull();
      expect(m?.[pattern?.file ?? 0]).toBe("dir/res.yaml");
    }
    expect(re.exec(lines[0] ?? "")?.[pattern?.line ?? 0]).toBe("8");
  });
});

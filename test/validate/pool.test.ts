// Worker threads (`threads`): the same report as one thread, positions of reference-level
// issues included (those are found by parsing a document's text again in the calling thread).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { validatePaths } from "../../src/validate/index.js";
import { runPool } from "../../src/validate/pool.js";
import { DEFAULT_OPTIONS } from "../../src/validate/types.js";
import { res, yamlDocs } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-pool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const files: Record<string, string> = {
  "a-group.yaml": yamlDocs(res("MCPGroup", "tools"), res("MCPToolConfig", "ro", {})),
  "b-servers.yaml": yamlDocs(
    res("MCPServer", "one", { image: "ghcr.io/x/one:1", groupRef: "tools" }),
    res("MCPServer", "two", { image: "ghcr.io/x/two:1", groupRef: "missing", proxyPort: 70000 }),
    res("MCPServer", "tools-dup", { image: "i", toolConfigRef: { name: "nope" } }),
  ),
  "c-list.yaml": stringify({
    apiVersion: "v1",
    kind: "List",
    items: [res("MCPRemoteProxy", "one", { remoteURL: "https://x.example.com", groupRef: "no" })],
  }),
  "d-broken.yaml": "apiVersion: v1\nkind: [unclosed\n",
  "e-dup.yaml": yamlDocs(res("MCPGroup", "tools"), { apiVersion: "v1", kind: "ConfigMap" }),
  "f-registry.yaml": yamlDocs(
    res("MCPRegistry", "reg", {
      configYAML:
        "sources:\n  - name: a\n    managed: {}\nregistries:\n  - name: r\n    sources: [b]\n",
    }),
  ),
};
for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);

describe("worker threads", () => {
  it("give the same report as one thread, reference positions included", async () => {
    const one = await validatePaths([dir], { threads: 1 });
    const refs = one.resources.flatMap((r) => r.errors.filter((e) => e.level === "reference"));
    expect(refs.length).toBeGreaterThanOrEqual(4);
    expect(refs.every((e) => e.line > 1)).toBe(true);
    expect(await validatePaths([dir], { threads: 2 })).toEqual(one);
    expect(await validatePaths([dir], { threads: 2, strict: true })).toEqual(
      await validatePaths([dir], { strict: true }),
    );
  }, 60_000);

  it("run every file on a worker and send back its results", async () => {
    const { stdin: _stdin, ...options } = DEFAULT_OPTIONS;
    const names = Object.keys(files).sort();
    const done = await runPool(
      names.map((name) => ({ name, path: join(dir, name), options })),
      2,
    );
    expect(done.map((d) => d.results[0]?.file)).toEqual(names);
    expect(done.find((d) => d.results[0]?.file === "b-servers.yaml")?.own).toHaveLength(3);
  });

  it("reports an unreadable file as one thread does", async () => {
    const missing = join(dir, "no-such-file.yaml");
    const paths = [join(dir, "a-group.yaml"), missing];
    expect(await validatePaths(paths, { threads: 2 })).toEqual(await validatePaths(paths));
  });
});

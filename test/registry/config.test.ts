import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseDuration } from "../../src/duration.js";
import { DURATION_PATTERN } from "../../src/schema/transform.js";
import { loadConfigFile, parseConfig } from "../../src/registry/config/load.js";
import { pgpassLookup, resolvePassword } from "../../src/registry/config/secrets.js";
import { describeWithSharedData, sharedPath } from "../support/shared-data.js";

const REFERENCE_CONFIGS = sharedPath("reference-registry-configs");

describe("registry config loading", () => {
  it("loads the example config", () => {
    const ex = loadConfigFile(
      join(import.meta.dirname, "../../examples/registry/config-anonymous.yaml"),
    );
    expect(ex.config.registries[0]?.name).toBe("default");
    expect(ex.warnings).toEqual([]);
  });

  it("names key and line of every error", () => {
    const text = [
      "sources:",
      "  - name: catalog",
      "    file:",
      "      path: x.json",
      "  - name: Bad_Name",
      "    file:",
      "      path: x.json",
      "registries:",
      "  - name: default",
      "    sources: [catalog, missing]",
      "auth:",
      "  mode: anonymous",
    ].join("\n");
    let message = "";
    try {
      parseConfig(text, "cfg.yaml");
    } catch (err) {
      expect((err as { code: string }).code).toBe("ERR_REGISTRY_CONFIG");
      message = (err as Error).message;
    }
    expect(message).toMatch(/cfg\.yaml:5:\d+: \/sources\/1\/name/);
    expect(message).toContain(
      'cfg.yaml:10:24: /registries/0/sources/1: registry "default" names source "missing", which is not defined in sources',
    );
    expect(message).not.toContain("every source a registry names");
    expect(message).toContain("2 configuration error(s)");
  });

  it("reports YAML syntax errors with a line", () => {
    expect(() => parseConfig("sources:\n  - name: [\n", "bad.yaml")).toThrow(/bad\.yaml:\d+:/);
  });

  it("reads anchors and aliases, and names positions in such a file too", () => {
    const text = [
      "sources:",
      "  - name: team",
      "    managed: &none {}",
      "registries:",
      "  - name: default",
      "    sources: [team, gone]",
      "auth: { mode: anonymous }",
      "x-unused: *none",
    ].join("\n");
    expect(() => parseConfig(text, "a.yaml")).toThrow(
      'a.yaml:6:21: /registries/0/sources/1: registry "default" names source "gone"',
    );
    const ok = parseConfig(text.replace(", gone]", "]"), "a.yaml");
    expect(ok.config.sources[0]).toEqual({ name: "team", managed: {} });
    expect(ok.positions("/registries/0/sources/0")).toBe("6:15");
  });

  it("refuses a file of more than one document, naming where the second starts", () => {
    const one = "sources: [{name: m, managed: {}}]\nregistries: [{name: r, sources: [m]}]\n";
    expect(() => parseConfig(`${one}---\n${one}`, "two.yaml")).toThrow(
      "two.yaml:4:1: the configuration must be one YAML document",
    );
  });

  it("accepts a clear-text password with a warning", () => {
    const r = parseConfig(
      [
        "sources: [{name: m, managed: {}}]",
        "registries: [{name: r, sources: [m]}]",
        "auth: {mode: anonymous}",
        "database:",
        "  host: db",
        "  password: hunter2",
      ].join("\n"),
      "c.yaml",
    );
    expect(r.config.database?.password).toBe("hunter2");
    expect(r.warnings).toEqual([
      expect.stringMatching(/^c\.yaml:6:13: \/database\/password: clear-text secret/),
    ]);
  });

  it("parses Go durations and rejects anything else", () => {
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("1.5s")).toBe(1500);
    expect(parseDuration("250ms")).toBe(250);
    for (const bad of ["", "5", "5 m", "m", "1d", "-1s"])
      expect(() => parseDuration(bad)).toThrow();
  });

  it("reads durations in the schemas' Duration language (flags also take 0)", () => {
    const schema = new RegExp(DURATION_PATTERN, "u");
    const samples = ["30s", "1h30m", "1.5h", "250ms", "2h45m10s", "10µs", "5us", "1ns"];
    const refused = ["", "5", ".5s", "1.s", "1.5", "s", "1d", "-1s", "1 h", "1h 30m", "1e3s"];
    for (const text of [...samples, ...refused]) {
      let parses = true;
      try {
        parseDuration(text);
      } catch {
        parses = false;
      }
      expect(parses, text).toBe(schema.test(text));
    }
    expect(parseDuration("0")).toBe(0);
  });
});

describe("secrets", () => {
  const want = { host: "db", port: 5432, database: "registry", user: "app" };
  it("looks passwords up in pgpass with wildcards and escapes", () => {
    const text = "# comment\nother:5432:registry:app:no\n*:5432:registry:app:pa\\:ss:word\n";
    expect(pgpassLookup(text, want)).toBe("pa:ss:word");
    expect(pgpassLookup(text, { ...want, user: "x" })).toBeUndefined();
  });
  it("prefers file, then environment, then PGPASSFILE, then clear text", () => {
    const dir = mkdtempSync(join(tmpdir(), "secrets-"));
    const file = join(dir, "pw");
    writeFileSync(file, "from-file\n");
    const pgpass = join(dir, "pgpass");
    writeFileSync(pgpass, "db:5432:registry:app:from-pgpass\n");
    const env = { PGPASSFILE: pgpass, MY_PW: "from-env" };
    expect(resolvePassword({ ...want, file, env: ["MY_PW"] }, env)).toBe("from-file");
    expect(resolvePassword({ ...want, env: ["MY_PW"] }, env)).toBe("from-env");
    expect(resolvePassword({ ...want, clearText: "clear" }, env)).toBe("from-pgpass");
    expect(
      resolvePassword({ ...want, clearText: "clear" }, { PGPASSFILE: join(dir, "none") }),
    ).toBe("clear");
  });
});

// Compatibility: a configuration written for the reference registry server loads unchanged.
describeWithSharedData("registry config: the reference configs", REFERENCE_CONFIGS, () => {
  it("loads the reference config with the format key", () => {
    const ref = loadConfigFile(join(REFERENCE_CONFIGS, "with-format-key__config-complete.yaml"));
    expect(ref.config.sources.length).toBeGreaterThan(0);
  });
});

// The repository's examples and the reference data give the results docs/compat.md predicts.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exitCode, validatePaths } from "../../src/validate/index.js";
import { REFERENCE_REGISTRY_CONFIGS, REFERENCE_RESOURCES } from "../schema/helpers.js";
import { describeWithSharedData } from "../support/shared-data.js";
import { ROOT, issues } from "./helpers.js";

/** The exceptions table of docs/compat.md as `file | Kind/name | path | level` keys. */
function documentedExceptions(): string[] {
  const text = readFileSync(join(ROOT, "docs/compat.md"), "utf8");
  const table = /<!-- exceptions:begin -->([\s\S]*?)<!-- exceptions:end -->/.exec(text)?.[1];
  if (table === undefined) throw new Error("docs/compat.md has no exceptions table");
  return table
    .split("\n")
    .filter((line) => line.startsWith("| ") && !/^\| (File|-+) /.test(line))
    .map((line) => {
      const [file, resource, path, level] = line
        .split("|")
        .slice(1, 5)
        .map((cell) => cell.trim().replace(/^`|`$/g, ""));
      return `${file} | ${resource} | ${path} | ${level}`;
    });
}

/**
 * References the reference documents make to resources defined in none of them: each file is
 * an example of its own, written for a cluster that holds the rest. Validated one file at a
 * time these are the only reference-level findings (warnings with --allow-missing-refs).
 */
const MISSING_REFERENCES = [
  "external-auth__mcpserver_with_external_auth.yaml | MCPServer/fetch-with-auth | /spec/externalAuthConfigRef/name",
  "mcp-server-entries__mcpserverentry_with_ca_bundle.yaml | MCPServerEntry/internal-mcp | /spec/groupRef/name",
  "mcp-server-entries__mcpserverentry_with_header_forward.yaml | MCPServerEntry/internal-api | /spec/groupRef/name",
  "mcp-server-entries__mcpserverentry_with_token_exchange.yaml | MCPServerEntry/salesforce-mcp | /spec/groupRef/name",
  "virtual-mcps__vmcp_inline_incoming_auth.yaml | VirtualMCPServer/inline-auth-vmcp | /spec/incomingAuth/oidcConfigRef/name",
  "virtual-mcps__vmcp_production_full.yaml | VirtualMCPServer/production-vmcp | /spec/incomingAuth/oidcConfigRef/name",
];

describe("examples/", () => {
  it("validates as one set with exit code 0, warnings included", async () => {
    const report = await validatePaths([join(ROOT, "examples")], { strict: true });
    expect(issues(report).map((i) => `${i.file}:${i.line}: ${i.message}`)).toEqual([]);
    expect(exitCode(report)).toBe(0);
    expect(report.summary.valid).toBeGreaterThanOrEqual(20);
  });

  it("holds an example of every kind and a registry configuration", async () => {
    const report = await validatePaths([join(ROOT, "examples")]);
    const kinds = new Set(report.resources.filter((r) => !r.skipped).map((r) => r.kind));
    expect(kinds).toContain("RegistryServerConfig");
    expect(kinds.size).toBeGreaterThanOrEqual(10);
  });
});

describeWithSharedData(
  "shared/data/reference-resources (docs/compat.md)",
  REFERENCE_RESOURCES,
  () => {
    const files = readdirSync(REFERENCE_RESOURCES)
      .filter((f) => f.endsWith(".yaml"))
      .sort();

    async function perFile() {
      const found: { key: string; level: string; severity: string }[] = [];
      for (const file of files) {
        const report = await validatePaths([join(REFERENCE_RESOURCES, file)], {
          allowMissingRefs: true,
          ignoreMissingSchemas: true,
        });
        for (const i of issues(report)) {
          found.push({
            key: `${file} | ${i.resource} | ${i.path}`,
            level: i.message.startsWith("unknown field ") ? "unknown field" : i.level,
            severity: i.severity,
          });
        }
        expect(exitCode(report), file).toBe(report.summary.invalid > 0 ? 1 : 0);
      }
      return found;
    }

    it("gives exactly the schema and CEL issues docs/compat.md lists, one file at a time", async () => {
      const found = await perFile();
      const actual = found
        .filter((f) => f.level !== "reference")
        .map((f) => `${f.key} | ${f.level}`);
      const documented = documentedExceptions();
      expect(actual.filter((a) => !documented.includes(a))).toEqual([]);
      expect(documented.filter((d) => !actual.includes(d))).toEqual([]);
    });

    it("finds only the known missing references, one file at a time", async () => {
      const found = await perFile();
      const refs = found.filter((f) => f.level === "reference");
      expect(refs.every((f) => f.severity === "warning")).toBe(true);
      expect(refs.map((f) => f.key).sort()).toEqual([...MISSING_REFERENCES].sort());
    });

    it("as one set: the same issues plus duplicates between the independent examples", async () => {
      const report = await validatePaths([REFERENCE_RESOURCES], {
        allowMissingRefs: true,
        ignoreMissingSchemas: true,
      });
      const reference = issues(report).filter((i) => i.level === "reference");
      for (const i of reference) {
        expect(i.message).toMatch(/^duplicate |not found in namespace/);
      }
      expect(reference.filter((i) => i.message.startsWith("duplicate ")).length).toBeGreaterThan(0);
      const others = issues(report).filter((i) => i.level !== "reference");
      expect(others).toHaveLength(documentedExceptions().length);
      // Another group's kind (a RedisFailover) is skipped, not an error, when asked to.
      expect(report.summary.skipped).toBeGreaterThan(0);
      expect(report.resources.filter((r) => r.skipped).every((r) => r.errors.length === 0)).toBe(
        true,
      );
    });

    it("without --ignore-missing-schemas, only the kinds of other groups are added as errors", async () => {
      const report = await validatePaths([REFERENCE_RESOURCES], { allowMissingRefs: true });
      const lenient = await validatePaths([REFERENCE_RESOURCES], {
        allowMissingRefs: true,
        ignoreMissingSchemas: true,
      });
      const key = (i: { file: string; resource: string; path: string; message: string }) =>
        `${i.file} ${i.resource} ${i.path} ${i.message}`;
      const before = new Set(issues(lenient).map(key));
      const added = issues(report).filter((i) => !before.has(key(i)));
      expect(added.map((i) => `${i.resource} ${i.message.split(":")[0]}`)).toEqual([
        "RedisFailover/redis no schema for RedisFailover of databases.spotahome.com/v1",
      ]);
      expect(report.summary.skipped).toBe(lenient.summary.skipped - 1);
    });

    it("core kinds among them are valid Kubernetes objects (validated by default)", async () => {
      const report = await validatePaths([REFERENCE_RESOURCES], { allowMissingRefs: true });
      const core = report.resources.filter((r) =>
        ["Secret", "ConfigMap", "Service", "StatefulSet", "ServiceAccount", "Namespace"].includes(
          r.kind,
        ),
      );
      expect(core.length).toBeGreaterThan(5);
      for (const r of core) {
        expect(r.skipped, `${r.file} ${r.kind}`).toBe(false);
        expect(r.errors, `${r.file} ${r.kind}/${r.name}`).toEqual([]);
      }
    });
  },
);

describeWithSharedData("shared/data/reference-registry-configs", REFERENCE_REGISTRY_CONFIGS, () => {
  it("every configuration is recognised by its shape and valid", async () => {
    const report = await validatePaths([REFERENCE_REGISTRY_CONFIGS], { strict: true });
    expect(issues(report)).toEqual([]);
    expect(report.resources.length).toBe(
      readdirSync(REFERENCE_REGISTRY_CONFIGS).filter((f) => f.endsWith(".yaml")).length,
    );
    expect(report.resources.every((r) => r.kind === "RegistryServerConfig")).toBe(true);
    expect(exitCode(report)).toBe(0);
  });
});

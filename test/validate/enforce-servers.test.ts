// enforceServers offline: validate (in one thread and in worker threads) and synth refuse an
// MCPServer whose image no registry of its namespace lists, when the catalogs can be read from
// the files given; one warning says the rest is checked at apply time; exit codes of both
// commands through the real command line.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/helpers.js";
import { validatePaths } from "../../src/validate/index.js";
import { type Doc, checkDocs, issues, res, tempDir, writeTree, yamlDocs } from "./helpers.js";

const CATALOG = JSON.stringify({
  version: "1.0.0",
  last_updated: "2025-01-01T00:00:00Z",
  servers: {
    fetch: { image: "ghcr.io/stackloklabs/gofetch/server:1.0.1", description: "fetch" },
    time: { image: "mcp/time", description: "time", tags: ["experimental"] },
  },
});

function configMap(name: string, data: Record<string, string>, namespace?: string): Doc {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, ...(namespace !== undefined ? { namespace } : {}) },
    data,
  };
}

/** An MCPRegistry whose one source is the ConfigMap `catalog`, mounted as configYAML's file. */
function registry(name: string, enforce: boolean, extraSources = "", filter = ""): Doc {
  return res("MCPRegistry", name, {
    enforceServers: enforce,
    configYAML: [
      "sources:",
      "  - name: approved",
      "    format: toolhive",
      "    file: {path: /catalog/servers.json}",
      "    syncPolicy: {interval: 5m}",
      ...(filter !== "" ? [`    filter: ${filter}`] : []),
      extraSources,
      "registries:",
      "  - name: default",
      "    sources: [approved]",
      "auth: {mode: anonymous}",
      "database: {embedded: {}}",
    ]
      .filter((l) => l !== "")
      .join("\n"),
    volumes: [
      {
        name: "catalog",
        configMap: { name: "catalog", items: [{ key: "registry.json", path: "servers.json" }] },
      },
    ],
    volumeMounts: [{ name: "catalog", mountPath: "/catalog", readOnly: true }],
  });
}

function server(name: string, image: string, labels?: Record<string, string>): Doc {
  const doc = res("MCPServer", name, { image, transport: "stdio" });
  if (labels !== undefined) (doc.metadata as Doc).labels = labels;
  return doc;
}

const catalog = configMap("catalog", { "registry.json": CATALOG });

describe("enforceServers offline", () => {
  it("accepts MCPServers whose images the catalog lists, in any written form", async () => {
    const report = await checkDocs([
      registry("approved", true),
      catalog,
      server("fetch", "ghcr.io/stackloklabs/gofetch/server:1.0.1"),
      server("time", "docker.io/mcp/time:latest"),
    ]);
    expect(issues(report)).toEqual([]);
  });

  it("refuses an image the catalog does not list, naming the image and the registries", async () => {
    const report = await checkDocs([
      registry("approved", true),
      registry("other", false),
      catalog,
      server("fetch", "ghcr.io/stackloklabs/gofetch/server:1.0.2"),
    ]);
    const found = issues(report);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      severity: "error",
      resource: "MCPServer/fetch",
      path: "/spec/image",
      level: "reference",
    });
    expect(found[0]!.message).toContain('"ghcr.io/stackloklabs/gofetch/server:1.0.2"');
    expect(found[0]!.message).toContain('consulted: "approved", "other"');
    expect(found[0]!.line).toBeGreaterThan(1);
  });

  it("checks nothing while no registry of the namespace enforces", async () => {
    const report = await checkDocs([registry("approved", false), catalog, server("x", "evil:1")]);
    expect(issues(report)).toEqual([]);
  });

  it("applies a source's filter as the registry server would", async () => {
    const report = await checkDocs([
      registry("approved", true, "", "{tags: {exclude: [experimental]}}"),
      catalog,
      server("time", "mcp/time"),
    ]);
    expect(issues(report).map((i) => i.resource)).toEqual(["MCPServer/time"]);
  });

  it("stays in its namespace: registries, ConfigMaps and servers of others do not count", async () => {
    const inTeam = (d: Doc): Doc => ({
      ...d,
      metadata: { ...(d.metadata as Doc), namespace: "team" },
    });
    const report = await checkDocs([
      inTeam(registry("approved", true)),
      // The catalog is in the default namespace: the team's registry cannot read it.
      catalog,
      inTeam(server("fetch", "ghcr.io/stackloklabs/gofetch/server:1.0.1")),
      // Default has no enforcing registry.
      server("free", "anything:1"),
    ]);
    const found = issues(report);
    expect(found.map((i) => [i.severity, i.resource])).toEqual([
      ["warning", "MCPRegistry/approved"],
    ]);
    expect(found[0]!.message).toContain('ConfigMap "catalog" is not among the files given');
  });

  it("reads a legacy configMapRef source, in another file than the registry", async () => {
    const legacy = res("MCPRegistry", "legacy", {
      enforceServers: true,
      sources: [
        {
          name: "catalog",
          configMapRef: { name: "catalog", key: "registry.json" },
          syncPolicy: { interval: "1h" },
        },
      ],
    });
    const dir = tempDir();
    writeTree(dir, {
      "registry.yaml": yamlDocs(legacy),
      "catalog.yaml": yamlDocs(catalog),
      "servers.yaml": yamlDocs(server("ok", "mcp/time:latest"), server("bad", "mcp/time:2")),
    });
    const one = await validatePaths([dir]);
    expect(issues(one).map((i) => [i.severity, i.resource])).toEqual([["error", "MCPServer/bad"]]);
    // Worker threads read the files apart: the same report.
    expect(await validatePaths([dir], { threads: 2 })).toEqual(one);
  });

  it("leaves sources it cannot read to apply time, with one warning on the registry", async () => {
    const extra = [
      "  - name: upstream",
      "    api: {endpoint: 'https://registry.example.com'}",
      "    syncPolicy: {interval: 1h}",
      "  - name: team",
      "    managed: {}",
    ].join("\n");
    const report = await checkDocs([
      registry("approved", true, extra),
      catalog,
      server("a", "ghcr.io/example/a:1"),
      server("b", "ghcr.io/example/b:1"),
      server("fetch", "ghcr.io/stackloklabs/gofetch/server:1.0.1"),
    ]);
    const found = issues(report);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      severity: "warning",
      resource: "MCPRegistry/approved",
      path: "/spec/enforceServers",
    });
    expect(found[0]!.message).toContain(
      '2 MCPServer image(s) ("ghcr.io/example/a:1", "ghcr.io/example/b:1")',
    );
    expect(found[0]!.message).toContain("checks them at apply time");
    expect(found[0]!.message).toContain("approved/upstream (a api source is read at apply time)");
    expect(found[0]!.message).toContain("approved/team (a managed source");
  });

  it("follows the registry-name and server-registry-name labels", async () => {
    const report = await checkDocs([
      registry("approved", true),
      catalog,
      server("named", "mcp/time", {
        "toolhive.stacklok.io/registry-name": "approved",
        "toolhive.stacklok.io/server-registry-name": "time",
      }),
      server("wrong-entry", "mcp/time", { "toolhive.stacklok.io/server-registry-name": "fetch" }),
      server("no-registry", "mcp/time", { "toolhive.stacklok.io/registry-name": "gone" }),
    ]);
    expect(issues(report).map((i) => i.resource)).toEqual([
      "MCPServer/wrong-entry",
      "MCPServer/no-registry",
    ]);
  });
});

describe("enforceServers on the command line", () => {
  const dir = tempDir();
  writeTree(dir, {
    "ok/resources.yaml": yamlDocs(
      registry("approved", true),
      catalog,
      server("fetch", "ghcr.io/stackloklabs/gofetch/server:1.0.1"),
    ),
    "bad/resources.yaml": yamlDocs(
      registry("approved", true),
      catalog,
      server("fetch", "ghcr.io/someone/else:1"),
    ),
  });

  it("validate exits 0 when every image is listed and 1 when one is not", async () => {
    const ok = await runCli(["validate", join(dir, "ok")]);
    expect(ok.status).toBe(0);
    const bad = await runCli(["validate", join(dir, "bad")]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('image "ghcr.io/someone/else:1"');
    expect(bad.stdout).toContain("resources.yaml:");
  });

  it("synth refuses what validate refuses and writes nothing", async () => {
    const out = join(dir, "out-bad");
    const bad = await runCli(["synth", join(dir, "bad"), "-d", out]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('image "ghcr.io/someone/else:1"');
    expect(existsSync(out)).toBe(false);
    const good = join(dir, "out-ok");
    const ok = await runCli(["synth", join(dir, "ok"), "-d", good, "--no-install"]);
    expect(ok.status).toBe(0);
    expect(readFileSync(join(good, "default.yaml"), "utf8")).toContain("name: fetch");
  });
});

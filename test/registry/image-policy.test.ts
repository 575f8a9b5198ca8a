// The matching rules of enforceServers (docs/enforce-servers.md, "Matching"), the images each
// catalog format lists, where an MCPRegistry's catalogs are read from, and the decision itself.
import { describe, expect, it } from "vitest";
import { catalogImages, entryNamed, listedImages } from "../../src/registry/images/listing.js";
import { catalogSources } from "../../src/registry/images/mcpregistry-sources.js";
import {
  REGISTRY_NAME_LABEL,
  SERVER_REGISTRY_NAME_LABEL,
  type RegistryListing,
  decideImage,
} from "../../src/registry/images/policy.js";
import {
  canonicalImage,
  parseImageReference,
  sameImage,
} from "../../src/registry/images/reference.js";
import { parseRegistryData } from "../../src/registry/formats/parse.js";

const DIGEST = `sha256:${"a".repeat(64)}`;
const OTHER = `sha256:${"b".repeat(64)}`;

function matches(wanted: string, listed: string): boolean {
  const w = parseImageReference(wanted);
  const l = parseImageReference(listed);
  if (w === undefined || l === undefined) throw new Error(`not a reference: ${wanted} ${listed}`);
  return sameImage(w, l);
}

describe("image references", () => {
  it.each([
    ["redis", "docker.io/library/redis:latest"],
    ["redis:7", "docker.io/library/redis:7"],
    ["mcp/time", "docker.io/mcp/time:latest"],
    ["index.docker.io/mcp/time:1", "docker.io/mcp/time:1"],
    ["GHCR.io/org/app:v1", "ghcr.io/org/app:v1"],
    ["localhost/app", "localhost/app:latest"],
    ["registry:5000/team/app:2", "registry:5000/team/app:2"],
    [`ghcr.io/org/app@${DIGEST}`, `ghcr.io/org/app@${DIGEST}`],
    [`ghcr.io/org/app:1.0@${DIGEST}`, `ghcr.io/org/app:1.0@${DIGEST}`],
  ])("%s is %s", (text, full) => {
    expect(canonicalImage(parseImageReference(text)!)).toBe(full);
  });

  it.each(["", " redis", "Upper/Case", "app:bad tag", "app@sha256:short", "a//b", "app:"])(
    "%j is not a reference",
    (text) => {
      expect(parseImageReference(text)).toBeUndefined();
    },
  );

  it.each([
    ["the same reference", "ghcr.io/org/app:1.0", "ghcr.io/org/app:1.0", true],
    ["docker.io written or not", "mcp/time:1", "docker.io/mcp/time:1", true],
    ["library/ implied", "docker.io/redis:7", "redis:7", true],
    ["no tag is latest", "mcp/time", "docker.io/mcp/time:latest", true],
    ["another tag", "ghcr.io/org/app:1.1", "ghcr.io/org/app:1.0", false],
    ["no tag against a tag", "ghcr.io/org/app", "ghcr.io/org/app:1.0", false],
    ["another host", "quay.io/org/app:1.0", "ghcr.io/org/app:1.0", false],
    ["another path", "ghcr.io/org/app2:1.0", "ghcr.io/org/app:1.0", false],
    ["the listed digest", `ghcr.io/org/app@${DIGEST}`, `ghcr.io/org/app@${DIGEST}`, true],
    [
      "the listed digest with a tag",
      `ghcr.io/org/app:9@${DIGEST}`,
      `ghcr.io/org/app@${DIGEST}`,
      true,
    ],
    ["another digest", `ghcr.io/org/app@${OTHER}`, `ghcr.io/org/app@${DIGEST}`, false],
    ["a digest against a tag", `ghcr.io/org/app:1.0@${DIGEST}`, "ghcr.io/org/app:1.0", false],
    ["a tag against a digest", "ghcr.io/org/app:1.0", `ghcr.io/org/app:1.0@${DIGEST}`, false],
  ])("%s: %s against %s is %s", (_why, wanted, listed, expected) => {
    expect(matches(wanted, listed)).toBe(expected);
  });
});

const TOOLHIVE = JSON.stringify({
  version: "1.0.0",
  last_updated: "2025-01-01T00:00:00Z",
  servers: {
    fetch: { image: "ghcr.io/stackloklabs/gofetch/server:1.0.1", description: "f", tags: ["web"] },
    time: { image: "mcp/time", description: "t", tags: ["util"] },
  },
  remote_servers: { docs: { url: "https://docs.example.com/mcp", description: "d" } },
});

const UPSTREAM = JSON.stringify({
  version: "1.0.0",
  meta: { last_updated: "2025-01-01T00:00:00Z" },
  data: {
    servers: [
      {
        name: "io.github.example/weather",
        version: "2.1.0",
        description: "w",
        packages: [
          { registryType: "oci", identifier: "ghcr.io/example/weather:2.1.0" },
          { registryType: "npm", identifier: "@example/weather", version: "2.1.0" },
        ],
      },
      {
        name: "io.github.example/old",
        version: "1.0.0",
        description: "o",
        packages: [{ registryType: "oci", identifier: "ghcr.io/example/old", version: "1.0.0" }],
      },
      {
        name: "io.github.example/remote",
        version: "1.0.0",
        description: "r",
        remotes: [{ type: "streamable-http", url: "https://r.example.com/mcp" }],
      },
    ],
  },
});

describe("listed images", () => {
  it("are the image of each toolhive container server (remote servers list none)", () => {
    expect(catalogImages(TOOLHIVE)).toEqual([
      { image: "ghcr.io/stackloklabs/gofetch/server:1.0.1", entry: "io.github.stacklok/fetch" },
      { image: "mcp/time", entry: "io.github.stacklok/time" },
    ]);
  });

  it("are the OCI packages of upstream servers, a separate version taken as the tag", () => {
    expect(catalogImages(UPSTREAM)).toEqual([
      { image: "ghcr.io/example/weather:2.1.0", entry: "io.github.example/weather" },
      { image: "ghcr.io/example/old:1.0.0", entry: "io.github.example/old" },
    ]);
  });

  it("are what the source's filter keeps, and never a deleted entry's", () => {
    expect(catalogImages(TOOLHIVE, "toolhive", { tags: { include: ["util"] } })).toEqual([
      { image: "mcp/time", entry: "io.github.stacklok/time" },
    ]);
    const entries = parseRegistryData(UPSTREAM).entries;
    entries[0]!.status = "deleted";
    expect(listedImages(entries).map((l) => l.entry)).toEqual(["io.github.example/old"]);
  });

  it("name entries by full name or by the short name after the slash", () => {
    expect(entryNamed("io.github.stacklok/fetch", "fetch")).toBe(true);
    expect(entryNamed("io.github.stacklok/fetch", "io.github.stacklok/fetch")).toBe(true);
    expect(entryNamed("io.github.stacklok/fetch", "fet")).toBe(false);
  });
});

describe("catalog sources of an MCPRegistry", () => {
  it("follow a configYAML file path through its volume mount to a ConfigMap key", () => {
    const spec = {
      configYAML: [
        "sources:",
        "  - {name: approved, format: toolhive, file: {path: /catalog/servers.json}, syncPolicy: {interval: 5m}}",
        "  - {name: whole, file: {path: /whole/registry.json}}",
        "  - {name: disk, file: {path: /data/registry.json}}",
        "  - {name: relative, file: {path: registry.json}}",
        "  - {name: upstream, api: {endpoint: 'http://127.0.0.1:1'}}",
        "  - {name: mine, managed: {}}",
        "  - {name: cluster, kubernetes: {}}",
      ].join("\n"),
      volumes: [
        {
          name: "c",
          configMap: { name: "approved", items: [{ key: "catalog", path: "servers.json" }] },
        },
        { name: "w", configMap: { name: "whole" } },
        { name: "d", emptyDir: {} },
      ],
      volumeMounts: [
        { name: "c", mountPath: "/catalog" },
        { name: "w", mountPath: "/whole/" },
        { name: "d", mountPath: "/data" },
      ],
    };
    const sources = catalogSources(spec);
    expect(Array.isArray(sources)).toBe(true);
    const byName = Object.fromEntries((sources as { name: string }[]).map((s) => [s.name, s]));
    expect(byName.approved).toMatchObject({
      kind: "configMap",
      configMap: "approved",
      key: "catalog",
      format: "toolhive",
      interval: "5m",
    });
    expect(byName.whole).toMatchObject({
      kind: "configMap",
      configMap: "whole",
      key: "registry.json",
    });
    expect(byName.disk).toMatchObject({ kind: "unreadable" });
    expect(byName.relative).toMatchObject({ kind: "unreadable" });
    expect(byName.upstream).toMatchObject({
      kind: "fetch",
      config: { name: "upstream", api: { endpoint: "http://127.0.0.1:1" } },
    });
    expect(byName.mine).toMatchObject({ kind: "unreadable" });
    expect(byName.cluster).toMatchObject({ kind: "unreadable" });
  });

  it("take a legacy configMapRef as a ConfigMap key, toolhive by default", () => {
    expect(
      catalogSources({
        sources: [
          { name: "c", configMapRef: { name: "cat", key: "registry.json" } },
          { name: "g", git: { repository: "https://x/y.git", auth: { username: "u" } } },
        ],
      }),
    ).toMatchObject([
      { name: "c", kind: "configMap", configMap: "cat", key: "registry.json", format: "toolhive" },
      { name: "g", kind: "fetch", config: { git: { repository: "https://x/y.git" } } },
    ]);
  });

  it("say so when configYAML is not YAML", () => {
    expect(catalogSources({ configYAML: "sources: [" })).toBe("configYAML is not YAML");
  });
});

describe("the decision", () => {
  const listing = (
    registry: string,
    enforce: boolean,
    images: { image: string; entry: string }[] | undefined,
  ): RegistryListing => ({
    registry,
    enforce,
    sources: [{ source: "s", images, ...(images === undefined ? { why: "unread" } : {}) }],
  });
  const server = (image: string, labels: Record<string, string> = {}) => ({ image, labels });
  const time = { image: "docker.io/mcp/time:latest", entry: "io.github.stacklok/time" };
  const fetch = { image: "ghcr.io/org/fetch:1", entry: "io.github.org/fetch" };

  it("is not taken when no registry of the namespace enforces", () => {
    expect(decideImage(server("evil:1"), [listing("a", false, [])])).toEqual({
      kind: "unenforced",
    });
  });

  it("admits an image any registry of the namespace lists, enforcing or not", () => {
    const d = decideImage(server("mcp/time"), [
      listing("a", true, [fetch]),
      listing("b", false, [time]),
    ]);
    expect(d).toEqual({ kind: "listed", registry: "b", source: "s", entry: time.entry, notes: [] });
  });

  it("refuses an image no registry lists, naming the image and the registries", () => {
    const d = decideImage(server("mcp/time:2"), [listing("a", true, [time, fetch])]);
    expect(d.kind).toBe("unlisted");
    if (d.kind !== "unlisted") return;
    expect(d.message).toContain('"mcp/time:2" (docker.io/mcp/time:2)');
    expect(d.message).toContain('consulted: "a"');
    expect(d.unknown).toEqual([]);
  });

  it("says which sources could not be read when it finds nothing", () => {
    const d = decideImage(server("ghcr.io/other:1"), [listing("a", true, undefined)]);
    expect(d).toMatchObject({ kind: "unlisted", unknown: ["a/s (unread)"] });
  });

  it("consults only the registry the registry-name label names", () => {
    const registries = [listing("a", true, []), listing("b", false, [time])];
    expect(decideImage(server("mcp/time", { [REGISTRY_NAME_LABEL]: "a" }), registries).kind).toBe(
      "unlisted",
    );
    expect(decideImage(server("mcp/time", { [REGISTRY_NAME_LABEL]: "b" }), registries).kind).toBe(
      "listed",
    );
    const missing = decideImage(server("mcp/time", { [REGISTRY_NAME_LABEL]: "c" }), registries);
    expect(missing).toMatchObject({ kind: "unlisted" });
    expect(missing.kind === "unlisted" && missing.message).toContain('MCPRegistry "c"');
  });

  it("matches only the entry the server-registry-name label names", () => {
    const registries = [listing("a", true, [time, fetch])];
    const label = (v: string) => ({ [SERVER_REGISTRY_NAME_LABEL]: v });
    expect(decideImage(server("mcp/time", label("time")), registries).kind).toBe("listed");
    expect(decideImage(server("mcp/time", label("fetch")), registries).kind).toBe("unlisted");
  });

  it("refuses what is not an image reference", () => {
    expect(decideImage(server("Not An Image"), [listing("a", true, [time])]).kind).toBe("unlisted");
  });
});

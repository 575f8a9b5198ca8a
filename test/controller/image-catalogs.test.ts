// The controller's reads of registry catalogs for enforceServers, over real loopback HTTP and a
// real Git repository: url and git sources with their filters, reads again only once the
// source's interval has passed, the last listing kept (and said) when a read fails, a source
// never read known as such, and the status a verdict gives.
import { type Server, createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { RegistryCatalogs } from "../../src/controller/image-catalogs.js";
import { withImageVerdict } from "../../src/controller/image-policy.js";
import { makeRepo } from "../support/git-server.js";
import { tmp } from "./helpers.js";

const catalog = (images: Record<string, string>) =>
  JSON.stringify({
    version: "1.0.0",
    last_updated: "2025-01-01T00:00:00Z",
    servers: Object.fromEntries(
      Object.entries(images).map(([name, image]) => [
        name,
        { image, description: name, tags: [name === "beta" ? "experimental" : "stable"] },
      ]),
    ),
  });

let served: string | undefined = catalog({ alpha: "ghcr.io/example/alpha:1" });
let requests = 0;
let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    if (served === undefined) {
      res.writeHead(503).end("down");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(served);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

/** ConfigMap catalogs are read from the cluster; these tests have none and read none. */
const noCluster = {
  get: () => Promise.reject(new Error("these tests read no ConfigMap")),
};

function registry(source: Record<string, unknown>, enforce = true) {
  return {
    enforceServers: enforce,
    configYAML: stringify({
      sources: [{ name: "catalog", format: "toolhive", syncPolicy: { interval: "1m" }, ...source }],
      registries: [{ name: "default", sources: ["catalog"] }],
    }),
  };
}

describe("registry catalogs read by the controller", () => {
  it("reads a url source, again only after its interval, and keeps the last listing when a read fails", async () => {
    let clock = 0;
    const catalogs = new RegistryCatalogs(noCluster, { now: () => clock });
    const spec = registry({ url: { url: `${base}/registry.json` } });
    served = catalog({ alpha: "ghcr.io/example/alpha:1" });
    requests = 0;
    const first = await catalogs.listing("ns", "approved", spec);
    expect(first).toEqual({
      registry: "approved",
      enforce: true,
      sources: [
        {
          source: "catalog",
          images: [{ image: "ghcr.io/example/alpha:1", entry: "io.github.stacklok/alpha" }],
        },
      ],
    });
    clock += 30_000;
    await catalogs.listing("ns", "approved", spec);
    expect(requests).toBe(1);
    expect(catalogs.due()).toBe(false);

    clock += 30_000;
    expect(catalogs.due()).toBe(true);
    served = undefined;
    const down = await catalogs.listing("ns", "approved", spec);
    expect(requests).toBe(2);
    expect(down.sources[0]!.images).toEqual(first.sources[0]!.images);
    expect(down.sources[0]!.note).toMatch(
      /^approved\/catalog cannot be read: .*503.*; its listing read at 1970-01-01T00:00:00Z holds$/,
    );

    clock += 60_000;
    served = catalog({ alpha: "ghcr.io/example/alpha:1", gamma: "ghcr.io/example/gamma:3" });
    const back = await catalogs.listing("ns", "approved", spec);
    expect(back.sources[0]!.note).toBeUndefined();
    expect(back.sources[0]!.images?.map((l) => l.image)).toEqual([
      "ghcr.io/example/alpha:1",
      "ghcr.io/example/gamma:3",
    ]);
  });

  it("knows a source never read as unknown, and a changed source definition as a new source", async () => {
    const catalogs = new RegistryCatalogs(noCluster, { now: () => 0 });
    served = undefined;
    const never = await catalogs.listing("ns", "r", registry({ url: { url: `${base}/a.json` } }));
    expect(never.sources[0]!.images).toBeUndefined();
    expect(never.sources[0]!.why).toMatch(/^r\/catalog cannot be read: /);
    served = catalog({ alpha: "ghcr.io/example/alpha:1" });
    // Same clock: the same definition is not read again, another one is.
    expect(
      (await catalogs.listing("ns", "r", registry({ url: { url: `${base}/a.json` } }))).sources[0]!
        .images,
    ).toBeUndefined();
    expect(
      (await catalogs.listing("ns", "r", registry({ url: { url: `${base}/b.json` } }))).sources[0]!
        .images,
    ).toHaveLength(1);
  });

  it("reads a git source and applies the source's filter", async () => {
    const repo = tmp("catalog-repo");
    makeRepo(repo, {
      "catalog/registry.json": catalog({
        alpha: "ghcr.io/example/alpha:1",
        beta: "ghcr.io/example/beta:2",
      }),
    });
    const catalogs = new RegistryCatalogs(noCluster);
    const spec = registry({
      git: { repository: pathToFileURL(repo).href, branch: "main", path: "catalog/registry.json" },
      filter: { tags: { exclude: ["experimental"] } },
    });
    const listing = await catalogs.listing("ns", "approved", spec);
    expect(listing.sources[0]!.images).toEqual([
      { image: "ghcr.io/example/alpha:1", entry: "io.github.stacklok/alpha" },
    ]);
  });

  it("says why the sources of a configYAML that does not parse are unknown", async () => {
    const catalogs = new RegistryCatalogs(noCluster);
    const listing = await catalogs.listing("ns", "r", { enforceServers: true, configYAML: "[" });
    expect(listing.sources).toEqual([
      { source: "configYAML", images: undefined, why: "configYAML is not YAML" },
    ]);
  });
});

describe("the status a verdict gives", () => {
  const computed = {
    phase: "Pending",
    message: "waiting for ready replicas",
    conditions: [{ type: "Ready", status: "False", reason: "Pending", message: "waiting" }],
  };

  it("is the computed one without a verdict", () => {
    expect(withImageVerdict(computed, undefined)).toBe(computed);
  });

  it("adds ImageValidated=True to an admitted server, and changes nothing else", () => {
    const v = { allowed: true, image: "i", reason: "ImageListed" as const, message: "listed" };
    expect(withImageVerdict(computed, v)).toEqual({
      ...computed,
      conditions: [
        ...computed.conditions,
        { type: "ImageValidated", status: "True", reason: "ImageListed", message: "listed" },
      ],
    });
  });

  it("makes a refused server Failed, not Ready, with ImageValidated=False", () => {
    const v = { allowed: false, image: "i", reason: "ImageNotListed" as const, message: "no" };
    expect(withImageVerdict(computed, v)).toEqual({
      phase: "Failed",
      message: "no",
      conditions: [
        { type: "Ready", status: "False", reason: "ImageNotListed", message: "no" },
        { type: "ImageValidated", status: "False", reason: "ImageNotListed", message: "no" },
      ],
    });
  });
});

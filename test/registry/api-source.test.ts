// api sources read `{endpoint}/v0/servers` as the spec says, fall back to `/v0.1/servers` (and
// back), and their status says which form answered.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { openStore } from "../../src/registry/store/open.js";
import { startServer, untilReady } from "./helpers.js";

interface Upstream {
  url: string;
  server: Server;
  /** Paths asked, in order. */
  asked: string[];
  /** The forms served now (changeable while running). */
  forms: Set<string>;
}

/** A registry API serving one server under the given forms (`/v0`, `/v0.1`), 404 elsewhere. */
function upstream(name: string, forms: string[]): Promise<Upstream> {
  const up = { asked: [] as string[], forms: new Set(forms) };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    up.asked.push(path);
    const form = path.replace(/\/servers$/, "");
    if (!path.endsWith("/servers") || !up.forms.has(form)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        servers: [{ server: { name, version: "1.0.0", description: `served on ${form}` } }],
        metadata: { count: 1 },
      }),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        ...up,
        server,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      }),
    ),
  );
}

describe("api sources", () => {
  let dir: string;
  let server: RegistryServer;
  const ups: Record<string, Upstream> = {};
  const status = async (source: string) =>
    (
      (await (await fetch(`${server.url}/v1/sources/${source}`)).json()) as {
        status: { phase: string; apiPath?: string; message?: string };
      }
    ).status;
  const sync = (source: string) =>
    fetch(`${server.url}/v1/sources/${source}/sync?wait=true`, { method: "POST" });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "api-source-"));
    ups.v0 = await upstream("io.up/v0-only", ["/v0"]);
    ups.v01 = await upstream("io.up/v01-only", ["/v0.1"]);
    ups.both = await upstream("io.up/both", ["/v0", "/v0.1"]);
    ups.none = await upstream("io.up/none", []);
    server = await startServer(
      `
sources:
${Object.entries(ups)
  .map(([k, u]) => `  - name: up-${k.replace(".", "")}\n    api: { endpoint: "${u.url}/" }`)
  .join("\n")}
registries:
  - name: all
    sources: [up-v0, up-v01, up-both, up-none]
auth: { mode: anonymous }
`,
      dir,
      { firstSyncDeadlineMs: 60_000 },
    );
    await untilReady(server.url);
  });
  afterAll(async () => {
    await server.close();
    for (const u of Object.values(ups)) u.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads /v0/servers first, as the spec says, and records the form", async () => {
    expect(ups.v0?.asked[0]).toBe("/v0/servers");
    expect(ups.both?.asked).toEqual(["/v0/servers"]);
    expect(await status("up-v0")).toMatchObject({ phase: "Ready", apiPath: "/v0/servers" });
    expect(await status("up-both")).toMatchObject({ phase: "Ready", apiPath: "/v0/servers" });
  });

  it("falls back to /v0.1/servers on an endpoint that serves only that", async () => {
    expect(ups.v01?.asked).toEqual(["/v0/servers", "/v0.1/servers"]);
    expect(await status("up-v01")).toMatchObject({ phase: "Ready", apiPath: "/v0.1/servers" });
    const page = (await (await fetch(`${server.url}/all/v0.1/servers`)).json()) as {
      servers: { server: { name: string } }[];
    };
    expect(page.servers.map((s) => s.server.name).sort()).toEqual([
      "io.up/both",
      "io.up/v0-only",
      "io.up/v01-only",
    ]);
  });

  it("asks the form that answered first on the next sync, and moves when it goes", async () => {
    const up = ups.v01 as Upstream;
    up.asked.length = 0;
    expect((await sync("up-v01")).status).toBe(200);
    expect(up.asked).toEqual(["/v0.1/servers"]);
    // The upstream moves to the spec's form: the source follows.
    up.forms.clear();
    up.forms.add("/v0");
    up.asked.length = 0;
    expect((await sync("up-v01")).status).toBe(200);
    expect(up.asked).toEqual(["/v0.1/servers", "/v0/servers"]);
    expect(await status("up-v01")).toMatchObject({ phase: "Ready", apiPath: "/v0/servers" });
  });

  it("keeps the form in the store: a restarted server asks it first", async () => {
    const up = await upstream("io.up/restart", ["/v0.1"]);
    const data = join(dir, "data");
    const config = `
sources:
  - name: up
    api: { endpoint: "${up.url}" }
registries:
  - name: all
    sources: [up]
database: { embedded: { dataDir: "${data}" } }
auth: { mode: anonymous }
`;
    try {
      for (const expected of [["/v0/servers", "/v0.1/servers"], ["/v0.1/servers"]]) {
        up.asked.length = 0;
        const s = await startServer(config, dir, { firstSyncDeadlineMs: 60_000 });
        try {
          const r = await fetch(`${s.url}/v1/sources/up/sync?wait=true`, { method: "POST" });
          expect(r.status).toBe(200);
          const view = (await (await fetch(`${s.url}/v1/sources/up`)).json()) as {
            status: { apiPath?: string };
          };
          expect(view.status.apiPath).toBe("/v0.1/servers");
        } finally {
          await s.close();
        }
        // The first sync at start, then the one asked for: each asks the recorded form first.
        expect(up.asked.slice(0, expected.length)).toEqual(expected);
        // Recorded in the store, where a restarted server or another replica reads it.
        const store = await openStore({ embedded: { dataDir: data } }, dir);
        try {
          expect((await store.getStatus("up"))?.apiPath).toBe("/v0.1/servers");
        } finally {
          await store.close();
        }
      }
    } finally {
      up.server.close();
    }
  });

  it("fails naming both URLs when neither form answers", async () => {
    const s = await status("up-none");
    expect(s.phase).toBe("Failed");
    expect(s.message).toContain(`${ups.none?.url}/v0/servers?limit=100: HTTP 404`);
    expect(s.message).toContain(`${ups.none?.url}/v0.1/servers?limit=100: HTTP 404`);
  });
});

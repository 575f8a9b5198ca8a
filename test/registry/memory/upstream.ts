// The upstream of the memory test and bench: a registry file (for a url source) and a paged
// registry API (for an api source) of `count` generated servers, switchable in place.
import { createServer, type Server } from "node:http";

export function server(i: number): Record<string, unknown> {
  const id = String(i).padStart(6, "0");
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
    name: `io.example.memory/server-${id}`,
    title: `Server ${id}`,
    description: `Generated server ${id}: ${"a description long enough to weigh like a real one, ".repeat(8)}`,
    version: "1.0.0",
    repository: { url: `https://github.com/example-memory/server-${id}`, source: "github" },
    packages: [
      {
        registryType: "oci",
        identifier: `ghcr.io/example-memory/server-${id}:1.0.0`,
        transport: { type: "stdio" },
        environmentVariables: [
          { name: "API_KEY", description: "Key of the service", isRequired: true, isSecret: true },
          { name: "API_URL", description: "Address of the service", default: "https://x.example" },
        ],
      },
    ],
    _meta: {
      "io.modelcontextprotocol.registry/publisher-provided": {
        "io.example.memory": { tags: ["memory", `group-${i % 10}`], tier: "Community" },
      },
    },
  };
}

/** The upstream: a registry file (url source) and a paged API (api source) of `count` servers. */
export class Upstream {
  count = 0;
  private items: string[] = [];
  private file = "";
  readonly http: Server;
  constructor(count: number) {
    this.setCount(count);
    this.http = createServer((req, res) => {
      const u = new URL(req.url ?? "/", "http://x");
      if (u.pathname === "/catalog.json") {
        res.writeHead(200, { "content-type": "application/json" }).end(this.file);
        return;
      }
      if (u.pathname !== "/v0.1/servers") {
        res.writeHead(404).end();
        return;
      }
      const limit = Number(u.searchParams.get("limit") ?? 30);
      const start = Number(u.searchParams.get("cursor") ?? 0);
      const end = Math.min(start + limit, this.count);
      const next = end < this.count ? `,"nextCursor":"${end}"` : "";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        `{"servers":[${this.items.slice(start, end).join(",")}],"metadata":{"count":${end - start}${next}}}`,
      );
    });
  }
  setCount(count: number): void {
    this.count = count;
    const servers = Array.from({ length: count }, (_, i) => server(i));
    this.items = servers.map((s) => JSON.stringify({ server: s }));
    this.file = JSON.stringify({ version: "1.0.0", meta: {}, data: { servers } });
  }
  get fileBytes(): number {
    return Buffer.byteLength(this.file);
  }
}

// Starting a registry server in oauth mode for the auth tests, with its log captured.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import type { ValidationTuning } from "../../src/registry/auth/provider.js";
import { parseConfig } from "../../src/registry/config/load.js";
import { RegistryServer } from "../../src/registry/server.js";

export const EXAMPLE_DATA = join(import.meta.dirname, "../../examples/registry/data/registry.json");

export interface Started {
  server: RegistryServer;
  url: string;
  logs: string[];
  dir: string;
}

export async function startRegistry(
  config: Record<string, unknown>,
  tuning: Partial<ValidationTuning> = {},
): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), "mcpfleet-auth-"));
  const path = join(dir, "config.yaml");
  const text = JSON.stringify(config, null, 2);
  writeFileSync(path, text);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString("utf8"));
      cb();
    },
  });
  const parsed = parseConfig(text, path);
  const server = await RegistryServer.start(
    { ...parsed, path, baseDir: dir },
    {
      port: 0,
      log: pino({ level: "debug" }, sink),
      cacheDir: join(dir, "git"),
      generationPollMs: 100,
      authTuning: { jwksCooldownMs: 200, httpTimeoutMs: 500, ...tuning },
    },
  );
  return { server, url: server.url, logs, dir };
}

/** Writes a secret file in dir and returns its path. */
export function secretFile(dir: string, name: string, value: string): string {
  const p = join(dir, name);
  writeFileSync(p, value);
  return p;
}

/** The server.json schema a publish names (required, as the official registry has it). */
export const SERVER_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/** A publish body naming its schema, unless it names one (or is not an object). */
function withSchema(url: string, body: unknown): unknown {
  const plain = typeof body === "object" && body !== null && !Array.isArray(body);
  return url.endsWith("/publish") && plain && !("$schema" in body)
    ? { $schema: SERVER_SCHEMA, ...body }
    : body;
}

export async function call(
  url: string,
  init: { method?: string; token?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown>; text: string }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(withSchema(url, init.body)) } : {}),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body, text };
}

// The official MCP registry server (`registry`, github.com/modelcontextprotocol/registry) that
// `make peer-tools` builds from the Go module pinned in tools/official/go.mod
// (tools/official/build.sh): where it is, whether tests can run it, and one instance started on a
// free loopback port against a fresh database of a test PostgreSQL server, seeded with a file of
// server.json documents. Without the binary the tests that run it skip with one line saying why,
// unless REQUIRE_PEERS=1 (CI), which fails them instead.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { PostgresServer } from "./postgres.js";
import { freePort } from "./ports.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const BIN = join(ROOT, ".tools", "official", "current", "bin", "registry");

/** Why the official registry cannot run here, or undefined when it can. */
export function officialRegistryMissing(): string | undefined {
  if (existsSync(BIN)) return undefined;
  const reason = `the official MCP registry is not built (${BIN} missing; run make peer-tools)`;
  if (process.env.REQUIRE_PEERS === "1") throw new Error(`REQUIRE_PEERS=1: ${reason}`);
  return reason;
}

export interface OfficialRegistry {
  /** `http://127.0.0.1:P`: /v0 and /v0.1. */
  url: string;
  /** A token of its anonymous login (`POST /v0.1/auth/none`): publishes under its namespace. */
  token(): Promise<string>;
  /** What it wrote on stdout and stderr so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

export interface OfficialOptions {
  pg: PostgresServer;
  /** A JSON file holding an array of server.json documents, imported at start. */
  seed?: string;
  /** Database to create for it (default: a fresh name). */
  database?: string;
  /** How long to wait for /v0.1/health (default 120 s: migrations and the seed import first). */
  readyTimeoutMs?: number;
}

/** The namespace the anonymous login may publish under. */
export const ANONYMOUS_NAMESPACE = "io.modelcontextprotocol.anonymous";

let databases = 0;

/** Starts the official registry and waits until /v0.1/health answers 200 (the seed is in then). */
export async function startOfficialRegistry(opts: OfficialOptions): Promise<OfficialRegistry> {
  if (officialRegistryMissing() !== undefined) throw new Error(officialRegistryMissing());
  const { pg } = opts;
  const database = opts.database ?? `official${process.pid}_${++databases}`;
  await pg.createDatabase(database);
  const port = await freePort();
  // Only its own variables: it reads MCP_REGISTRY_* from the environment and nothing else we set.
  // The owner of the database runs its migrations; validation against package registries is off
  // (no network here), and the anonymous login is on so a test can publish.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    MCP_REGISTRY_SERVER_ADDRESS: `127.0.0.1:${port}`,
    MCP_REGISTRY_DATABASE_URL: `postgres://${pg.migrationUser}:${pg.migrationPassword}@${pg.host}:${pg.port}/${database}?sslmode=disable`,
    MCP_REGISTRY_DATABASE_MAX_CONNECTIONS: "20",
    MCP_REGISTRY_DATABASE_MIN_CONNECTIONS: "2",
    MCP_REGISTRY_JWT_PRIVATE_KEY: randomBytes(32).toString("hex"),
    MCP_REGISTRY_ENABLE_ANONYMOUS_AUTH: "true",
    MCP_REGISTRY_ENABLE_REGISTRY_VALIDATION: "false",
    MCP_REGISTRY_VERSION: "test",
    ...(opts.seed !== undefined ? { MCP_REGISTRY_SEED_FROM: opts.seed } : {}),
  };
  const proc: ChildProcess = spawn(BIN, [], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const collect = (d: Buffer): void => {
    out += d.toString();
  };
  proc.stdout?.on("data", collect);
  proc.stderr?.on("data", collect);
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => proc.once("exit", () => r()));
    proc.kill("SIGTERM");
    const killed = setTimeout(() => proc.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(killed);
  };
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 120_000);
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`the official registry exited before it was ready:\n${out}`);
    }
    const status = await fetch(`${url}/v0.1/health`)
      .then((r) => r.status)
      .catch(() => 0);
    if (status === 200) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the official registry was not ready in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  let token: string | undefined;
  return {
    url,
    output: () => out,
    async token() {
      if (token !== undefined) return token;
      const res = await fetch(`${url}/v0.1/auth/none`, { method: "POST" });
      const body = (await res.json()) as { registry_token?: unknown };
      if (res.status !== 200 || typeof body.registry_token !== "string") {
        throw new Error(`the anonymous login failed: ${res.status} ${JSON.stringify(body)}`);
      }
      token = body.registry_token;
      return token;
    },
    stop,
  };
}

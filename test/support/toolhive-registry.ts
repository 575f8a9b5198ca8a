// The ToolHive registry server (`thv-registry-api`) that `make peer-tools` builds from
// ../shared/peers (tools/peers/build.sh): where it is, whether tests can run it, and one
// instance started on free loopback ports against a database of a test PostgreSQL server.
// Without the binary (or ../shared/peers) the tests that run it skip with one line saying why,
// unless REQUIRE_PEERS=1 (CI), which fails them instead.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { PostgresServer } from "./postgres.js";
import { freePort } from "./ports.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
export const PEERS = resolve(ROOT, "..", "shared", "peers");
const BIN = join(ROOT, ".tools", "peers", "current", "bin", "thv-registry-api");

/** The built reference server, or undefined when it is not built. */
export function referenceRegistryPath(): string | undefined {
  return existsSync(BIN) ? BIN : undefined;
}

/** Why the reference server cannot run here, or undefined when it can. */
export function referenceRegistryMissing(): string | undefined {
  let reason: string | undefined;
  if (!existsSync(join(PEERS, "toolhive-registry-server", "go.mod"))) {
    reason = `${PEERS} is absent (public peer sources kept beside the repository)`;
  } else if (referenceRegistryPath() === undefined) {
    reason = `the reference registry server is not built (${BIN} missing; run make peer-tools)`;
  }
  if (reason !== undefined && process.env.REQUIRE_PEERS === "1") {
    throw new Error(`REQUIRE_PEERS=1: ${reason}`);
  }
  return reason;
}

export interface ReferenceRegistry {
  /** The API (v0.1 and /v1), `http://127.0.0.1:P`. */
  url: string;
  /** Health, readiness and version, `http://127.0.0.1:Q`. */
  internalUrl: string;
  /** What it wrote on stdout and stderr so far (for failure messages). */
  output(): string;
  /**
   * Stops it and starts it again on the same database and ports. Its sync coordinator syncs one
   * source per tick, every 2 minutes (not configurable), plus one check at start: a restart is
   * how a test gets the next source synced without waiting for the tick.
   */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface ReferenceOptions {
  pg: PostgresServer;
  /** Database to create for it (default: a fresh name). */
  database?: string;
  /** How long to wait for /readiness (default 60 s: migrations run first). */
  readyTimeoutMs?: number;
}

let databases = 0;

/**
 * Starts the reference server with `configText` (sources, registries, auth: everything but
 * `database`, which is added here) on a fresh database of `opts.pg`, and waits until its
 * /readiness answers 200.
 */
export async function startReferenceRegistry(
  configText: string,
  opts: ReferenceOptions,
): Promise<ReferenceRegistry> {
  const bin = referenceRegistryPath();
  if (bin === undefined) throw new Error(referenceRegistryMissing() ?? "not built");
  const { pg } = opts;
  const dir = mkdtempSync(join(tmpdir(), "thv-registry-"));
  const database = opts.database ?? `thv${process.pid}_${++databases}`;
  await pg.createDatabase(database);
  // Its first migration creates the role its application user acts through, so the migration
  // user needs CREATEROLE (the peer's docs/database.md); our own server needs no such right.
  await pg.adminQuery(`ALTER ROLE "${pg.migrationUser}" CREATEROLE`);
  const pgpass = join(dir, "pgpass");
  writeFileSync(
    pgpass,
    [
      `${pg.host}:${pg.port}:${database}:${pg.appUser}:${pg.appPassword}`,
      `${pg.host}:${pg.port}:${database}:${pg.migrationUser}:${pg.migrationPassword}`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `${configText.trimEnd()}
database:
  host: ${pg.host}
  port: ${pg.port}
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  database: ${database}
  sslMode: disable
`,
  );
  // Only what it needs: THV_REGISTRY_* variables of the caller's environment would override
  // the configuration file.
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, PGPASSFILE: pgpass };
  // The application user acts through the role the migrations grant privileges to; prime-db
  // (the documented setup) creates the role and grants it, connecting as the migration user.
  await new Promise<void>((ok, fail) => {
    const child = execFile(
      bin,
      ["prime-db", "--config", config, pg.appUser],
      { env, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err === null) return ok();
        rmSync(dir, { recursive: true, force: true });
        fail(new Error(`prime-db failed: ${err.message}\n${stdout}${stderr}`));
      },
    );
    child.stdin?.end(`${pg.appPassword}\n`);
  });

  const [port, internalPort] = [await freePort(), await freePort()];
  let proc: ChildProcess | undefined;
  let out = "";
  const halt = async (): Promise<void> => {
    const p = proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once("exit", () => r()));
    p.kill("SIGTERM");
    const killed = setTimeout(() => p.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(killed);
  };
  const reference: ReferenceRegistry = {
    url: `http://127.0.0.1:${port}`,
    internalUrl: `http://127.0.0.1:${internalPort}`,
    output: () => out,
    async restart() {
      await halt();
      await launch();
    },
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const launch = async (): Promise<void> => {
    const p = spawn(
      bin,
      [
        "serve",
        "--config",
        config,
        "--address",
        `127.0.0.1:${port}`,
        "--internal-address",
        `127.0.0.1:${internalPort}`,
      ],
      { env, stdio: ["ignore", "pipe", "pipe"] },
    );
    proc = p;
    const collect = (d: Buffer): void => {
      out += d.toString();
    };
    p.stdout?.on("data", collect);
    p.stderr?.on("data", collect);
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
    for (;;) {
      if (p.exitCode !== null || p.signalCode !== null) {
        throw new Error(`the reference registry server exited before it was ready:\n${out}`);
      }
      const status = await fetch(`${reference.internalUrl}/readiness`)
        .then((r) => r.status)
        .catch(() => 0);
      if (status === 200) return;
      if (Date.now() > deadline) {
        throw new Error(`the reference registry server was not ready in time:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    await launch();
  } catch (e) {
    await reference.stop();
    throw e;
  }
  return reference;
}

// A throwaway PostgreSQL server for tests: initdb into a temp directory, start on a random
// loopback port (as the `postgres` OS user when running as root), stop and delete after.
// Tests needing PostgreSQL skip with a loud notice when the binaries are missing, unless
// REQUIRE_POSTGRES=1 (CI), which turns the skip into a failure.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./ports.js";
import { selfSignedCertificate } from "./tls.js";

export interface PostgresServer {
  host: string;
  port: number;
  /** Creates a database owned by the migration user; both users can connect to it. */
  createDatabase(name: string): Promise<void>;
  migrationUser: string;
  migrationPassword: string;
  appUser: string;
  appPassword: string;
  /**
   * Runs SQL as the superuser (in `database`, default postgres): role attributes a test needs
   * (the reference server's CREATEROLE).
   */
  adminQuery(sql: string, database?: string): Promise<void>;
  stop(): Promise<void>;
}

/** Directory of the newest PostgreSQL binaries, or undefined. */
export function findPostgresBin(): string | undefined {
  const fromEnv = process.env.POSTGRES_BIN;
  if (fromEnv !== undefined && existsSync(join(fromEnv, "initdb"))) return fromEnv;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

/** True when the PostgreSQL tests can run; prints a loud notice (or throws) otherwise. */
export function postgresAvailable(): boolean {
  if (findPostgresBin() !== undefined) return true;
  const msg =
    "PostgreSQL binaries (initdb, postgres) not found: the PostgreSQL store tests are SKIPPED. " +
    "Install PostgreSQL 15+ or set POSTGRES_BIN.";
  if (process.env.REQUIRE_POSTGRES === "1") throw new Error(`REQUIRE_POSTGRES=1: ${msg}`);
  console.warn(`\n!!!!!!!!\n!!! ${msg}\n!!!!!!!!\n`);
  return false;
}

function asPostgresUser(cmd: string, args: string[]): [string, string[]] {
  const root = process.getuid?.() === 0;
  return root ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
}

export interface PostgresOptions {
  /** A network namespace to listen in (a pod's), reached there on loopback. */
  netns?: string;
  /** The port (default a free one). */
  port?: number;
  /** How TCP logins are checked (default scram-sha-256; trust for a config naming no password). */
  hostAuth?: "scram-sha-256" | "trust";
  /** TLS with a self-signed certificate, for `sslMode: require`. */
  ssl?: boolean;
}

export async function startPostgres(opts: PostgresOptions = {}): Promise<PostgresServer> {
  const bin = findPostgresBin();
  if (bin === undefined) throw new Error("PostgreSQL binaries not found");
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "mcpfleet-pg-"));
  const data = join(dir, "data");
  if (root) {
    const ids = execFileSync("id", ["-u", "postgres"]).toString().trim();
    const gid = execFileSync("id", ["-g", "postgres"]).toString().trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  const pwfile = join(dir, "pw");
  writeFileSync(pwfile, "superpass\n", { mode: 0o644 });
  const [c1, a1] = asPostgresUser(join(bin, "initdb"), [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth-local=trust",
    `--auth-host=${opts.hostAuth ?? "scram-sha-256"}`,
    `--pwfile=${pwfile}`,
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
  ]);
  execFileSync(c1, a1, { stdio: "pipe" });
  const port = opts.port ?? (await freePort());
  const tls: string[] = [];
  if (opts.ssl === true) {
    const cert = selfSignedCertificate(dir);
    if (root) {
      const owner = execFileSync("stat", ["-c", "%u:%g", dir]).toString().trim().split(":");
      for (const f of [cert.key, cert.cert]) chownSync(f, Number(owner[0]), Number(owner[1]));
    }
    chmodSync(cert.key, 0o600);
    tls.push("-c", "ssl=on", "-c", `ssl_cert_file=${cert.cert}`, "-c", `ssl_key_file=${cert.key}`);
  }
  const [c0, a0] = asPostgresUser(join(bin, "postgres"), [
    "-D",
    data,
    "-p",
    String(port),
    "-k",
    dir,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "synchronous_commit=off",
    "-c",
    "full_page_writes=off",
    "-c",
    "max_connections=100",
    ...tls,
  ]);
  const [c2, a2] =
    opts.netns === undefined ? [c0, a0] : ["nsenter", [`--net=${opts.netns}`, c0, ...a0]];
  const proc: ChildProcess = spawn(c2, a2, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const admin = (database = "postgres"): pg.Client =>
    new pg.Client({ host: dir, port, user: "postgres", database });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const c = admin();
    try {
      await c.connect();
      await c.end();
      break;
    } catch {
      await c.end().catch(() => undefined);
      if (proc.exitCode !== null || Date.now() > deadline) {
        throw new Error(`PostgreSQL did not start: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const server: PostgresServer = {
    host: "127.0.0.1",
    port,
    migrationUser: "db_migrator",
    migrationPassword: "migrator-secret",
    appUser: "db_app",
    appPassword: "app-secret",
    async createDatabase(name: string) {
      const c = admin();
      await c.connect();
      try {
        await c.query(`CREATE DATABASE "${name}" OWNER db_migrator`);
      } finally {
        await c.end();
      }
    },
    async adminQuery(sql: string, database?: string) {
      const c = admin(database);
      await c.connect();
      try {
        await c.query(sql);
      } finally {
        await c.end();
      }
    },
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once("exit", r));
        // The postmaster itself (its pid file's first line): the runuser and nsenter in front
        // of it do not pass SIGINT on. SIGINT is PostgreSQL's fast shutdown.
        const postmaster = Number(
          readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0],
        );
        if (Number.isInteger(postmaster) && postmaster > 0) process.kill(postmaster, "SIGINT");
        else proc.kill("SIGINT");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const c = admin();
  await c.connect();
  try {
    await c.query(`CREATE ROLE db_migrator LOGIN PASSWORD 'migrator-secret'`);
    await c.query(`CREATE ROLE db_app LOGIN PASSWORD 'app-secret'`);
  } finally {
    await c.end();
  }
  return server;
}

// database.dynamicAuth.awsRdsIam: RDS IAM tokens signed with the standard AWS credential chain,
// one per new connection, over TLS. PostgreSQL cannot check IAM tokens, so the wiring is proven
// with the clock frozen (only Date is faked): the users' passwords are set to exactly the tokens
// the signer makes for that second, and the store logs in with them; once the clock moves, new
// connections present new tokens.
import { execFileSync } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { chmodSync, chownSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pg from "pg";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { isMcpfleetError } from "../../src/errors.js";
import { parseConfig } from "../../src/registry/config/load.js";
import type { DatabaseConfig } from "../../src/registry/config/types.js";
import type { RegistryServer } from "../../src/registry/server.js";
import { openDb } from "../../src/registry/store/open.js";
import { rdsIamPassword, resolveRdsIamRegion } from "../../src/registry/store/rds-iam.js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../support/postgres.js";
import { selfSignedCertificate } from "../support/tls.js";
import { startServer } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "mcpfleet-rds-iam-"));

/** Every variable the AWS credential and region chains read. */
const AWS_VARS = [
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_CREDENTIAL_EXPIRATION",
  "AWS_REGION",
  "AWS_DEFAULT_REGION",
  "AWS_PROFILE",
  "AWS_CONFIG_FILE",
  "AWS_SHARED_CREDENTIALS_FILE",
  "AWS_WEB_IDENTITY_TOKEN_FILE",
  "AWS_ROLE_ARN",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI",
  "AWS_EC2_METADATA_DISABLED",
];
const savedEnv = new Map(AWS_VARS.map((k) => [k, process.env[k]]));

/** An AWS environment with only `vars`: no shared files of the machine, no instance metadata. */
function awsEnv(vars: Record<string, string>): void {
  for (const k of AWS_VARS) delete process.env[k];
  Object.assign(process.env, {
    AWS_CONFIG_FILE: join(dir, "no-config"),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, "no-credentials"),
    AWS_EC2_METADATA_DISABLED: "true",
    ...vars,
  });
}

const KEY_ID = "AKIDEXAMPLE";
const SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const SESSION = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ+abc/def==";
const STATIC_CREDS = {
  AWS_ACCESS_KEY_ID: KEY_ID,
  AWS_SECRET_ACCESS_KEY: SECRET,
  AWS_SESSION_TOKEN: SESSION,
};

function freeze(at: Date): void {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(at);
}

afterEach(() => {
  vi.useRealTimers();
  for (const [k, v] of savedEnv) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** RFC 3986 encoding, as SigV4 canonical query strings use it. */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");
const hmac = (key: string | Buffer, s: string): Buffer =>
  createHmac("sha256", key).update(s).digest();

/** The signature a presigned GET of `token` must carry (AWS Signature Version 4). */
function expectedSignature(token: string, secret: string): string {
  const url = new URL(`https://${token}`);
  const q = [...url.searchParams].filter(([k]) => k !== "X-Amz-Signature");
  const canonicalQuery = q
    .map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`)
    .sort()
    .join("&");
  const canonicalRequest = [
    "GET",
    "/",
    canonicalQuery,
    `host:${url.host}`,
    "",
    "host",
    sha256(""),
  ].join("\n");
  const date = url.searchParams.get("X-Amz-Date") ?? "";
  const scope = (url.searchParams.get("X-Amz-Credential") ?? "").split("/").slice(1).join("/");
  const [day, region, service] = scope.split("/") as [string, string, string];
  const stringToSign = ["AWS4-HMAC-SHA256", date, scope, sha256(canonicalRequest)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), "aws4_request");
  return createHmac("sha256", key).update(stringToSign).digest("hex");
}

async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error("expected a rejection");
}

describe("RDS IAM auth tokens", () => {
  it("are presigned connect requests for host:port, the user and the region, valid 900 s", async () => {
    awsEnv(STATIC_CREDS);
    freeze(new Date("2026-01-02T03:04:05.678Z"));
    const token = await rdsIamPassword({
      host: "registry.abc123.eu-central-1.rds.amazonaws.com",
      port: 5433,
      user: "db_app",
      region: "eu-central-1",
    })();
    expect(token).toMatch(/^registry\.abc123\.eu-central-1\.rds\.amazonaws\.com:5433\/\?/);
    const url = new URL(`https://${token}`);
    expect(url.pathname).toBe("/");
    const p = Object.fromEntries(url.searchParams);
    expect(p).toEqual({
      Action: "connect",
      DBUser: "db_app",
      "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
      "X-Amz-Credential": `${KEY_ID}/20260102/eu-central-1/rds-db/aws4_request`,
      "X-Amz-Date": "20260102T030405Z",
      "X-Amz-Expires": "900",
      "X-Amz-Security-Token": SESSION,
      "X-Amz-SignedHeaders": "host",
      "X-Amz-Signature": expect.stringMatching(/^[0-9a-f]{64}$/) as string,
    });
    // The session token's + / = are escaped, so it survives as a password in a URL.
    expect(token).not.toContain(SESSION);
    expect(p["X-Amz-Signature"]).toBe(expectedSignature(token, SECRET));
  });

  it("are signed anew on each call: another second gives another token", async () => {
    awsEnv(STATIC_CREDS);
    const password = rdsIamPassword({ host: "db", port: 5432, user: "u", region: "us-east-1" });
    freeze(new Date("2026-01-02T03:04:05Z"));
    const a = await password();
    expect(await password()).toBe(a);
    vi.setSystemTime(new Date("2026-01-02T03:04:06Z"));
    const b = await password();
    expect(b).not.toBe(a);
    expect(new URL(`https://${b}`).searchParams.get("X-Amz-Date")).toBe("20260102T030406Z");
    expect(new URL(`https://${b}`).searchParams.get("X-Amz-Signature")).toBe(
      expectedSignature(b, SECRET),
    );
  });

  it("without credentials fail with an error naming the user and host", async () => {
    awsEnv({});
    const err = await rejection(
      rdsIamPassword({ host: "db.internal", port: 6432, user: "db_app", region: "eu-west-1" })(),
    );
    expect(isMcpfleetError(err)).toBe(true);
    expect(err.code).toBe("ERR_STORE_UNAVAILABLE");
    expect(err.message).toMatch(
      /^cannot create an RDS IAM auth token for user "db_app" at db\.internal:6432 \(region eu-west-1\): .*credentials/,
    );
  });
});

describe("RDS IAM region", () => {
  it("is the configured one unless it is detect", async () => {
    awsEnv({ AWS_REGION: "eu-west-1" });
    expect(await resolveRdsIamRegion("ap-south-2")).toBe("ap-south-2");
  });

  it("detect reads AWS_REGION, then AWS_DEFAULT_REGION", async () => {
    awsEnv({});
    expect(
      await resolveRdsIamRegion("detect", { AWS_REGION: "eu-north-1", AWS_DEFAULT_REGION: "x" }),
    ).toBe("eu-north-1");
    expect(await resolveRdsIamRegion("detect", { AWS_DEFAULT_REGION: "sa-east-1" })).toBe(
      "sa-east-1",
    );
  });

  it("detect falls back to the profile's region in the shared config file", async () => {
    const config = join(dir, "aws-config-region");
    writeFileSync(config, "[default]\nregion = us-west-1\n[profile team]\nregion = ca-central-1\n");
    awsEnv({ AWS_CONFIG_FILE: config, AWS_PROFILE: "team" });
    expect(await resolveRdsIamRegion("detect", {})).toBe("ca-central-1");
  });

  it("detect without any region is a start-up error naming the key", async () => {
    awsEnv({});
    const err = await rejection(resolveRdsIamRegion("detect", {}));
    expect(err.code).toBe("ERR_REGISTRY_CONFIG");
    expect(err.message).toContain(
      'database.dynamicAuth.awsRdsIam.region is "detect" but no AWS region was found',
    );
  });
});

describe("dynamicAuth configuration", () => {
  const base: DatabaseConfig = {
    host: "db.internal",
    dynamicAuth: { awsRdsIam: { region: "eu-west-1" } },
  };

  it("is valid in the config file with region detect and any sslMode but disable", () => {
    const r = parseConfig(
      [
        "sources: [{name: m, managed: {}}]",
        "registries: [{name: r, sources: [m]}]",
        "auth: {mode: anonymous}",
        "database: {host: db, sslMode: verify-full, dynamicAuth: {awsRdsIam: {region: detect}}}",
      ].join("\n"),
      "c.yaml",
    );
    expect(r.config.database?.dynamicAuth).toEqual({ awsRdsIam: { region: "detect" } });
    expect(r.warnings).toEqual([]);
  });

  it("refuses sslMode disable at start, naming both keys", async () => {
    awsEnv(STATIC_CREDS);
    const err = await rejection(openDb({ ...base, sslMode: "disable" }, dir));
    expect(err.code).toBe("ERR_REGISTRY_CONFIG");
    expect(err.message).toMatch(/^database\.sslMode is disable, but database\.dynamicAuth/);
    expect(err.message).toContain("only over TLS");
  });

  it("refuses stored passwords next to it, and a dynamicAuth without a method", async () => {
    awsEnv(STATIC_CREDS);
    const clear = await rejection(openDb({ ...base, password: "x" }, dir));
    expect(clear.message).toBe(
      "database.password cannot be combined with database.dynamicAuth.awsRdsIam: the users log in with RDS IAM tokens",
    );
    const empty = await rejection(openDb({ host: "db", dynamicAuth: {} }, dir));
    expect(empty.code).toBe("ERR_REGISTRY_CONFIG");
    expect(empty.message).toMatch(/^database\.dynamicAuth names no method/);
  });

  it("with detect and no region anywhere, start fails naming the key", async () => {
    awsEnv(STATIC_CREDS);
    const err = await rejection(
      openDb({ ...base, dynamicAuth: { awsRdsIam: { region: "detect" } } }, dir, {}),
    );
    expect(err.code).toBe("ERR_REGISTRY_CONFIG");
    expect(err.message).toContain("database.dynamicAuth.awsRdsIam.region");
  });
});

describe.runIf(postgresAvailable())("RDS IAM auth against a real PostgreSQL", () => {
  const REGION = "eu-west-1";
  let server: PostgresServer;
  const running: RegistryServer[] = [];

  /** The test server's superuser (initdb's password file holds its password). */
  async function superuser<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client({
      host: server.host,
      port: server.port,
      user: "postgres",
      password: "superpass",
      database: "postgres",
    });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  }

  /** Sets each user's password to the token the signer makes now (the frozen second). */
  async function passwordsAreTokens(users: string[]): Promise<void> {
    for (const user of users) {
      const token = await rdsIamPassword({
        host: server.host,
        port: server.port,
        user,
        region: REGION,
      })();
      await superuser((c) => c.query(`ALTER ROLE "${user}" PASSWORD ${c.escapeLiteral(token)}`));
    }
  }

  function config(extra = ""): string {
    return `
sources: [{name: team, managed: {}}]
registries: [{name: default, sources: [team]}]
auth: {mode: anonymous}
database:
  host: ${server.host}
  port: ${server.port}
  database: registry
  user: ${server.appUser}
  migrationUser: ${server.migrationUser}
  dynamicAuth: {awsRdsIam: {region: detect}}${extra}
`;
  }

  beforeAll(async () => {
    server = await startPostgres();
    await server.createDatabase("registry");
    // RDS takes IAM logins only over TLS: give the test server a self-signed certificate.
    const tls = mkdtempSync(join(tmpdir(), "mcpfleet-pg-tls-"));
    chmodSync(tls, 0o755);
    const { key, cert } = selfSignedCertificate(tls);
    chmodSync(key, 0o600);
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
      const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
      chownSync(key, uid, gid);
      chownSync(cert, uid, gid);
    }
    await superuser(async (c) => {
      await c.query(`ALTER SYSTEM SET ssl_cert_file = ${c.escapeLiteral(cert)}`);
      await c.query(`ALTER SYSTEM SET ssl_key_file = ${c.escapeLiteral(key)}`);
      await c.query(`ALTER SYSTEM SET ssl = on`);
      await c.query(`SELECT pg_reload_conf()`);
    });
    for (let i = 0; ; i++) {
      const probe = new pg.Client({
        host: server.host,
        port: server.port,
        user: "postgres",
        password: "superpass",
        database: "postgres",
        ssl: { rejectUnauthorized: false },
      });
      try {
        await probe.connect();
        await probe.end();
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });

  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(running.splice(0).map((s) => s.close()));
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("refuses to start when PostgreSQL rejects the token, saying which user and host", async () => {
    // The users still have their ordinary passwords, so the server refuses the tokens.
    awsEnv({ ...STATIC_CREDS, AWS_REGION: REGION });
    const err = await rejection(startServer(config(), dir));
    expect(err.code).toBe("ERR_STORE_UNAVAILABLE");
    expect(err.message).toContain(
      `cannot open the postgres store: PostgreSQL at ${server.host}:${server.port} refused the ` +
        `RDS IAM token of user "${server.migrationUser}": password authentication failed`,
    );
    expect(err.message).toContain("rds_iam");
  });

  it("refuses to start without credentials, saying which user and host", async () => {
    awsEnv({ AWS_REGION: REGION });
    const err = await rejection(startServer(config(), dir));
    expect(err.code).toBe("ERR_STORE_UNAVAILABLE");
    expect(err.message).toMatch(
      new RegExp(
        `^cannot open the postgres store: cannot create an RDS IAM auth token for user ` +
          `"${server.migrationUser}" at ${server.host.replace(/\./g, "\\.")}:${server.port} ` +
          `\\(region ${REGION}\\): .*credentials`,
      ),
    );
  });

  it("leaves no connection waiting at the server when a token cannot be made", async () => {
    awsEnv({ AWS_REGION: REGION }); // no credentials anywhere
    // A TCP relay in front of PostgreSQL shows which connections the store leaves open.
    const open = new Set<Socket>();
    const relay = createServer((client) => {
      open.add(client);
      const upstream = connect(server.port, server.host);
      client.pipe(upstream).pipe(client);
      const drop = (): void => {
        open.delete(client);
        client.destroy();
        upstream.destroy();
      };
      for (const s of [client, upstream]) s.on("close", drop).on("error", drop);
    });
    await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
    const port = (relay.address() as AddressInfo).port;
    const db = await openDb(iamDatabase(server, "127.0.0.1", port), dir);
    try {
      for (let i = 0; i < 3; i++) {
        const err = await rejection(db.query(`SELECT 1`));
        expect(err.message).toContain(`for user "${server.appUser}" at 127.0.0.1:${port}`);
      }
      const err = await rejection(db.migrate());
      expect(err.message).toContain(`for user "${server.migrationUser}" at 127.0.0.1:${port}`);
      // Each attempt reached the point where PostgreSQL asks for the password; without a token
      // the store closes the connection instead of leaving the server waiting for one.
      for (let i = 0; i < 100 && open.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(open.size).toBe(0);
    } finally {
      await db.close();
      for (const s of open) s.destroy();
      await new Promise((r) => relay.close(r));
    }
  });

  it("logs in over TLS with the tokens as passwords: migrations, writes and readiness", async () => {
    awsEnv({ ...STATIC_CREDS, AWS_DEFAULT_REGION: REGION });
    freeze(new Date("2027-03-04T05:06:07Z"));
    await passwordsAreTokens([server.appUser, server.migrationUser]);
    const s = await startServer(config(), dir);
    running.push(s);
    expect((await fetch(`${s.url}/readiness`)).status).toBe(200);
    const published = await fetch(`${s.url}/default/v0.1/publish`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        name: "io.team/iam",
        version: "1.0.0",
        url: "https://x.example/",
        description: "IAM",
      }),
    });
    expect(published.status).toBe(200);
    // sslMode was left at its default (prefer), and still every app connection is TLS.
    const conns = await superuser((c) =>
      c.query<{ ssl: boolean }>(
        `SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.usename = $1`,
        [server.appUser],
      ),
    );
    expect(conns.rows.length).toBeGreaterThan(0);
    expect(conns.rows.every((r) => r.ssl)).toBe(true);
  });

  it("signs a new token for each new connection of the pool", async () => {
    awsEnv({ ...STATIC_CREDS, AWS_REGION: REGION });
    const t0 = Date.parse("2027-03-04T06:00:00Z");
    freeze(new Date(t0));
    await passwordsAreTokens([server.appUser, server.migrationUser]);
    const db = await openDb(iamDatabase(server, server.host, server.port), dir);
    // Transactions that keep their connection until the end of the test.
    let open = (): void => undefined;
    const gate = new Promise<void>((r) => (open = r));
    const holding: Promise<void>[] = [];
    const hold = async (): Promise<void> => {
      let started = (): void => undefined;
      const ready = new Promise<void>((r) => (started = r));
      holding.push(
        db.transaction(async (tx) => {
          await tx.query(`SELECT 1`);
          started();
          await gate;
        }),
      );
      await ready;
    };
    try {
      await db.migrate();
      await db.query(`SELECT 1`); // the pool's first connection, with the token of t0
      // One second later the password is the token of t0 + 1 s: a second connection (the first
      // is held by a transaction) logs in only if it signed a new token.
      vi.setSystemTime(new Date(t0 + 1000));
      await passwordsAreTokens([server.appUser]);
      await hold();
      const who = await db.query<{ u: string }>(`SELECT current_user AS u`);
      expect(who.rows).toEqual([{ u: server.appUser }]);
      // Another second later, without a new password: a new connection's token is refused.
      vi.setSystemTime(new Date(t0 + 2000));
      await hold();
      const err = await rejection(db.query(`SELECT 1`));
      expect(err.code).toBe("ERR_STORE_UNAVAILABLE");
      expect(err.message).toContain(
        `PostgreSQL at ${server.host}:${server.port} refused the RDS IAM token of user "${server.appUser}"`,
      );
    } finally {
      open();
      await Promise.allSettled(holding);
      await db.close();
    }
  });

  it("reports the store unreachable while its credentials expire unrenewed, and recovers", async () => {
    const t0 = Date.parse("2027-03-04T07:00:00Z");
    freeze(new Date(t0));
    // Credentials from a credential_process, which fails while its file is gone. The SDK keeps
    // using credentials that have not expired yet when a renewal fails; once they expire, no
    // token can be made.
    const creds = join(dir, "process-creds.json");
    const writeCreds = (): void =>
      writeFileSync(
        creds,
        JSON.stringify({
          Version: 1,
          AccessKeyId: "AKIDPROCESS",
          SecretAccessKey: "process-secret",
          SessionToken: "process-session",
          Expiration: new Date(Date.now() + 120_000).toISOString(),
        }),
      );
    writeCreds();
    const awsConfig = join(dir, "aws-config-process");
    writeFileSync(awsConfig, `[default]\ncredential_process = cat ${creds}\n`);
    awsEnv({ AWS_CONFIG_FILE: awsConfig, AWS_REGION: REGION });
    await passwordsAreTokens([server.appUser, server.migrationUser]);
    // Connections live one second, so the pool soon needs new ones.
    // The reason is for the operator: in the log, not in the public probe's answer.
    const logs: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logs.push(chunk.toString("utf8"));
        cb();
      },
    });
    const s = await startServer(config("\n  connMaxLifetime: 1s"), dir, {
      log: pino({ level: "warn" }, sink),
    });
    running.push(s);
    expect((await fetch(`${s.url}/readiness`)).status).toBe(200);
    unlinkSync(creds);
    vi.setSystemTime(new Date(t0 + 180_000));
    let status = 0;
    let body: { status?: string } = {};
    for (let i = 0; i < 50 && status !== 503; i++) {
      await new Promise((r) => setTimeout(r, 200));
      const r = await fetch(`${s.url}/readiness`);
      status = r.status;
      body = (await r.json()) as typeof body;
    }
    expect(status).toBe(503);
    expect(body).toEqual({ status: "not ready" });
    expect(logs.join("")).toContain('"reason":"store unreachable"');
    expect(logs.join("")).toMatch(
      new RegExp(
        `cannot create an RDS IAM auth token for user \\\\"${server.appUser}\\\\" ` +
          `at ${server.host.replace(/\./g, "\\.")}:${server.port} \\(region ${REGION}\\): ` +
          `.*credentials`,
      ),
    );
    // Renewable again: new connections log in with tokens signed with the new credentials.
    writeCreds();
    await passwordsAreTokens([server.appUser]);
    expect((await fetch(`${s.url}/readiness`)).status).toBe(200);
  });
});

/** The database section of a store that logs in to the test server with IAM tokens. */
function iamDatabase(server: PostgresServer, host: string, port: number): DatabaseConfig {
  return {
    host,
    port,
    database: "registry",
    user: server.appUser,
    migrationUser: server.migrationUser,
    sslMode: "require",
    dynamicAuth: { awsRdsIam: { region: "detect" } },
  };
}

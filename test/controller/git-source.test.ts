import { execFileSync } from "node:child_process";
import {
  createServer as createHttpServer,
  request as httpRequest,
  type Server as HttpServer,
} from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { readFileSync, readdirSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Checkout, GitSource, type GitSourceOptions } from "../../src/infra/git/source.js";
import { isMcpfleetError } from "../../src/errors.js";
import {
  commitFiles,
  gitCmd,
  makeRepo,
  publishRepo,
  pushRepo,
  startGitServer,
  type GitServer,
} from "../support/git-server.js";
import { tmp } from "./helpers.js";

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (isMcpfleetError(err)) return err.code;
    throw err;
  }
  return "no error";
}

/** A checkout's files by name, below `under` (the watched path) when given. */
function filesOf(co: Checkout, under = ""): Record<string, string> {
  const prefix = under === "" ? "" : `${under}/`;
  return Object.fromEntries(co.files.map((f) => [f.name.slice(prefix.length), f.text]));
}

describe("GitSource over HTTP (git http-backend)", () => {
  let server: GitServer;
  let work: string;
  let first: string;
  const name = "fleet.git";

  beforeAll(async () => {
    server = await startGitServer();
    work = tmp("work");
    first = makeRepo(work, {
      "clusters/prod/a.yaml": "a: 1\n",
      "clusters/prod/sub/b.yaml": "b: 1\n",
      "README.md": "outside the path\n",
    });
    publishRepo(server, work, name);
  });
  afterAll(async () => {
    await server.stop();
  });

  const source = (extra: Partial<GitSourceOptions> = {}) =>
    new GitSource({
      url: `${server.url}/${name}`,
      ref: { branch: "main" },
      path: "clusters/prod",
      cacheDir: tmp("cache"),
      ...extra,
    });

  it("resolves the branch tip and checks out only --path", async () => {
    const src = source();
    const rev = await src.resolve();
    expect(rev.commit).toBe(first);
    const co = await src.checkout(rev);
    expect(filesOf(co)).toEqual({
      "clusters/prod/a.yaml": "a: 1\n",
      "clusters/prod/sub/b.yaml": "b: 1\n",
    });
  });

  it("fetches nothing when the tip has not moved, and follows new, changed and removed files", async () => {
    const src = source();
    await src.resolve();
    const before = src.fetches;
    const again = await src.resolve();
    // Only the ref advertisement: no pack fetch for an unchanged tip.
    expect(src.fetches - before).toBe(1);
    expect(again.commit).toBe(first);

    gitCmd(work, "rm", "-q", "clusters/prod/sub/b.yaml");
    const second = commitFiles(
      work,
      { "clusters/prod/a.yaml": "a: 2\n", "clusters/prod/c.yaml": "c: 1\n" },
      "change a, add c, remove b",
    );
    pushRepo(server, work, name);
    const rev = await src.resolve();
    expect(rev.commit).toBe(second);
    const co = await src.checkout(rev);
    expect(filesOf(co, "clusters/prod")).toEqual({ "a.yaml": "a: 2\n", "c.yaml": "c: 1\n" });
  });

  it("keeps the cache bounded: past maxPacks it starts afresh with one shallow fetch", async () => {
    const cacheDir = tmp("cache");
    const src = source({ cacheDir, maxPacks: 2 });
    const packs = () => {
      const repos = readdirSync(join(cacheDir, "repos"));
      return readdirSync(join(cacheDir, "repos", repos[0] ?? "", "objects", "pack")).filter((n) =>
        n.endsWith(".pack"),
      ).length;
    };
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const sha = commitFiles(work, { "clusters/prod/n.yaml": `n: ${i}\n` }, `n ${i}`);
      pushRepo(server, work, name);
      const rev = await src.resolve();
      expect(rev.commit).toBe(sha);
      const co = await src.checkout(rev);
      expect(filesOf(co, "clusters/prod")["n.yaml"]).toBe(`n: ${i}\n`);
      seen.push(packs());
    }
    expect(Math.max(...seen)).toBeLessThanOrEqual(3);
    expect(seen).toContain(1);
  });

  it("converges to a force-pushed branch that moved backwards", async () => {
    const src = source();
    const tip = commitFiles(work, { "clusters/prod/d.yaml": "d: 1\n" }, "add d");
    pushRepo(server, work, name);
    expect((await src.resolve()).commit).toBe(tip);
    gitCmd(work, "reset", "-q", "--hard", first);
    const sideways = commitFiles(work, { "clusters/prod/e.yaml": "e: 1\n" }, "rewrite");
    gitCmd(work, "push", "-q", "--force", join(server.root, name), "main");
    const rev = await src.resolve();
    expect(rev.commit).toBe(sideways);
    const co = await src.checkout(rev);
    expect(Object.keys(filesOf(co, "clusters/prod"))).toEqual(["a.yaml", "e.yaml", "sub/b.yaml"]);
  });

  it("pins a tag (annotated, peeled to its commit) and a commit", async () => {
    const tagged = gitCmd(work, "rev-parse", "HEAD");
    gitCmd(work, "tag", "-a", "v1", "-m", "release 1");
    pushRepo(server, work, name);
    const byTag = source({ ref: { tag: "v1" } });
    expect((await byTag.resolve()).commit).toBe(tagged);

    const byCommit = source({ ref: { commit: first } });
    const rev = await byCommit.resolve();
    expect(rev.commit).toBe(first);
    const fetches = byCommit.fetches;
    await byCommit.resolve();
    expect(byCommit.fetches).toBe(fetches);
    const co = await byCommit.checkout(rev);
    expect(Object.keys(filesOf(co, "clusters/prod"))).toEqual(["a.yaml", "sub/b.yaml"]);

    const short = source({ ref: { commit: first.slice(0, 10) } });
    expect((await short.resolve()).commit).toBe(first);
  });

  it("follows the remote's HEAD when no branch, tag or commit is given", async () => {
    const src = source({ ref: {} });
    const rev = await src.resolve();
    expect(rev.commit).toBe(gitCmd(work, "rev-parse", "HEAD"));
    expect(rev.ref).toBe("HEAD");
  });

  it("reports a missing branch, tag, commit or path with ERR_GIT_REF_NOT_FOUND", async () => {
    expect(await code(source({ ref: { branch: "nope" } }).resolve())).toBe("ERR_GIT_REF_NOT_FOUND");
    expect(await code(source({ ref: { tag: "v404" } }).resolve())).toBe("ERR_GIT_REF_NOT_FOUND");
    expect(await code(source({ ref: { commit: "0".repeat(40) } }).resolve())).toBe(
      "ERR_GIT_REF_NOT_FOUND",
    );
    expect(await code(source({ url: `${server.url}/missing.git` }).resolve())).toBe(
      "ERR_GIT_REF_NOT_FOUND",
    );
    const noPath = source({ path: "does/not/exist" });
    expect(await code(noPath.checkout(await noPath.resolve()))).toBe("ERR_INVALID_RESOURCES");
  });

  it("refuses URLs it cannot fetch and paths that leave the repository", () => {
    expect(() => source({ url: "ftp://example.com/x.git" })).toThrow(
      /http:\/\/, https:\/\/, ssh:\/\/ \(or user@host:path\) or file/,
    );
    expect(() => source({ url: "git@example.com:fleet.git" })).toThrow(/--known-hosts-file/);
    expect(() => source({ path: "../etc" })).toThrow(/inside the repository/);
    expect(() => source({ ref: { commit: "main" } })).toThrow(/hex SHA/);
  });
});

describe("GitSource authentication and outages", () => {
  let server: GitServer;
  let work: string;
  let head: string;
  const dir = tmp("secrets");
  const good = join(dir, "good");
  const bad = join(dir, "bad");

  beforeAll(async () => {
    server = await startGitServer({ username: "fleet", password: "s3cret" });
    work = tmp("auth-work");
    head = makeRepo(work, { "a.yaml": "a: 1\n" });
    publishRepo(server, work, "private.git");
    writeFileSync(good, "s3cret\n");
    writeFileSync(bad, "wrong\n");
  });
  afterAll(async () => {
    await server.stop();
  });

  const source = (auth?: GitSourceOptions["auth"], url = `${server.url}/private.git`) =>
    new GitSource({
      url,
      ref: { branch: "main" },
      cacheDir: tmp("cache"),
      ...(auth ? { auth } : {}),
    });

  it("authenticates with a password file or a token file", async () => {
    expect((await source({ username: "fleet", passwordFile: good }).resolve()).commit).toBe(head);
    expect((await source({ username: "fleet", tokenFile: good }).resolve()).commit).toBe(head);
  });

  it("says ERR_GIT_AUTH when credentials are missing or refused", async () => {
    expect(await code(source().resolve())).toBe("ERR_GIT_AUTH");
    const err = await source({ username: "fleet", passwordFile: bad })
      .resolve()
      .catch((e: unknown) => e);
    expect(isMcpfleetError(err) && err.code).toBe("ERR_GIT_AUTH");
    expect((err as Error).message).toMatch(/--password-file/);
    expect((err as Error).message).not.toContain("wrong");
  });

  it("says ERR_GIT_UNREACHABLE while the server is down, and recovers when it is back", async () => {
    const other = await startGitServer();
    const w = tmp("down-work");
    const sha = makeRepo(w, { "a.yaml": "a: 1\n" });
    publishRepo(other, w, "r.git");
    const src = new GitSource({
      url: `${other.url}/r.git`,
      ref: { branch: "main" },
      cacheDir: tmp("c"),
    });
    expect((await src.resolve()).commit).toBe(sha);
    const port = new URL(other.url).port;
    await other.stop();
    expect(await code(src.resolve())).toBe("ERR_GIT_UNREACHABLE");
    // Back on the same port with a new commit.
    const back = await startGitServerOnPort(Number(port), w);
    try {
      const next = commitFiles(w, { "b.yaml": "b: 1\n" }, "while down");
      pushRepo(back, w, "r.git");
      expect((await src.resolve()).commit).toBe(next);
    } finally {
      await back.stop();
    }
  });
});

/** Restarts a git server on a fixed port by proxying to a fresh one (the helper picks ports). */
async function startGitServerOnPort(port: number, work: string): Promise<GitServer> {
  const { createServer, request } = await import("node:http");
  const inner = await startGitServer();
  publishRepo(inner, work, "r.git");
  const target = new URL(inner.url);
  const proxy = createServer((req, res) => {
    const up = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    req.pipe(up);
  });
  await new Promise<void>((resolve) => proxy.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    root: inner.root,
    get requests() {
      return inner.requests;
    },
    async stop() {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
      await inner.stop();
    },
  };
}

describe("GitSource over file://", () => {
  it("reads a local repository in place: branch, tag, commit, and new commits", async () => {
    const work = tmp("local");
    const first = makeRepo(work, { "deploy/a.yaml": "a: 1\n" });
    gitCmd(work, "tag", "v1");
    const url = pathToFileURL(work).href;
    const cacheDir = tmp("cache");
    const src = new GitSource({ url, ref: { branch: "main" }, path: "deploy", cacheDir });
    expect((await src.resolve()).commit).toBe(first);
    const second = commitFiles(work, { "deploy/b.yaml": "b: 1\n" }, "add b");
    const rev = await src.resolve();
    expect(rev.commit).toBe(second);
    const co = await src.checkout(rev);
    expect(Object.keys(filesOf(co, "deploy"))).toEqual(["a.yaml", "b.yaml"]);
    expect(src.fetches).toBe(0);

    expect((await new GitSource({ url, ref: { tag: "v1" }, cacheDir }).resolve()).commit).toBe(
      first,
    );
    expect((await new GitSource({ url, ref: {}, cacheDir }).resolve()).commit).toBe(second);
    const pinned = new GitSource({ url, ref: { commit: first }, path: "deploy", cacheDir });
    const old = await pinned.checkout(await pinned.resolve());
    expect(Object.keys(filesOf(old, "deploy"))).toEqual(["a.yaml"]);
    expect(await code(new GitSource({ url, ref: { branch: "x" }, cacheDir }).resolve())).toBe(
      "ERR_GIT_REF_NOT_FOUND",
    );
    const gone = pathToFileURL(join(work, "nothing-here")).href;
    expect(await code(new GitSource({ url: gone, ref: {}, cacheDir }).resolve())).toBe(
      "ERR_GIT_UNREACHABLE",
    );
  });

  it("writes nothing to the cache directory for a local repository", async () => {
    const work = tmp("in-place");
    makeRepo(work, { "a.yaml": "a: 1\n" });
    const cacheDir = tmp("cache");
    const src = new GitSource({ url: pathToFileURL(work).href, ref: { branch: "main" }, cacheDir });
    for (let i = 0; i < 3; i++) {
      commitFiles(work, { "a.yaml": `a: ${i + 2}\n` }, `c${i}`);
      expect(filesOf(await src.checkout(await src.resolve()))).toEqual({
        "a.yaml": `a: ${i + 2}\n`,
      });
    }
    expect(existsSync(cacheDir) ? readdirSync(cacheDir) : []).toEqual([]);
  });
});

describe("GitSource over HTTPS with a private CA", () => {
  let server: GitServer;
  let proxy: HttpsServer;
  let url: string;
  let head: string;
  const pki = tmp("pki");
  const ca = join(pki, "ca.pem");

  beforeAll(async () => {
    const ssl = (...args: string[]) => gitless("openssl", args, pki);
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    ssl(
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "1",
      "-subj",
      "/CN=test-ca",
    );
    ssl("req", ...ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=127.0.0.1");
    writeFileSync(join(pki, "ext"), "subjectAltName=IP:127.0.0.1\n");
    ssl(
      "x509",
      "-req",
      "-in",
      "srv.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "srv.pem",
      "-days",
      "1",
      "-extfile",
      "ext",
    );
    server = await startGitServer();
    const work = tmp("tls-work");
    head = makeRepo(work, { "a.yaml": "a: 1\n" });
    publishRepo(server, work, "tls.git");
    const target = new URL(server.url);
    proxy = createHttpsServer(
      { key: readFileSync(join(pki, "srv.key")), cert: readFileSync(join(pki, "srv.pem")) },
      (req, res) => {
        const up = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (r) => {
            res.writeHead(r.statusCode ?? 502, r.headers);
            r.pipe(res);
          },
        );
        req.pipe(up);
      },
    );
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const { port } = proxy.address() as AddressInfo;
    url = `https://127.0.0.1:${port}/tls.git`;
  });
  afterAll(async () => {
    proxy.closeAllConnections();
    await new Promise((r) => proxy.close(r));
    await server.stop();
  });

  it("trusts the server with --ca-file and says so when it is missing", async () => {
    const trusted = new GitSource({ url, ref: { branch: "main" }, cacheDir: tmp("c"), caFile: ca });
    const rev = await trusted.resolve();
    expect(rev.commit).toBe(head);
    const co = await trusted.checkout(rev);
    expect(filesOf(co)).toEqual({ "a.yaml": "a: 1\n" });
    const untrusted = new GitSource({ url, ref: { branch: "main" }, cacheDir: tmp("c") });
    const err = await untrusted.resolve().catch((e: unknown) => e);
    expect(isMcpfleetError(err) && err.code).toBe("ERR_GIT_FAILED");
    expect((err as Error).message).toMatch(/--ca-file/);
  });
});

function gitless(cmd: string, args: string[], cwd: string): void {
  execFileSync(cmd, args, { cwd, stdio: "ignore" });
}

describe("GitSource deadlines over HTTP", () => {
  let silent: HttpServer;
  let url: string;
  beforeAll(async () => {
    silent = createHttpServer(() => {
      // Accepts the request and never answers.
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/fleet.git`;
  });
  afterAll(async () => {
    silent.closeAllConnections();
    await new Promise((r) => silent.close(r));
  });

  const hung = (extra: Partial<GitSourceOptions>) =>
    new GitSource({ url, ref: { branch: "main" }, cacheDir: tmp("hung"), ...extra });

  it("gives up on a server that never answers at the deadline (ERR_GIT_UNREACHABLE)", async () => {
    const err = await hung({ timeoutMs: 700 })
      .resolve()
      .catch((e: unknown) => e);
    expect(isMcpfleetError(err) && err.code).toBe("ERR_GIT_UNREACHABLE");
    expect((err as Error).message).toMatch(/not done within 1 s \(--git-timeout\)/);
  });

  it("gives git its credentials in the environment, never on its command line", async () => {
    const secret = "t0ken-that-must-not-show";
    const tokenFile = join(tmp("token"), "token");
    writeFileSync(tokenFile, `${secret}\n`);
    const stop = new AbortController();
    const pending = hung({ timeoutMs: 60_000, signal: stop.signal, auth: { tokenFile } })
      .resolve()
      .catch((e: unknown) => e);
    const basic = Buffer.from(`x-access-token:${secret}`).toString("base64");
    let seen: { argv: string; environ: string }[] = [];
    for (let i = 0; i < 100 && seen.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = gitChildren();
    }
    stop.abort();
    await pending;
    expect(seen.length).toBeGreaterThan(0);
    for (const p of seen) {
      expect(p.argv).not.toContain(secret);
      expect(p.argv).not.toContain(basic);
    }
    expect(seen.some((p) => p.environ.includes(`Authorization: Basic ${basic}`))).toBe(true);
    // No user or system configuration, and only the URL's protocol.
    expect(seen[0]!.environ).toContain("GIT_CONFIG_NOSYSTEM=1");
    expect(seen[0]!.environ).toContain("protocol.http.allow");
  });

  it("cancels the request in flight when the controller stops (ERR_INTERRUPTED)", async () => {
    const stop = new AbortController();
    const pending = hung({ timeoutMs: 60_000, signal: stop.signal })
      .resolve()
      .catch((e: unknown) => e);
    setTimeout(() => stop.abort(), 300);
    const err = await pending;
    expect(isMcpfleetError(err) && err.code).toBe("ERR_INTERRUPTED");
    expect((err as Error).message).toMatch(/shutting down/);
  });
});

/** Command lines and environments of the git processes this process started. */
function gitChildren(): { argv: string; environ: string }[] {
  const read = (pid: string, what: string) => {
    try {
      return readFileSync(`/proc/${pid}/${what}`, "utf8").replaceAll("\0", " ");
    } catch {
      return "";
    }
  };
  return readdirSync("/proc")
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      const stat = read(pid, "stat");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(fields[1]) === process.pid && stat.includes("(git)");
    })
    .map((pid) => ({ argv: read(pid, "cmdline"), environ: read(pid, "environ") }));
}

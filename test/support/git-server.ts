// A Git smart-HTTP server for tests: `git http-backend` (ships with git) run as a CGI behind a
// small Node HTTP server on loopback, with optional Basic authentication. Also helpers to make
// repositories.
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type RequestListener, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface GitServer {
  /** Base URL; a repository `name` under the root is at `${url}/${name}`. */
  url: string;
  root: string;
  /** Number of requests served (to check that clones are reused). */
  requests: number;
  stop(): Promise<void>;
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
  HOME: tmpdir(),
};

export function gitCmd(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: { ...process.env, ...GIT_ENV } })
    .toString()
    .trim();
}

/** Creates a work repository with one commit of `files` on branch `main`. */
export function makeRepo(dir: string, files: Record<string, string>): string {
  mkdirSync(dir, { recursive: true });
  gitCmd(dir, "init", "-q", "-b", "main");
  return commitFiles(dir, files, "initial");
}

export function commitFiles(dir: string, files: Record<string, string>, message: string): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  gitCmd(dir, "add", "-A");
  gitCmd(dir, "commit", "-q", "-m", message);
  return gitCmd(dir, "rev-parse", "HEAD");
}

/** Publishes a work repository as a bare repository `name` under the server root. */
export function publishRepo(server: GitServer, work: string, name: string): void {
  const bare = join(server.root, name);
  rmSync(bare, { recursive: true, force: true });
  execFileSync("git", ["clone", "-q", "--bare", work, bare], {
    env: { ...process.env, ...GIT_ENV },
  });
  gitCmd(bare, "config", "http.receivepack", "false");
}

/** Pushes new commits of a work repository to its published bare repository. */
export function pushRepo(server: GitServer, work: string, name: string): void {
  gitCmd(work, "push", "-q", "--all", join(server.root, name));
  gitCmd(work, "push", "-q", "--tags", join(server.root, name));
}

export async function startGitServer(
  opts: {
    username?: string;
    password?: string;
    /** Serve HTTPS with this key and certificate (PEM files). */
    tls?: { key: string; cert: string };
  } = {},
): Promise<GitServer> {
  const root = mkdtempSync(join(tmpdir(), "mcpfleet-git-"));
  const state = { requests: 0 };
  const handler: RequestListener = (req, res) => {
    state.requests++;
    if (opts.username !== undefined) {
      const want = `Basic ${Buffer.from(`${opts.username}:${opts.password ?? ""}`).toString("base64")}`;
      if (req.headers.authorization !== want) {
        res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' }).end();
        return;
      }
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    const cgi = spawn("git", ["http-backend"], {
      env: {
        ...process.env,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: decodeURIComponent(url.pathname),
        REQUEST_METHOD: req.method ?? "GET",
        QUERY_STRING: url.search.replace(/^\?/, ""),
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"] ?? ""),
        HTTP_GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
        REMOTE_USER: opts.username ?? "",
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        // Backpressure: a slow client must not make this process hold the pack in memory.
        if (!res.write(chunk)) {
          cgi.stdout.pause();
          res.once("drain", () => cgi.stdout.resume());
        }
        return;
      }
      head = Buffer.concat([head, chunk]);
      const sep = head.indexOf("\r\n\r\n");
      const sepLen = sep >= 0 ? 4 : 2;
      const at = sep >= 0 ? sep : head.indexOf("\n\n");
      if (at < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, at).toString().split(/\r?\n/)) {
        const i = line.indexOf(":");
        if (i < 0) continue;
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === "status") status = Number(v.split(" ")[0]);
        else res.setHeader(k, v);
      }
      res.writeHead(status);
      res.write(head.subarray(at + sepLen));
    });
    cgi.on("close", () => res.end());
    cgi.on("error", () => {
      res.writeHead(500).end();
    });
  };
  const tls = opts.tls;
  const server: Server =
    tls === undefined
      ? createServer(handler)
      : createHttpsServer({ key: readFileSync(tls.key), cert: readFileSync(tls.cert) }, handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
    root,
    get requests() {
      return state.requests;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * The same server in a child process (see git-server-main.ts), so that what it relays does not
 * count in this process's memory. `requests` is not counted.
 */
export async function startGitServerProcess(
  opts: { tls?: { key: string; cert: string } } = {},
): Promise<GitServer> {
  const tls = opts.tls === undefined ? [] : [opts.tls.key, opts.tls.cert];
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "git-server-main.ts"), ...tls],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout });
  const [line] = (await once(lines, "line")) as [string];
  lines.close();
  const { url, root } = JSON.parse(line) as { url: string; root: string };
  return {
    url,
    root,
    requests: 0,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    },
  };
}

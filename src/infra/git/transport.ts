// Talking to a remote repository, over HTTP(S) or SSH alike, through the system git: `git
// ls-remote` to learn where a ref points, `git fetch` into a bare cache to get what is new.
// git's index-pack streams a large blob to disk instead of inflating it in memory (with
// core.bigFileThreshold low), so a repository holding a 300 MB file costs no more memory to
// fetch than a small one, whatever the transport. Each run reads no system or user
// configuration, gets its settings and credentials through its environment (never argv), may
// use only the protocol its URL names, and runs in its own process group, killed whole at the
// operation's deadline or when it is cancelled.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpfleetError } from "../../errors.js";
import { type HttpSettings, httpConfig } from "./http.js";
import { type SshOptions, isSshUrl, sshEnv } from "./ssh.js";

export interface RunOptions {
  /** Aborted at the operation's deadline or when the caller stops: kills the process group. */
  signal?: AbortSignal | undefined;
}

/** What an error message tells the reader to check, in the words of the caller's settings. */
export interface ErrorHints {
  /** Where credentials are given, e.g. `--username, --password-file or --token-file`. */
  credentials: string;
  /** Where a private CA is given, e.g. `--ca-file`. */
  caFile: string;
}

export const CONTROLLER_HINTS: ErrorHints = {
  credentials: "--username, --password-file or --token-file",
  caFile: "--ca-file",
};

export interface TransportOptions {
  /** Where the SSH key copy is kept. */
  cacheDir: string;
  /** A transfer that stalls this long fails (HTTP: slower than 1 byte/s; SSH: keep-alives). */
  idleTimeoutMs: number;
  /** For ssh:// and scp-like URLs. */
  ssh?: SshOptions | undefined;
  /** For http(s):// URLs: the settings of each operation, read when it starts. */
  http?: (() => Promise<Omit<HttpSettings, "idleTimeoutMs">>) | undefined;
  /** Most bytes one fetch may receive; past it the fetch is stopped and its pack dropped. */
  maxTransferBytes?: number | undefined;
  hints?: ErrorHints | undefined;
}

/** An empty, read-only HOME for git, curl and ssh: no ~/.gitconfig, ~/.netrc or ~/.ssh read. */
let emptyHome: string | undefined;
function home(): string {
  if (emptyHome === undefined || !fs.existsSync(emptyHome)) {
    const dir = fs.mkdtempSync(join(tmpdir(), "mcpfleet-git-home-"));
    fs.chmodSync(dir, 0o500);
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    emptyHome = dir;
  }
  return emptyHome;
}

/** Proxy settings are the environment's to give; nothing else of it reaches git. */
const PROXY_VARIABLES = [
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
];

/** Settings of every run: one pack per fetch, nothing repacks the cache while it is read. */
const COMMON_CONFIG: [string, string][] = [
  ["core.bigFileThreshold", "1m"],
  ["fetch.unpackLimit", "1"],
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
  ["protocol.allow", "never"],
];

function schemeOf(url: string): "ssh" | "http" | "https" {
  if (isSshUrl(url)) return "ssh";
  return url.startsWith("https:") ? "https" : "http";
}

/** Strips credentials from a URL before it appears in a message. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username !== "" || u.password !== "") {
      u.username = "";
      u.password = "";
    }
    return u.toString().replace(/\/$/, "");
  } catch {
    return url;
  }
}

/** The line of git's complaint worth showing. */
function complaint(stderr: string): string {
  const line =
    stderr
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("Warning: Permanently added"))
      .find((l) => !/^fatal: Could not read from remote repository|^Please make sure/.test(l)) ??
    "failed";
  return line.replace(/^(fatal|error): /, "");
}

/** Classifies git's, curl's and ssh's complaint into a coded, one-line error. */
export function gitProcessError(
  stderr: string,
  where: string,
  hints: ErrorHints = CONTROLLER_HINTS,
): McpfleetError {
  const text = `git ${where}: ${complaint(stderr)}`;
  if (
    /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No .* host key is known/.test(
      stderr,
    )
  ) {
    return new McpfleetError(
      "ERR_GIT_AUTH",
      `git ${where}: the server's host key is not in the known_hosts file (--known-hosts-file); add it, e.g. from ssh-keyscan checked out of band`,
    );
  }
  if (/Permission denied|Load key .*: |no such identity|invalid format/.test(stderr)) {
    return new McpfleetError("ERR_GIT_AUTH", `${text}; check --ssh-key-file and the deploy key`);
  }
  const status = /returned error: (\d{3})/.exec(stderr)?.[1];
  if (
    /could not read (Username|Password)|Authentication failed/.test(stderr) ||
    status === "401" ||
    status === "403"
  ) {
    return new McpfleetError(
      "ERR_GIT_AUTH",
      `git ${where}: the server refused access (HTTP ${status ?? "401"}); check ${hints.credentials}`,
    );
  }
  if (
    /SSL certificate problem|server certificate verification failed|certificate verify/.test(stderr)
  ) {
    return new McpfleetError(
      "ERR_GIT_FAILED",
      `git ${where}: TLS certificate not trusted (${complaint(stderr)}); pass the CA bundle with ${hints.caFile}`,
    );
  }
  if (/repository '.*' not found/.test(stderr) || status === "404") {
    return new McpfleetError("ERR_GIT_REF_NOT_FOUND", `git ${where}: no repository at this URL`);
  }
  if (
    (status !== undefined && status.startsWith("5")) ||
    /Could not resolve host|Could not resolve hostname|Failed to connect|Couldn't connect|Connection refused|Connection timed out|Operation too slow|Operation timed out|Empty reply|Recv failure|transfer closed|No route to host|Network is unreachable|Connection closed|Connection reset|kex_exchange_identification|RPC failed|early EOF/.test(
      stderr,
    )
  ) {
    return new McpfleetError("ERR_GIT_UNREACHABLE", text);
  }
  if (
    /couldn't find remote ref|not our ref|does not appear to be a git repository|Repository not found|No such file or directory/.test(
      stderr,
    )
  ) {
    return new McpfleetError("ERR_GIT_REF_NOT_FOUND", text);
  }
  return new McpfleetError("ERR_GIT_FAILED", text);
}

export class GitTransport {
  private readonly hints: ErrorHints;
  private readonly where: string;

  constructor(
    readonly url: string,
    private readonly opts: TransportOptions,
  ) {
    this.hints = opts.hints ?? CONTROLLER_HINTS;
    this.where = redactUrl(url);
  }

  /** The environment of one run: settings as GIT_CONFIG_* variables, nothing inherited. */
  private async env(): Promise<NodeJS.ProcessEnv> {
    const scheme = schemeOf(this.url);
    const config: [string, string][] = [...COMMON_CONFIG, [`protocol.${scheme}.allow`, "always"]];
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: home(),
      LC_ALL: "C",
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
    };
    if (scheme === "ssh") {
      if (this.opts.ssh === undefined) {
        throw new McpfleetError("ERR_USAGE", `git ${this.where}: no SSH settings given`);
      }
      Object.assign(env, sshEnv(this.opts.ssh, this.opts.cacheDir));
    } else {
      const settings = (await this.opts.http?.()) ?? {};
      config.push(...httpConfig({ ...settings, idleTimeoutMs: this.opts.idleTimeoutMs }));
      // A pinned address is the one checked: a proxy would connect elsewhere.
      if (settings.pinned === undefined) {
        for (const name of PROXY_VARIABLES) {
          const value = process.env[name];
          if (value !== undefined) env[name] = value;
        }
      }
    }
    env.GIT_CONFIG_COUNT = String(config.length);
    config.forEach(([key, value], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = key;
      env[`GIT_CONFIG_VALUE_${i}`] = value;
    });
    return env;
  }

  private async run(args: readonly string[], run: RunOptions, watch?: Watch): Promise<string> {
    const env = await this.env();
    return runProcess(
      "git",
      args,
      { env, ...run, ...(watch !== undefined ? { watch } : {}) },
      {
        where: this.where,
        hints: this.hints,
      },
    );
  }

  /** Creates the bare repository `gitdir` when it is not one yet. */
  async init(gitdir: string, run: RunOptions): Promise<void> {
    if (fs.existsSync(join(gitdir, "HEAD"))) return;
    fs.mkdirSync(gitdir, { recursive: true });
    await this.run(["init", "--quiet", "--bare", gitdir], run);
  }

  /** The remote's refs matching `patterns`: name to commit (annotated tags peeled). */
  async listRefs(patterns: readonly string[], run: RunOptions): Promise<Map<string, string>> {
    const out = await this.run(["ls-remote", "--symref", this.url, ...patterns], run);
    const refs = new Map<string, string>();
    for (const line of out.split("\n")) {
      const sym = /^ref: (\S+)\t(\S+)$/.exec(line);
      if (sym !== null) {
        refs.set(`symref:${sym[2]}`, sym[1]!);
        continue;
      }
      const m = /^([0-9a-f]{40})\t(\S+)$/.exec(line);
      if (m === null) continue;
      const [, oid, name] = m as unknown as [string, string, string];
      if (name.endsWith("^{}")) refs.set(name.slice(0, -3), oid);
      else if (!refs.has(name)) refs.set(name, oid);
    }
    return refs;
  }

  /** Fetches `refspecs` into the bare repository `gitdir`. */
  async fetch(
    gitdir: string,
    args: { refspecs: readonly string[]; depth?: number },
    run: RunOptions,
  ): Promise<void> {
    const packDir = join(gitdir, "objects", "pack");
    const before = new Set(listDir(packDir));
    const limit = this.opts.maxTransferBytes;
    const tooLarge = (): McpfleetError =>
      new McpfleetError(
        "ERR_GIT_FAILED",
        `git ${this.where}: the repository is larger than ${limit} bytes`,
      );
    const received = (): number =>
      listDir(packDir)
        .filter((n) => !before.has(n) && (n.startsWith("tmp_pack_") || n.endsWith(".pack")))
        .reduce((sum, n) => sum + fileSize(join(packDir, n)), 0);
    const watch: Watch | undefined =
      limit === undefined
        ? undefined
        : { everyMs: 100, check: () => (received() > limit ? tooLarge() : undefined) };
    await this.run(
      [
        `--git-dir=${gitdir}`,
        "fetch",
        "--quiet",
        "--no-write-fetch-head",
        ...(args.depth !== undefined ? [`--depth=${args.depth}`] : []),
        this.url,
        ...args.refspecs,
      ],
      run,
      watch,
    );
    // A fetch quicker than the watch's first look: judged by what it left.
    if (limit !== undefined && received() > limit) {
      fs.rmSync(gitdir, { recursive: true, force: true });
      throw tooLarge();
    }
  }
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function fileSize(path: string): number {
  try {
    return fs.statSync(path).size;
  } catch {
    return 0;
  }
}

/** A check made while a process runs: an error returned stops it with that error. */
interface Watch {
  everyMs: number;
  check: () => McpfleetError | undefined;
}

/**
 * Runs a program in its own process group; aborting the signal kills the whole group (git and
 * the ssh or curl helper it started). Resolves with stdout.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  opts: RunOptions & { env: NodeJS.ProcessEnv; watch?: Watch },
  say: { where: string; hints?: ErrorHints },
): Promise<string> {
  const where = say.where;
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted === true) {
      reject(new McpfleetError("ERR_INTERRUPTED", `git ${where}: stopped before it started`));
      return;
    }
    const child = spawn(command, args, {
      env: opts.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => {
      // Only the first complaint is shown: a chatty process does not grow memory.
      if (err.length < 64) err.push(c);
    });
    let ended: McpfleetError | undefined;
    const kill = (why: McpfleetError) => {
      ended ??= why;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const onAbort = () =>
      kill(
        new McpfleetError("ERR_INTERRUPTED", `git ${where}: stopped (the operation was cancelled)`),
      );
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const watch = opts.watch;
    const timer =
      watch === undefined
        ? undefined
        : setInterval(() => {
            const problem = watch.check();
            if (problem !== undefined) kill(problem);
          }, watch.everyMs);
    child.on("error", (e) => {
      ended ??= new McpfleetError(
        "ERR_GIT_FAILED",
        `git ${where}: cannot run ${command}: ${e.message}`,
      );
    });
    child.on("close", (code) => {
      opts.signal?.removeEventListener("abort", onAbort);
      if (timer !== undefined) clearInterval(timer);
      if (ended !== undefined) reject(ended);
      else if (code === 0) resolve(Buffer.concat(out).toString("utf8"));
      else reject(gitProcessError(Buffer.concat(err).toString("utf8"), where, say.hints));
    });
  });
}

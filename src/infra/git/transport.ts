// Git over SSH through the system's git and ssh: isomorphic-git speaks only HTTP, and an SSH
// client of our own would mean a second implementation of host-key checking, key formats and
// ciphers to keep secure. `git ls-remote` and `git fetch` run with a deploy key and a
// known_hosts file given explicitly (GIT_SSH_COMMAND), host keys checked strictly, no user or
// system configuration read, no prompt; the process group is killed at the operation's deadline.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { join } from "node:path";
import { McpfleetError } from "../../errors.js";

/** `ssh://[user@]host[:port]/path` (also `git+ssh://`) or scp-like `[user@]host:path`. */
export function isSshUrl(url: string): boolean {
  if (/^(git\+)?ssh:\/\//.test(url)) return true;
  // scp-like: no scheme, and a colon before any slash (`C:\` and `./a:b` are local paths).
  return /^(?:[^@/:\s]+@)?[^@/:\s]{2,}:(?!\/\/)/.test(url) && !url.includes("://");
}

export interface SshOptions {
  /** Private key of the deploy key (read on every operation, so rotation needs no restart). */
  keyFile?: string;
  /** known_hosts holding the server's host key: nothing else is trusted. */
  knownHostsFile: string;
  /** Where a private copy of the key is kept (ssh refuses a key others can read). */
  cacheDir: string;
}

export interface RunOptions {
  /** Aborted at the operation's deadline or when the controller stops: kills the process. */
  signal?: AbortSignal | undefined;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Classifies git's and ssh's complaint into a coded, one-line error. */
export function sshGitError(stderr: string, where: string): McpfleetError {
  const line =
    stderr
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("Warning: Permanently added"))
      .find((l) => !/^fatal: Could not read from remote repository|^Please make sure/.test(l)) ??
    "failed";
  const text = `git ${where}: ${line.replace(/^fatal: /, "")}`;
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
  if (
    /Could not resolve hostname|Connection refused|Connection timed out|No route to host|Network is unreachable|Connection closed|kex_exchange_identification/.test(
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

export class SshTransport {
  constructor(
    readonly url: string,
    private readonly opts: SshOptions,
  ) {}

  /** GIT_SSH_COMMAND: this key, these host keys, no configuration, no prompt. */
  private sshCommand(): string {
    const parts = [
      "ssh",
      "-F",
      "/dev/null",
      "-o",
      "BatchMode=yes",
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `UserKnownHostsFile=${shellQuote(this.opts.knownHostsFile)}`,
      "-o",
      "GlobalKnownHostsFile=/dev/null",
      "-o",
      "ConnectTimeout=30",
      "-o",
      "ServerAliveInterval=15",
    ];
    if (this.opts.keyFile !== undefined) {
      parts.push("-o", "IdentitiesOnly=yes", "-i", shellQuote(this.privateKey(this.opts.keyFile)));
    }
    return parts.join(" ");
  }

  /**
   * A copy of the key only this user can read: ssh refuses a key file others can read, and a
   * mounted Kubernetes Secret usually is one (mode 0644).
   */
  private privateKey(file: string): string {
    let key: Buffer;
    try {
      key = fs.readFileSync(file);
    } catch (err) {
      throw new McpfleetError("ERR_IO", `cannot read ${file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const dir = join(this.opts.cacheDir, "ssh");
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const copy = join(dir, `key-${createHash("sha256").update(file).digest("hex").slice(0, 12)}`);
    const tmp = `${copy}.tmp`;
    fs.writeFileSync(tmp, key, { mode: 0o600 });
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, copy);
    return copy;
  }

  /** Runs git with the SSH settings; rejects with a coded error naming the remote. */
  run(args: readonly string[], run: RunOptions): Promise<string> {
    const env = {
      ...process.env,
      GIT_SSH_COMMAND: this.sshCommand(),
      GIT_SSH_VARIANT: "ssh",
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      LC_ALL: "C",
    };
    return runProcess("git", args, { env, ...run }, `${this.url}`);
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

  /** Fetches `refspecs` (or the remote's branches and tags) into the bare repository `gitdir`. */
  async fetch(
    gitdir: string,
    args: { refspecs: readonly string[]; depth?: number },
    run: RunOptions,
  ): Promise<void> {
    await this.run(
      [
        // Every fetch one pack and no background gc: the cache is bounded as the HTTP path's
        // is (dropped past a number of packs), and nothing repacks it while it is read.
        "-c",
        "fetch.unpackLimit=1",
        "-c",
        "gc.auto=0",
        "-c",
        "maintenance.auto=false",
        `--git-dir=${gitdir}`,
        "fetch",
        "--quiet",
        "--no-write-fetch-head",
        ...(args.depth !== undefined ? [`--depth=${args.depth}`] : []),
        this.url,
        ...args.refspecs,
      ],
      run,
    );
  }
}

/**
 * Runs a program in its own process group; aborting the signal kills the whole group (git and
 * the ssh it started). Resolves with stdout.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  opts: RunOptions & { env: NodeJS.ProcessEnv },
  where: string,
): Promise<string> {
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
    child.stderr.on("data", (c: Buffer) => err.push(c));
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
        new McpfleetError(
          "ERR_INTERRUPTED",
          `git ${where}: stopped (the controller is shutting down)`,
        ),
      );
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (e) => {
      ended ??= new McpfleetError(
        "ERR_GIT_FAILED",
        `git ${where}: cannot run ${command}: ${e.message}`,
      );
    });
    child.on("close", (code) => {
      opts.signal?.removeEventListener("abort", onAbort);
      if (ended !== undefined) reject(ended);
      else if (code === 0) resolve(Buffer.concat(out).toString("utf8"));
      else reject(sshGitError(Buffer.concat(err).toString("utf8"), where));
    });
  });
}

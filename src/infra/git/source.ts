// A view of a Git repository shared by the controller and the registry: resolve the watched
// branch, tag or commit to a commit SHA, fetch only what is new, and read the watched directory
// (or one file) of that commit from the object store. Remote repositories (http/https/ssh) are
// fetched by the system git (transport.ts) into a bare cache reused by every poll; file://
// repositories are read in place (there is nothing to download).
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { McpfleetError } from "../../errors.js";
import { MAX_RESOURCE_FILE_BYTES } from "../../resource-files.js";
import { trustBundle, urlPort } from "./http.js";
import { ObjectStore, ObjectTooLargeError } from "./objects.js";
import { readRef } from "./refs.js";
import { isSshUrl } from "./ssh.js";
import {
  CONTROLLER_HINTS,
  type ErrorHints,
  GitTransport,
  type RunOptions,
  redactUrl,
} from "./transport.js";
import { type TreeFile, commitTree, parseTree, readResourceTree, subtree } from "./tree.js";

export { redactUrl } from "./transport.js";

/** What to follow: exactly one of a branch, a tag or a commit (none means the remote's HEAD). */
export type GitRevisionSpec = { branch: string } | { tag: string } | { commit: string } | object;

export interface GitAuth {
  /** Basic authentication user; defaults to `x-access-token` with a token, `git` otherwise. */
  username?: string;
  /** File holding the password (read on every poll, so rotation needs no restart). */
  passwordFile?: string;
  /** File holding a token, sent as the Basic password (GitHub, GitLab and Gitea accept this). */
  tokenFile?: string;
  /** The password itself, when the caller has read it already. */
  password?: string;
}

export interface GitSourceOptions {
  /** http://, https://, ssh:// (or scp-like `git@host:path`) or file:// URL of the repository. */
  url: string;
  ref: GitRevisionSpec;
  /** Directory inside the repository to check out ("" or "." for all of it). */
  path?: string;
  /** Where clones of remote repositories are kept. */
  cacheDir: string;
  auth?: GitAuth;
  /** PEM bundle of extra certificate authorities trusted for https:// repositories. */
  caFile?: string;
  /**
   * Every shallow fetch adds a pack to the cache; past this many, the cache is dropped and the
   * next fetch starts afresh (one shallow fetch), so a long-running controller's disk use stays
   * bounded. Default 64.
   */
  maxPacks?: number;
  /** Largest resource file checked out; a larger one refuses the revision unread. */
  maxFileBytes?: number;
  /** Private key file of an SSH deploy key. */
  sshKeyFile?: string;
  /** known_hosts file with the SSH server's host key (required for SSH: keys are checked). */
  knownHostsFile?: string;
  /** Deadline of one resolve (every request and fetch it makes); default 60 s. */
  timeoutMs?: number;
  /** A transfer that stalls this long fails; default the deadline. */
  idleTimeoutMs?: number;
  /** Cancels the operation in flight (the controller stopping). */
  signal?: AbortSignal;
  /**
   * Checks the host of an http(s) URL before every operation and names the addresses to
   * connect to (the registry's private-address guard); the connection is pinned to them and
   * redirects are not followed. Rejects to refuse the host.
   */
  pinAddresses?: (url: URL) => Promise<string[]>;
  /** Most bytes one fetch may receive (a huge repository fails instead of filling the disk). */
  maxTransferBytes?: number;
  /** The settings error messages point to (default: the controller's flags). */
  hints?: ErrorHints;
}

const DEFAULT_TIMEOUT_MS = 60_000;

export interface Revision {
  /** Commit SHA (40 hex digits). */
  commit: string;
  /** The watched ref as written on the command line, e.g. `branch main`. */
  ref: string;
}

export interface Checkout extends Revision {
  /** Git tree id of the watched path at this commit: equal ids mean equal content. */
  tree: string;
  /** The watched path's resource files, named by their path in the repository. */
  files: TreeFile[];
  /** Entries of the watched path left out that a reader could expect (symbolic links). */
  warnings: string[];
}

const SHA = /^[0-9a-f]{40}$/;

function describeRef(ref: GitRevisionSpec): string {
  if ("branch" in ref) return `branch ${ref.branch}`;
  if ("tag" in ref) return `tag ${ref.tag}`;
  if ("commit" in ref) return `commit ${ref.commit}`;
  return "HEAD";
}

function normalisePath(path: string | undefined): string {
  const p = (path ?? "")
    .replace(/\\/g, "/")
    .split("/")
    .filter((s) => s !== "" && s !== ".");
  if (p.includes("..")) {
    throw new McpfleetError("ERR_USAGE", `--path must stay inside the repository, not ${path}`);
  }
  return p.join("/");
}

function readSecret(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new McpfleetError("ERR_IO", `cannot read ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Wraps an error of reading the object store into a coded error naming the repository. */
export function gitError(err: unknown, url: string, ref: string): McpfleetError {
  if (err instanceof McpfleetError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new McpfleetError("ERR_GIT_FAILED", `git ${redactUrl(url)} (${ref}): ${message}`, {
    cause: err,
  });
}

export class GitSource {
  readonly url: string;
  readonly refName: string;
  private readonly opts: GitSourceOptions;
  private readonly path: string;
  private readonly local: string | undefined;
  private readonly gitdir: string;
  private readonly transport: GitTransport | undefined;
  private readonly timeoutMs: number;
  private readonly hints: ErrorHints;
  /** The signal of the resolve in flight: its deadline, or the caller stopping. */
  private operation: AbortSignal | undefined;
  /** Network operations made (each listing or fetch is one); for tests and metrics. */
  fetches = 0;

  constructor(opts: GitSourceOptions) {
    this.opts = opts;
    this.url = opts.url;
    this.refName = describeRef(opts.ref);
    this.path = normalisePath(opts.path);
    this.hints = opts.hints ?? CONTROLLER_HINTS;
    if ("commit" in opts.ref && !/^[0-9a-f]{4,40}$/.test(opts.ref.commit)) {
      throw new McpfleetError("ERR_USAGE", `--commit must be a hex SHA, not ${opts.ref.commit}`);
    }
    if (opts.url.startsWith("file://")) {
      const p = fileURLToPath(opts.url);
      this.local = fs.existsSync(join(p, ".git")) ? join(p, ".git") : p;
      this.gitdir = this.local;
    } else if (/^https?:\/\//.test(opts.url) || isSshUrl(opts.url)) {
      this.local = undefined;
      const key = createHash("sha256").update(opts.url).digest("hex").slice(0, 16);
      this.gitdir = join(opts.cacheDir, "repos", key);
    } else {
      throw new McpfleetError(
        "ERR_USAGE",
        `--repo must be an http://, https://, ssh:// (or user@host:path) or file:// URL, not ${opts.url}`,
      );
    }
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (isSshUrl(opts.url) && opts.knownHostsFile === undefined) {
      throw new McpfleetError(
        "ERR_USAGE",
        "--known-hosts-file is required for an ssh repository: the server's host key is always checked",
      );
    }
    this.transport =
      this.local !== undefined
        ? undefined
        : new GitTransport(opts.url, {
            cacheDir: opts.cacheDir,
            idleTimeoutMs: opts.idleTimeoutMs ?? this.timeoutMs,
            hints: this.hints,
            ...(opts.maxTransferBytes !== undefined
              ? { maxTransferBytes: opts.maxTransferBytes }
              : {}),
            ...(opts.knownHostsFile !== undefined
              ? {
                  ssh: {
                    knownHostsFile: opts.knownHostsFile,
                    ...(opts.sshKeyFile !== undefined ? { keyFile: opts.sshKeyFile } : {}),
                  },
                }
              : {}),
            http: () => this.httpSettings(),
          });
  }

  /** Credentials, CA and pinned address of one HTTP(S) operation (secrets read every time). */
  private async httpSettings(): Promise<{
    authorization?: string;
    caFile?: string;
    pinned?: { host: string; port: number; addresses: string[] };
  }> {
    const authorization = this.authorization();
    const settings: Awaited<ReturnType<GitSource["httpSettings"]>> = {};
    if (authorization !== undefined) settings.authorization = authorization;
    if (this.opts.caFile !== undefined) {
      // A missing bundle says so, not a TLS failure; read every time, so rotation needs no restart.
      settings.caFile = trustBundle(readSecret(this.opts.caFile), this.opts.cacheDir);
    }
    if (this.opts.pinAddresses !== undefined) {
      const url = new URL(this.url);
      const host = url.hostname.replace(/^\[|\]$/g, "");
      const addresses = await this.opts.pinAddresses(url);
      settings.pinned = { host, port: urlPort(url), addresses };
    }
    return settings;
  }

  private authorization(): string | undefined {
    const auth = this.opts.auth;
    if (auth === undefined) return undefined;
    let password: string | undefined;
    let user = auth.username;
    if (auth.tokenFile !== undefined) {
      password = readSecret(auth.tokenFile);
      user ??= "x-access-token";
    } else if (auth.passwordFile !== undefined) {
      password = readSecret(auth.passwordFile);
    } else if (auth.password !== undefined) {
      password = auth.password;
    }
    if (password === undefined && user === undefined) return undefined;
    return `Basic ${Buffer.from(`${user ?? "git"}:${password ?? ""}`).toString("base64")}`;
  }

  /** Resolves the watched ref to a commit, fetching what is new from a remote. */
  async resolve(): Promise<Revision> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const stop = this.opts.signal;
    this.operation = stop !== undefined ? AbortSignal.any([stop, deadline]) : deadline;
    try {
      const commit = this.local !== undefined ? this.resolveLocal() : await this.resolveRemote();
      return { commit, ref: this.refName };
    } catch (err) {
      const where = `${redactUrl(this.url)} (${this.refName})`;
      if (stop?.aborted === true) {
        throw new McpfleetError(
          "ERR_INTERRUPTED",
          `git ${where}: stopped (the controller is shutting down)`,
          { cause: err },
        );
      }
      if (deadline.aborted) {
        throw new McpfleetError(
          "ERR_GIT_UNREACHABLE",
          `git ${where}: not done within ${Math.round(this.timeoutMs / 1000)} s (--git-timeout)`,
          { cause: err },
        );
      }
      throw gitError(err, this.url, this.refName);
    } finally {
      this.operation = undefined;
    }
  }

  private run(): RunOptions {
    return { signal: this.operation };
  }

  private notFound(what: string): McpfleetError {
    return new McpfleetError(
      "ERR_GIT_REF_NOT_FOUND",
      `git ${redactUrl(this.url)}: ${what} not found`,
    );
  }

  /**
   * Runs `use` on the repository's object store (read by position: a pack holding a large file
   * is not loaded to read one commit of it).
   */
  private withStore<T>(use: (store: ObjectStore) => T): T {
    const store = new ObjectStore(this.gitdir);
    try {
      return use(store);
    } finally {
      store.close();
    }
  }

  /** Peels annotated tags down to the commit they name. */
  private peel(oid: string): string {
    return this.withStore((store) => {
      let current = oid;
      for (let i = 0; i < 10; i++) {
        const { type } = store.info(current);
        if (type === "commit") return current;
        if (type !== "tag") throw new McpfleetError("ERR_GIT_FAILED", `${oid} is not a commit`);
        const m = /^object ([0-9a-f]{40})$/m.exec(store.read(current, "tag").toString("utf8"));
        if (m === null) throw new McpfleetError("ERR_GIT_FAILED", `tag ${current} names no object`);
        current = m[1]!;
      }
      throw new McpfleetError("ERR_GIT_FAILED", `${oid}: tag chain too long`);
    });
  }

  private hasCommit(oid: string): boolean {
    return this.withStore((store) => store.has(oid, "commit"));
  }

  /** The commit an abbreviated id names, when exactly one commit here starts with it. */
  private expandCommit(short: string): string | undefined {
    return this.withStore((store) => {
      const commits = store.expand(short).filter((oid) => store.has(oid, "commit"));
      return commits.length === 1 ? commits[0] : undefined;
    });
  }

  private resolveLocal(): string {
    if (!fs.existsSync(this.gitdir)) {
      throw new McpfleetError("ERR_GIT_UNREACHABLE", `no repository at ${this.url}`);
    }
    const ref = this.opts.ref;
    if ("commit" in ref) {
      const oid = this.expandCommit(ref.commit);
      if (oid === undefined) throw this.notFound(`commit ${ref.commit}`);
      return oid;
    }
    const full =
      "branch" in ref ? `refs/heads/${ref.branch}` : "tag" in ref ? `refs/tags/${ref.tag}` : "HEAD";
    const oid = readRef(this.gitdir, full);
    if (oid === undefined) throw this.notFound(this.refName);
    return this.peel(oid);
  }

  private packCount(): number {
    try {
      return fs.readdirSync(join(this.gitdir, "objects", "pack")).filter((n) => n.endsWith(".pack"))
        .length;
    } catch {
      return 0;
    }
  }

  private async ensureCache(): Promise<void> {
    if (this.packCount() > (this.opts.maxPacks ?? 64)) {
      fs.rmSync(this.gitdir, { recursive: true, force: true });
    }
    await this.transport!.init(this.gitdir, this.run());
  }

  /** The remote ref's commit as the server advertises it (one small request). */
  private async advertised(): Promise<{ ref: string; oid: string } | undefined> {
    const ref = this.opts.ref;
    this.fetches++;
    const full =
      "branch" in ref ? `refs/heads/${ref.branch}` : "tag" in ref ? `refs/tags/${ref.tag}` : "HEAD";
    // `^{}`: the commit an annotated tag points to, listed only when asked for by name.
    const refs = await this.transport!.listRefs([full, `${full}^{}`], this.run());
    const oid = refs.get(full);
    if (oid === undefined) return undefined;
    return { ref: refs.get(`symref:${full}`) ?? full, oid };
  }

  /** Fetches from the remote; resolves with the fetched tip (null when the remote sent none). */
  private async fetch(args: {
    ref?: string;
    depth?: number;
    singleBranch: boolean;
  }): Promise<string | null> {
    this.fetches++;
    const ref = this.opts.ref;
    const full =
      args.ref === undefined || args.ref.startsWith("refs/") || args.ref === "HEAD"
        ? args.ref
        : `${"tag" in ref ? "refs/tags" : "refs/heads"}/${args.ref}`;
    const refspecs =
      full !== undefined
        ? [`+${full}:refs/fetched/tip`]
        : args.singleBranch
          ? ["+HEAD:refs/fetched/tip"]
          : ["+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"];
    await this.transport!.fetch(
      this.gitdir,
      { refspecs, ...(args.depth !== undefined ? { depth: args.depth } : {}) },
      this.run(),
    );
    return readRef(this.gitdir, "refs/fetched/tip") ?? null;
  }

  private async resolveRemote(): Promise<string> {
    await this.ensureCache();
    const ref = this.opts.ref;
    if ("commit" in ref) {
      // A pinned commit never changes: once it is here, no request is made at all.
      const have = this.expandCommit(ref.commit);
      if (have !== undefined) return have;
      // Servers rarely allow fetching an arbitrary SHA, so fetch history until it shows up.
      await this.fetch({ singleBranch: true });
      const viaHead = this.expandCommit(ref.commit);
      if (viaHead !== undefined) return viaHead;
      await this.fetch({ singleBranch: false });
      const any = this.expandCommit(ref.commit);
      if (any === undefined) throw this.notFound(`commit ${ref.commit}`);
      return any;
    }
    const adv = await this.advertised();
    if (adv === undefined) throw this.notFound(this.refName);
    if (SHA.test(adv.oid) && this.hasCommit(adv.oid)) return adv.oid;
    // Only the tip is needed to render it: fetch shallowly. A force-push (the tip moved
    // backwards or sideways) is just another tip.
    const fetchRef = "branch" in ref ? ref.branch : "tag" in ref ? ref.tag : adv.ref;
    const fetched = await this.fetch({ ref: fetchRef, depth: 1, singleBranch: true });
    if (!this.hasCommit(adv.oid)) {
      // The ref moved between the listing and the fetch; take what was fetched.
      if (fetched === null) throw this.notFound(this.refName);
      return this.peel(fetched);
    }
    return adv.oid;
  }

  /**
   * Reads the resource files of the watched path at `revision` straight from the object store
   * into memory (see tree.ts): no work tree is written.
   */
  checkout(revision: Revision): Promise<Checkout> {
    return new Promise((resolve) => resolve(this.readCheckout(revision)));
  }

  private readCheckout(revision: Revision): Checkout {
    const store = new ObjectStore(this.gitdir);
    try {
      const tree = subtree(store, commitTree(store, revision.commit), this.path);
      if (tree === undefined) {
        throw new McpfleetError(
          "ERR_INVALID_RESOURCES",
          `--path ${this.path} does not exist at commit ${revision.commit.slice(0, 12)}`,
        );
      }
      const read = readResourceTree(store, tree, {
        path: this.path,
        maxFileBytes: this.opts.maxFileBytes ?? MAX_RESOURCE_FILE_BYTES,
      });
      return { ...revision, tree, files: read.files, warnings: read.warnings };
    } catch (err) {
      throw gitError(err, this.url, this.refName);
    } finally {
      store.close();
    }
  }

  /**
   * The file at `path` (the watched path is ignored) at `revision`, refused from its header when
   * it is larger than `maxBytes`: a large file is never inflated. Undefined when there is none.
   */
  readFile(revision: Revision, path: string, maxBytes: number): Buffer | undefined {
    const parts = normalisePath(path).split("/");
    const name = parts.pop() ?? "";
    const store = new ObjectStore(this.gitdir);
    try {
      const dir = subtree(store, commitTree(store, revision.commit), parts.join("/"));
      if (dir === undefined) return undefined;
      const entry = parseTree(store.read(dir, "tree")).find((e) => e.name === name);
      if (entry === undefined || entry.mode === "40000" || entry.mode === "160000") {
        return undefined;
      }
      return store.read(entry.oid, "blob", maxBytes);
    } catch (err) {
      if (err instanceof ObjectTooLargeError) {
        throw new McpfleetError(
          "ERR_GIT_FAILED",
          `git ${redactUrl(this.url)} (${this.refName}): ${path} is larger than ${maxBytes} bytes`,
          { cause: err },
        );
      }
      throw gitError(err, this.url, this.refName);
    } finally {
      store.close();
    }
  }
}

// Fetching a synced source's data: a file, a URL, a file in a Git repository, or the pages of
// another registry's API. Each returns bytes (or, for the API, pages one at a time).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, promises as fsp } from "node:fs";
import * as fs from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import git, { type GitHttpRequest, type GitHttpResponse, type HttpClient } from "isomorphic-git";
import http from "isomorphic-git/http/node";
import { McpfleetError } from "../../errors.js";
import { parseDuration } from "../../duration.js";
import { HttpStatusError, guardedLookup, sendRequest } from "../../infra/http-client.js";
import { readSecretFile } from "../config/secrets.js";
import type { GitSourceConfig } from "../config/types.js";
import { urlProblem, type LocationPolicy } from "./location.js";

/**
 * What one sync may fetch. A hostile or broken upstream (endless cursors, a gzip bomb, a page
 * that never ends) fails its sync at one of these instead of growing the server's memory or
 * holding the source for ever; the last good data stays.
 */
export interface SyncLimits {
  /** Largest registry file of a file, url or git source, decompressed. */
  maxFileBytes: number;
  /** Largest page of an api source, decompressed (a page of 100 servers is ~100 KB). */
  maxPageBytes: number;
  /** Most pages of one api sync. */
  maxPages: number;
  /** Most bytes of all pages of one api sync, decompressed. */
  maxTotalBytes: number;
  /** Longest cursor an api source may hand back. */
  maxCursorLength: number;
  /** Longest one sync may run, in milliseconds. */
  timeoutMs: number;
}

export const DEFAULT_SYNC_LIMITS: SyncLimits = {
  maxFileBytes: 64 * 1024 * 1024,
  maxPageBytes: 8 * 1024 * 1024,
  maxPages: 10_000,
  maxTotalBytes: 512 * 1024 * 1024,
  maxCursorLength: 1024,
  timeoutMs: 10 * 60_000,
};

/** Largest registry file accepted from a file, URL or Git source. */
export const MAX_FILE_BYTES = DEFAULT_SYNC_LIMITS.maxFileBytes;

/** Largest page accepted from another registry's API. */
export const MAX_PAGE_BYTES = DEFAULT_SYNC_LIMITS.maxPageBytes;

const MAX_REDIRECTS = 5;

export { HttpStatusError };

/**
 * One GET through the shared outgoing client, the body collected into one Buffer: redirects
 * followed (at most five; credentials are not sent to another origin), a gzip, deflate or br
 * body decoded, more than `maxBytes` refused while reading, and an answer outside 2xx an
 * HttpStatusError.
 */
export async function httpGet(
  url: URL,
  opts: {
    headers?: Record<string, string>;
    /** Cancels the request (a sync's deadline, the server stopping). */
    signal?: AbortSignal;
    /** Time limit of the whole request, redirects and body included. */
    deadlineMs?: number;
    maxBytes: number;
    /** For sources created through the admin API: every hop, and every address, allowed. */
    guard?: LocationPolicy;
  },
): Promise<Buffer> {
  const guard = opts.guard;
  const answer = await sendRequest(url, {
    ...(opts.headers !== undefined ? { headers: opts.headers } : {}),
    ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
    ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
    maxBytes: opts.maxBytes,
    decompress: true,
    maxRedirects: MAX_REDIRECTS,
    allowPrivateAddresses: guard === undefined || guard.allowPrivateIP,
    ...(guard !== undefined ? { checkUrl: (u: URL) => urlProblem(u, guard) } : {}),
    acceptStatus: (status) => status >= 200 && status <= 299,
  });
  return answer.body;
}

export function resolvePath(baseDir: string, p: string): string {
  return isAbsolute(p) ? p : resolve(baseDir, p);
}

export async function fetchFile(path: string, maxBytes = MAX_FILE_BYTES): Promise<Buffer> {
  try {
    const st = await fsp.stat(path);
    if (st.size > maxBytes) throw new Error(`larger than ${maxBytes} bytes`);
    return await fsp.readFile(path);
  } catch (err) {
    // The status message is shown to source admins: the reason, not the server's path or
    // what the file holds (the path is in the source's own configuration).
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === undefined
        ? (err as Error).message
        : code === "ENOENT"
          ? "it does not exist"
          : code === "EACCES" || code === "EPERM"
            ? "permission denied"
            : code === "EISDIR"
              ? "it is a directory"
              : code;
    throw new McpfleetError("ERR_SYNC_FAILED", `cannot read file.path: ${why}`, { cause: err });
  }
}

/** A string map without its absent values (the generated config types admit them). */
function definedValues(map: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(map).filter((kv): kv is [string, string] => kv[1] !== undefined),
  );
}

export async function fetchUrl(
  url: string,
  opts: {
    timeout?: string;
    headers?: Record<string, string | undefined>;
    signal?: AbortSignal;
    maxBytes?: number;
    guard?: LocationPolicy;
  },
): Promise<Buffer> {
  try {
    return await httpGet(new URL(url), {
      ...(opts.headers !== undefined ? { headers: definedValues(opts.headers) } : {}),
      // The sync's deadline and cancellation, and the source's own time limit.
      ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
      deadlineMs: parseDuration(opts.timeout ?? "30s"),
      maxBytes: opts.maxBytes ?? MAX_FILE_BYTES,
      ...(opts.guard !== undefined ? { guard: opts.guard } : {}),
    });
  } catch (err) {
    throw new McpfleetError("ERR_SYNC_FAILED", `GET ${url}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * The Git HTTP client of a source created through the admin API: every request to an allowed
 * host, connected to an allowed address, never following a redirect, and no more than
 * `maxBytes` received in all (a fetch of a huge repository fails instead of filling the disk
 * and memory).
 */
function guardedGitHttp(guard: LocationPolicy, maxBytes: number): HttpClient {
  const lookup = guardedLookup(guard.allowPrivateIP);
  let received = 0;
  return {
    async request(r: GitHttpRequest): Promise<GitHttpResponse> {
      const url = new URL(r.url);
      const refused = urlProblem(url, guard);
      if (refused !== undefined) throw new Error(`refused: ${refused}`);
      const chunks: Uint8Array[] = [];
      if (r.body !== undefined) for await (const c of r.body) chunks.push(c);
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = (url.protocol === "https:" ? httpsRequest : httpRequest)(
          url,
          {
            method: r.method ?? "GET",
            headers: r.headers ?? {},
            lookup,
            ...(r.signal !== undefined ? { signal: r.signal } : {}),
          },
          resolve,
        );
        req.once("error", reject);
        req.end(chunks.length > 0 ? Buffer.concat(chunks) : undefined);
      });
      async function* body(): AsyncIterableIterator<Uint8Array> {
        for await (const chunk of res as AsyncIterable<Buffer>) {
          received += chunk.length;
          if (received > maxBytes) {
            res.destroy();
            throw new Error(`the repository is larger than ${maxBytes} bytes`);
          }
          yield chunk;
        }
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
      }
      return {
        url: r.url,
        method: r.method ?? "GET",
        headers,
        body: body(),
        statusCode: res.statusCode ?? 0,
        statusMessage: res.statusMessage ?? "",
      };
    },
  };
}

/**
 * Reads the registry file from a Git repository. Remote repositories are fetched shallowly
 * into a bare clone under `cacheDir`, reused between syncs; file:// repositories are read in
 * place.
 */
export async function fetchGit(
  cfg: GitSourceConfig,
  opts: {
    cacheDir: string;
    baseDir: string;
    /** Largest registry file. */
    maxBytes?: number;
    /** For sources created through the admin API (see guardedGitHttp). */
    guard?: LocationPolicy;
    /** Most bytes a guarded fetch may receive. */
    maxTransferBytes?: number;
  },
): Promise<{ data: Buffer; commit: string }> {
  const filepath = cfg.path ?? "registry.json";
  try {
    if (cfg.repository.startsWith("file://")) {
      const path = fileURLToPath(cfg.repository);
      const gitdir = existsSync(join(path, ".git")) ? join(path, ".git") : path;
      const ref = cfg.commit ?? cfg.tag ?? cfg.branch ?? "HEAD";
      const oid = cfg.commit ?? (await git.resolveRef({ fs, gitdir, ref }));
      const { blob } = await git.readBlob({ fs, gitdir, oid, filepath });
      return { data: withinSize(blob, opts.maxBytes), commit: oid };
    }
    if (!/^https?:\/\//.test(cfg.repository)) {
      throw new Error("only http(s):// and file:// repositories are supported");
    }
    const key = createHash("sha256").update(cfg.repository).digest("hex").slice(0, 16);
    const gitdir = join(opts.cacheDir, key);
    if (!existsSync(join(gitdir, "HEAD"))) {
      mkdirSync(gitdir, { recursive: true });
      await git.init({ fs, gitdir, bare: true });
    }
    await git.addRemote({ fs, gitdir, remote: "origin", url: cfg.repository, force: true });
    const auth = cfg.auth;
    const onAuth =
      auth === undefined
        ? undefined
        : () => ({
            username: auth.username,
            password:
              auth.passwordFile !== undefined
                ? readSecretFile(resolvePath(opts.baseDir, auth.passwordFile))
                : (auth.password ?? ""),
          });
    const ref = cfg.tag ?? cfg.branch;
    const result = await git.fetch({
      fs,
      http:
        opts.guard === undefined
          ? http
          : guardedGitHttp(opts.guard, opts.maxTransferBytes ?? DEFAULT_SYNC_LIMITS.maxTotalBytes),
      gitdir,
      remote: "origin",
      ...(ref !== undefined ? { ref } : {}),
      singleBranch: true,
      ...(cfg.commit === undefined ? { depth: 1 } : {}),
      tags: cfg.tag !== undefined,
      ...(onAuth !== undefined ? { onAuth } : {}),
    });
    const oid = cfg.commit ?? result.fetchHead;
    if (oid === null || oid === undefined) throw new Error("the remote has no such ref");
    const { blob } = await git.readBlob({ fs, gitdir, oid, filepath });
    return { data: withinSize(blob, opts.maxBytes), commit: oid };
  } catch (err) {
    if (err instanceof McpfleetError) throw err;
    throw new McpfleetError(
      "ERR_SYNC_FAILED",
      `git ${cfg.repository}${cfg.branch !== undefined ? ` branch ${cfg.branch}` : ""}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** A registry file read from Git, refused over the size limit as files and URLs are. */
function withinSize(blob: Uint8Array, maxBytes = MAX_FILE_BYTES): Buffer {
  if (blob.length > maxBytes) throw new Error(`the registry file is larger than ${maxBytes} bytes`);
  return Buffer.from(blob);
}

/**
 * The paths of another registry's server list under its base URL: `/v0/servers` as the spec
 * writes it, and `/v0.1/servers`, which the official registry also serves and some registries
 * serve alone.
 */
export const API_FORMS = ["/v0", "/v0.1"] as const;
export type ApiForm = (typeof API_FORMS)[number];

/** The form of a server-list path a source's status recorded (`/v0/servers`), if it is one. */
export function apiFormOf(path: string | undefined): ApiForm | undefined {
  return API_FORMS.find((f) => path === `${f}/servers`);
}

/** Answers of a registry that lacks a form: try the other one. */
function lacksForm(err: unknown): boolean {
  return err instanceof HttpStatusError && [404, 405, 501].includes(err.status);
}

/** One page of another registry's server list, and the form of its path. */
export interface ApiPage {
  items: unknown[];
  bytes: Buffer;
  form: ApiForm;
}

/**
 * Pages through `{endpoint}/v0/servers` (or `/v0.1/servers` when the endpoint answers only
 * that), one page in memory at a time, so a catalog of any size syncs in bounded memory.
 */
export async function* fetchApiPages(
  endpoint: string,
  opts: {
    pageSize?: number;
    signal?: AbortSignal;
    timeoutMs?: number;
    limits?: Partial<SyncLimits>;
    guard?: LocationPolicy;
    /** The form the endpoint answered on last time (from the source's status). */
    preferred?: ApiForm;
  } = {},
): AsyncGenerator<ApiPage> {
  const limits = { ...DEFAULT_SYNC_LIMITS, ...opts.limits };
  const base = endpoint.replace(/\/+$/, "");
  const preferred = opts.preferred;
  // The first page finds the form: the one that answered last, else the spec's, then the other.
  let forms: ApiForm[] =
    preferred === undefined
      ? [...API_FORMS]
      : [preferred, ...API_FORMS.filter((f) => f !== preferred)];
  let cursor: string | undefined;
  // Cursors seen, as hashes: an upstream handing out ever new long cursors must not grow this.
  const seen = new Set<string>();
  let total = 0;
  for (let page = 0; ; page++) {
    if (page >= limits.maxPages) {
      throw new McpfleetError("ERR_SYNC_FAILED", `more than ${limits.maxPages} pages`);
    }
    let u: URL;
    let bytes: Buffer | undefined;
    const tried: string[] = [];
    for (;;) {
      const form = forms[0] as ApiForm;
      u = new URL(`${base}${form}/servers`);
      u.searchParams.set("limit", String(opts.pageSize ?? 100));
      if (cursor !== undefined) u.searchParams.set("cursor", cursor);
      try {
        bytes = await httpGet(u, {
          headers: { accept: "application/json" },
          // The sync's deadline and cancellation, and a time limit per page (a timer cleared
          // when the page is read: none is left pending behind every page).
          ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
          deadlineMs: opts.timeoutMs ?? 60_000,
          maxBytes: Math.min(limits.maxPageBytes, limits.maxTotalBytes - total + 1),
          ...(opts.guard !== undefined ? { guard: opts.guard } : {}),
        });
        break;
      } catch (err) {
        tried.push(`GET ${u.href}: ${(err as Error).message}`);
        // Only the first page may change the form: later pages follow the one that answered.
        if (page === 0 && forms.length > 1 && lacksForm(err)) {
          forms = forms.slice(1);
          continue;
        }
        throw new McpfleetError("ERR_SYNC_FAILED", tried.join("; "), { cause: err });
      }
    }
    const form = forms[0] as ApiForm;
    if (page === 0) forms = [form];
    total += bytes.length;
    if (total > limits.maxTotalBytes) {
      throw new McpfleetError("ERR_SYNC_FAILED", `the pages exceed ${limits.maxTotalBytes} bytes`);
    }
    let body: { servers?: unknown; metadata?: { nextCursor?: unknown } };
    try {
      body = JSON.parse(bytes.toString("utf8")) as typeof body;
    } catch {
      throw new McpfleetError("ERR_SYNC_FAILED", `GET ${u.href}: the answer is not JSON`);
    }
    if (!Array.isArray(body.servers)) {
      throw new McpfleetError("ERR_SYNC_FAILED", `GET ${u.href}: the answer has no servers list`);
    }
    yield { items: body.servers as unknown[], bytes, form };
    const next = body.metadata?.nextCursor;
    if (typeof next !== "string" || next === "") return;
    if (next.length > limits.maxCursorLength) {
      throw new McpfleetError(
        "ERR_SYNC_FAILED",
        `GET ${u.href}: a cursor longer than ${limits.maxCursorLength} characters`,
      );
    }
    const digest = createHash("sha256").update(next).digest("base64url");
    if (seen.has(digest)) {
      throw new McpfleetError("ERR_SYNC_FAILED", `GET ${u.href}: the cursor repeats`);
    }
    seen.add(digest);
    cursor = next;
  }
}

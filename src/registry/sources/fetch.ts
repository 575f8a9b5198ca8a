// Fetching a synced source's data: a file, a URL, or the pages of another registry's API (a
// git source's file is read through the git layer, see git.ts). Each returns bytes (or, for the API, pages one at a time).
import { createHash } from "node:crypto";
import { promises as fsp } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { McpfleetError } from "../../errors.js";
import { parseDuration } from "../../duration.js";
import { HttpStatusError, sendRequest } from "../../infra/http-client.js";
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

/** A page's JSON answer, which must carry a servers list. */
function parsePage(
  bytes: Buffer,
  u: URL,
): { servers: unknown[]; metadata?: { nextCursor?: unknown } } {
  let body: { servers?: unknown; metadata?: { nextCursor?: unknown } };
  try {
    body = JSON.parse(bytes.toString("utf8")) as typeof body;
  } catch {
    throw new McpfleetError("ERR_SYNC_FAILED", `GET ${u.href}: the answer is not JSON`);
  }
  if (!Array.isArray(body.servers)) {
    throw new McpfleetError("ERR_SYNC_FAILED", `GET ${u.href}: the answer has no servers list`);
  }
  return body as { servers: unknown[]; metadata?: { nextCursor?: unknown } };
}

/**
 * Refuses a next cursor that is too long or was handed out before (a loop), and records it.
 * Cursors are kept as hashes: an upstream handing out ever new long cursors must not grow `seen`.
 */
function admitCursor(next: string, u: URL, maxLength: number, seen: Set<string>): void {
  if (next.length > maxLength) {
    throw new McpfleetError(
      "ERR_SYNC_FAILED",
      `GET ${u.href}: a cursor longer than ${maxLength} characters`,
    );
  }
  const digest = createHash("sha256").update(next).digest("base64url");
  if (seen.has(digest)) {
    throw new McpfleetError("ERR_SYNC_FAILED", `GET ${u.href}: the cursor repeats`);
  }
  seen.add(digest);
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
    const body = parsePage(bytes, u);
    yield { items: body.servers, bytes, form };
    const next = body.metadata?.nextCursor;
    if (typeof next !== "string" || next === "") return;
    admitCursor(next, u, limits.maxCursorLength, seen);
    cursor = next;
  }
}

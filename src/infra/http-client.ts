// The one outgoing HTTP client of the registry (source fetches, identity providers): every
// request has a deadline for the whole exchange, an idle timeout, a size limit on the answer
// (counted after decompression, so a gzip bomb stops at the limit), an optional trusted CA,
// cancellation by AbortSignal, and, unless the caller allows them, no connection to a private
// or loopback address, checked after DNS resolution. Built on node:http(s) rather than fetch:
// fetch's web streams cost several times the body in short-lived objects, which a sync of
// thousands of pages turns into resident memory.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { isIP, type LookupFunction } from "node:net";
import type { Readable, Transform } from "node:stream";
import { McpfleetError, type ErrorCode } from "../errors.js";
import { nodeHttp, nodeHttps } from "./node-http.js";
import { isPrivateAddress } from "./private-address.js";

/** Why a request failed in the client rather than on the network. */
export type OutgoingHttpFailure =
  | "protocol"
  | "refused"
  | "private-address"
  | "redirects"
  | "deadline"
  | "idle"
  | "aborted"
  | "too-large"
  | "encoding";

export class OutgoingHttpError extends McpfleetError {
  constructor(
    readonly failure: OutgoingHttpFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super("ERR_OUTGOING_HTTP", message, options);
    this.name = "OutgoingHttpError";
  }
}

/** An answer outside what the caller accepts (after redirects). */
export class HttpStatusError extends Error {
  readonly code = "ERR_UPSTREAM_STATUS" satisfies ErrorCode;
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
    this.name = "HttpStatusError";
  }
}

export interface OutgoingRequest {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: Buffer;
  /** Cancels the request, whatever stage it is at. */
  signal?: AbortSignal;
  /** Time limit of the whole exchange, redirects and body included, in milliseconds. */
  deadlineMs?: number;
  /** Longest silence from the server, in milliseconds. */
  idleTimeoutMs?: number;
  /** Largest answer body in bytes, decompressed. */
  maxBytes: number;
  /** Asks for and decodes a gzip, deflate or br body. */
  decompress?: boolean;
  /** PEM bundle trusted for TLS (instead of the system's). */
  ca?: string;
  /** Whether private, loopback and link-local addresses may be connected to. */
  allowPrivateAddresses: boolean;
  /** Redirects followed (default 0: a 3xx is the answer); credentials stay with the first origin. */
  maxRedirects?: number;
  /** Refuses a URL, the first or a redirect's, with the reason returned. */
  checkUrl?: (url: URL) => string | undefined;
  /** Statuses whose body is read; others fail with HttpStatusError (default: all are read). */
  acceptStatus?: (status: number) => boolean;
  /** A connection of its own rather than one from the keep-alive pool. */
  ownConnection?: boolean;
}

export interface OutgoingAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: URL;
}

/** Headers not sent on to another origin when a redirect leaves the first one. */
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);

/** A DNS lookup that refuses private and loopback answers unless `allowPrivate`. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err !== null) {
        callback(err, "", 0);
        return;
      }
      const bad = addresses.find((a) => isPrivateAddress(a.address));
      if (!allowPrivate && bad !== undefined) {
        const why = `${hostname} resolves to a private address (${bad.address})`;
        callback(new OutgoingHttpError("private-address", why), "", 0);
        return;
      }
      if (options.all === true) {
        callback(null, addresses);
        return;
      }
      const first = addresses[0];
      if (first === undefined) {
        callback(new OutgoingHttpError("private-address", `${hostname} has no address`), "", 0);
      } else callback(null, first.address, first.family);
    });
  };
}

/** Why `url` may not be requested at all, before any connection. */
function urlRefusal(url: URL, opts: OutgoingRequest): OutgoingHttpError | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return new OutgoingHttpError("protocol", `unsupported protocol ${url.protocol}`);
  }
  const refused = opts.checkUrl?.(url);
  if (refused !== undefined) return new OutgoingHttpError("refused", `refused: ${refused}`);
  // An IP literal is connected to without a lookup: check it here.
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!opts.allowPrivateAddresses && isIP(host) !== 0 && isPrivateAddress(host)) {
    return new OutgoingHttpError("private-address", `${url.host} is a private address`);
  }
  return undefined;
}

/**
 * Sends one request and reads its answer into one Buffer. Fails with OutgoingHttpError when the
 * client stops it (limits, deadline, cancellation, guard), with HttpStatusError for a status
 * `acceptStatus` refuses, and with the network's own error otherwise.
 */
export async function sendRequest(url: URL, opts: OutgoingRequest): Promise<OutgoingAnswer> {
  // One controller stops everything: the caller's signal, the deadline, and the first failure.
  const stop = new AbortController();
  const fail = (err: OutgoingHttpError): void => {
    if (!stop.signal.aborted) stop.abort(err);
  };
  const cancelled = (): void => {
    const reason: unknown = opts.signal?.reason;
    const why = reason instanceof Error ? reason.message : "the request was cancelled";
    fail(new OutgoingHttpError("aborted", why, { cause: reason }));
  };
  if (opts.signal?.aborted === true) cancelled();
  opts.signal?.addEventListener("abort", cancelled, { once: true });
  const deadlineMs = opts.deadlineMs;
  const timer =
    deadlineMs === undefined
      ? undefined
      : setTimeout(
          () => fail(new OutgoingHttpError("deadline", `no complete answer in ${deadlineMs} ms`)),
          deadlineMs,
        );
  try {
    return await exchange(url, opts, stop.signal, fail);
  } catch (err) {
    // Whatever the stream said when it was cut, the reason it was cut is the error.
    if (stop.signal.aborted) throw stop.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", cancelled);
  }
}

async function exchange(
  first: URL,
  opts: OutgoingRequest,
  signal: AbortSignal,
  fail: (err: OutgoingHttpError) => void,
): Promise<OutgoingAnswer> {
  const maxRedirects = opts.maxRedirects ?? 0;
  let headers: OutgoingHttpHeaders = {
    ...(opts.decompress === true ? { "accept-encoding": "gzip, deflate, br" } : {}),
    ...opts.headers,
  };
  if (opts.body !== undefined) headers["content-length"] = String(opts.body.length);
  const lookup = opts.allowPrivateAddresses ? undefined : guardedLookup(false);
  let url = first;
  for (let hop = 0; ; hop++) {
    const refusal = urlRefusal(url, opts);
    if (refusal !== undefined) throw refusal;
    signal.throwIfAborted();
    const res = await open(url, opts, headers, lookup, signal, fail);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (maxRedirects > 0 && status >= 300 && status < 400 && location !== undefined) {
      res.resume();
      if (hop >= maxRedirects) {
        throw new OutgoingHttpError("redirects", `more than ${maxRedirects} redirects`);
      }
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        headers = Object.fromEntries(
          Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase())),
        );
      }
      url = next;
      continue;
    }
    if (opts.acceptStatus !== undefined && !opts.acceptStatus(status)) {
      res.resume();
      throw new HttpStatusError(status);
    }
    const body = await readBody(res, opts, signal);
    return { status, headers: res.headers, body, url };
  }
}

function open(
  url: URL,
  opts: OutgoingRequest,
  headers: OutgoingHttpHeaders,
  lookup: LookupFunction | undefined,
  signal: AbortSignal,
  fail: (err: OutgoingHttpError) => void,
): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const secure = url.protocol === "https:";
    const req = (secure ? nodeHttps() : nodeHttp()).request(
      url,
      {
        method: opts.method ?? "GET",
        headers,
        signal,
        ...(lookup !== undefined ? { lookup } : {}),
        ...(secure && opts.ca !== undefined ? { ca: opts.ca } : {}),
        ...(opts.ownConnection === true ? { agent: false } : {}),
      },
      resolve,
    );
    const idleMs = opts.idleTimeoutMs;
    if (idleMs !== undefined) {
      // The socket's inactivity timer runs while the body streams in, too.
      req.setTimeout(idleMs, () =>
        fail(new OutgoingHttpError("idle", `no byte from the server in ${idleMs} ms`)),
      );
    }
    req.once("error", reject);
    req.end(opts.body);
  });
}

function decoderFor(encoding: string): Transform | undefined {
  // node:zlib only when an answer is compressed: most never are, and it costs a start 2 ms.
  const zlib = () => process.getBuiltinModule("node:zlib");
  if (encoding === "gzip" || encoding === "x-gzip") return zlib().createGunzip();
  if (encoding === "deflate") return zlib().createInflate();
  if (encoding === "br") return zlib().createBrotliDecompress();
  return undefined;
}

async function readBody(
  res: IncomingMessage,
  opts: OutgoingRequest,
  signal: AbortSignal,
): Promise<Buffer> {
  const maxBytes = opts.maxBytes;
  const tooLarge = (): OutgoingHttpError =>
    new OutgoingHttpError("too-large", `larger than ${maxBytes} bytes`);
  if (Number(res.headers["content-length"] ?? 0) > maxBytes) {
    res.destroy();
    throw tooLarge();
  }
  const onAbort = (): void => {
    res.destroy();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  let body: Readable = res;
  const encoding = (res.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (opts.decompress === true && encoding !== "identity" && encoding !== "") {
    const decoder = decoderFor(encoding);
    if (decoder === undefined) {
      res.destroy();
      signal.removeEventListener("abort", onAbort);
      throw new OutgoingHttpError("encoding", `unsupported content-encoding ${encoding}`);
    }
    res.once("error", (err) => decoder.destroy(err));
    res.once("close", () => {
      if (!res.complete) decoder.destroy(new Error("the answer was cut off"));
    });
    body = res.pipe(decoder);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw tooLarge();
      chunks.push(chunk);
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    if (size > maxBytes || !res.complete) res.destroy();
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
}

// isomorphic-git's HTTP client, with what a controller needs around it: an https agent (a
// private CA), fixed headers (credentials), an idle timeout on the socket and a signal that
// cancels the request in flight (the operation's deadline, or the controller stopping). A server
// that accepts the connection and never answers fails the request instead of holding it forever.
import * as http from "node:http";
import * as https from "node:https";
import type { GitHttpRequest, GitHttpResponse, HttpClient } from "isomorphic-git/http/node";

export interface HttpClientOptions {
  agent?: https.Agent | undefined;
  headers: () => Record<string, string>;
  /** A socket silent this long fails the request. */
  idleTimeoutMs: number;
  /** The signal of the operation in flight: aborting it cancels its request. */
  signal: () => AbortSignal | undefined;
}

/** An error with the code gitError() maps to ERR_GIT_UNREACHABLE. */
function timedOut(ms: number): Error {
  return Object.assign(new Error(`no data for ${Math.round(ms / 1000)} s`), { code: "ETIMEDOUT" });
}

async function collect(body: GitHttpRequest["body"]): Promise<Buffer | undefined> {
  if (body === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks);
}

export function httpClient(opts: HttpClientOptions): HttpClient {
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const url = new URL(req.url);
      const body = await collect(req.body);
      const signal = opts.signal();
      signal?.throwIfAborted();
      const secure = url.protocol === "https:";
      return new Promise((resolve, reject) => {
        const r = (secure ? https : http).request(
          url,
          {
            method: req.method ?? "GET",
            headers: { ...req.headers, ...opts.headers() },
            ...(secure && opts.agent !== undefined ? { agent: opts.agent } : {}),
            timeout: opts.idleTimeoutMs,
            ...(signal !== undefined ? { signal } : {}),
          },
          (res) => {
            const headers: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers)) {
              if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
            }
            resolve({
              url: req.url,
              method: req.method ?? "GET",
              statusCode: res.statusCode ?? 0,
              statusMessage: res.statusMessage ?? "",
              headers,
              body: res[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array>,
            });
          },
        );
        r.on("timeout", () => r.destroy(timedOut(opts.idleTimeoutMs)));
        r.on("error", reject);
        r.end(body);
      });
    },
  };
}

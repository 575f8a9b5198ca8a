// HTTP calls to identity providers (discovery, JWKS, introspection) through the shared outgoing
// client: a trusted CA when caCertPath is set, a bearer token from authTokenFile, a time limit,
// a size limit on answers, and private or loopback addresses refused after DNS resolution unless
// the provider allows them.
import { readFileSync } from "node:fs";
import { McpfleetError } from "../../errors.js";
import { OutgoingHttpError, sendRequest } from "../../infra/http-client.js";

export interface ProviderHttpOptions {
  /** PEM bundle trusted for the provider's TLS. */
  ca?: string;
  /** Read on every call (service-account tokens rotate). */
  authTokenFile?: string;
  allowPrivateIP: boolean;
  timeoutMs: number;
  /** Largest answer body in bytes. */
  maxBytes: number;
}

export class ProviderFetchError extends McpfleetError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("ERR_IDENTITY_PROVIDER", message, options);
    this.name = "ProviderFetchError";
  }
}

export interface ProviderResponse {
  status: number;
  body: unknown;
}

/** The client's refusal, said as a provider call says it. */
function providerFailure(url: string, opts: ProviderHttpOptions, err: unknown): unknown {
  if (!(err instanceof OutgoingHttpError)) return err;
  const message =
    err.failure === "too-large"
      ? `${url}: answer larger than ${opts.maxBytes} bytes`
      : err.failure === "deadline" || err.failure === "idle"
        ? `${url}: no answer in ${opts.timeoutMs} ms`
        : err.message;
  return new ProviderFetchError(message, { cause: err });
}

/** One request to a provider; the answer must be JSON. */
export async function providerRequest(
  url: string,
  opts: ProviderHttpOptions,
  init: { method?: "GET" | "POST"; form?: Record<string, string>; basic?: [string, string] } = {},
): Promise<ProviderResponse> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ProviderFetchError(`not a URL: ${url}`);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") {
    throw new ProviderFetchError(`${url}: only http and https are used`);
  }
  const headers: Record<string, string> = { accept: "application/json" };
  if (init.basic !== undefined) {
    const [id, secret] = init.basic;
    const enc = (s: string): string => encodeURIComponent(s);
    headers.authorization = `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString("base64")}`;
  } else if (opts.authTokenFile !== undefined) {
    headers.authorization = `Bearer ${readFileSync(opts.authTokenFile, "utf8").trim()}`;
  }
  let payload: Buffer | undefined;
  if (init.form !== undefined) {
    payload = Buffer.from(new URLSearchParams(init.form).toString());
    headers["content-type"] = "application/x-www-form-urlencoded";
  }
  let answer;
  try {
    answer = await sendRequest(u, {
      method: init.method ?? "GET",
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
      deadlineMs: opts.timeoutMs,
      idleTimeoutMs: opts.timeoutMs,
      maxBytes: opts.maxBytes,
      ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
      allowPrivateAddresses: opts.allowPrivateIP,
      ownConnection: true,
    });
  } catch (err) {
    throw providerFailure(url, opts, err);
  }
  try {
    return { status: answer.status, body: JSON.parse(answer.body.toString("utf8")) as unknown };
  } catch {
    throw new ProviderFetchError(`${url}: answer is not JSON (HTTP ${answer.status})`);
  }
}

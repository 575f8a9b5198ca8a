// Retrying Kubernetes API calls: exponential backoff with full jitter (a random delay between 0
// and min(cap, base * 2^attempt)), on the errors that go away by themselves: 409 conflicts, 429
// throttling (honouring Retry-After) and 5xx.

/** What failed before a retry: the attempt (1-based), the delay chosen, the error. */
export interface RetryInfo {
  attempt: number;
  delayMs: number;
  status: number | undefined;
  error?: unknown;
}

export interface BackoffOptions {
  /** First delay bound in milliseconds. */
  baseMs: number;
  /** Largest delay in milliseconds, Retry-After included. */
  capMs: number;
  /** Attempts in all, the first one included. */
  maxAttempts: number;
  /** [0, 1) source of randomness; Math.random by default. */
  random?: () => number;
  /** Waits; a timer by default (tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
  /** Called before each retry with the attempt that failed (1-based) and the delay chosen. */
  onRetry?: (info: RetryInfo) => void;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 200, capMs: 30_000, maxAttempts: 6 };

/** Full-jitter delay before retry number `attempt` (0-based). */
export function backoffDelay(
  attempt: number,
  opts: Pick<BackoffOptions, "baseMs" | "capMs" | "random">,
): number {
  const bound = Math.min(opts.capMs, opts.baseMs * 2 ** Math.max(0, attempt));
  return Math.floor((opts.random ?? Math.random)() * bound);
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or bad. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, t - now);
}

/** HTTP statuses worth retrying: conflicts, throttling and server errors. */
export function isRetryableStatus(status: number | undefined): boolean {
  return status === 409 || status === 429 || (status !== undefined && status >= 500);
}

/** The HTTP status and Retry-After of an API error, whatever client threw it. */
export function errorStatus(err: unknown): { status?: number; retryAfter?: string } {
  if (typeof err !== "object" || err === null) return {};
  const e = err as {
    status?: unknown;
    statusCode?: unknown;
    code?: unknown;
    headers?: unknown;
    response?: { status?: unknown; headers?: unknown };
  };
  const candidates = [e.status, e.statusCode, e.code, e.response?.status];
  const status = candidates.find((c): c is number => typeof c === "number" && c >= 100 && c < 600);
  const headers = e.headers ?? e.response?.headers;
  let retryAfter: string | undefined;
  if (headers instanceof Headers) retryAfter = headers.get("retry-after") ?? undefined;
  else if (typeof headers === "object" && headers !== null) {
    for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
      if (k.toLowerCase() === "retry-after" && typeof v === "string") retryAfter = v;
    }
  }
  return {
    ...(status !== undefined ? { status } : {}),
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  };
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn`, retrying retryable API errors with full-jitter backoff. A 429's Retry-After is a
 * floor for the delay (capped). Other errors, and the last failure, are thrown as they are.
 */
export async function withBackoff<T>(
  fn: (attempt: number) => Promise<T>,
  options: Partial<BackoffOptions> = {},
): Promise<T> {
  const opts: BackoffOptions = { ...DEFAULT_BACKOFF, ...options };
  const sleep = opts.sleep ?? realSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      const { status, retryAfter } = errorStatus(err);
      if (!isRetryableStatus(status) || attempt >= opts.maxAttempts) throw err;
      let delay = backoffDelay(attempt - 1, opts);
      const floor = status === 429 ? parseRetryAfter(retryAfter) : undefined;
      if (floor !== undefined) delay = Math.min(opts.capMs, Math.max(delay, floor));
      opts.onRetry?.({ attempt, delayMs: delay, status, error: err });
      await sleep(delay);
    }
  }
}

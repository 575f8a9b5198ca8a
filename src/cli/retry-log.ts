// One line per retried Kubernetes API request, for `-v`: what failed and when it is tried again.
import type { RetryInfo } from "../controller/backoff.js";

export function retryLine(r: RetryInfo): string {
  const reason = r.error instanceof Error ? r.error.message : `HTTP ${r.status ?? "error"}`;
  return `retry: attempt ${r.attempt} failed (${reason}); trying again in ${r.delayMs} ms`;
}

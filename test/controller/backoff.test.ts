import { describe, expect, it } from "vitest";
import {
  backoffDelay,
  errorStatus,
  isRetryableStatus,
  parseRetryAfter,
  withBackoff,
} from "../../src/controller/backoff.js";

class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${code}`);
  }
}

describe("backoffDelay", () => {
  it("grows exponentially up to the cap, with full jitter below the bound", () => {
    const top = () => 0.999999;
    expect(backoffDelay(0, { baseMs: 100, capMs: 10_000, random: top })).toBe(99);
    expect(backoffDelay(3, { baseMs: 100, capMs: 10_000, random: top })).toBe(799);
    expect(backoffDelay(20, { baseMs: 100, capMs: 10_000, random: top })).toBe(9999);
    expect(backoffDelay(5, { baseMs: 100, capMs: 10_000, random: () => 0 })).toBe(0);
    expect(backoffDelay(2, { baseMs: 100, capMs: 10_000, random: () => 0.5 })).toBe(200);
  });
});

describe("Retry-After and statuses", () => {
  it("parses delta-seconds and HTTP dates, and ignores garbage", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });

  it("retries 409, 429 and 5xx only", () => {
    expect([409, 429, 500, 503].map(isRetryableStatus)).toEqual([true, true, true, true]);
    expect([400, 401, 404, 422, undefined].map(isRetryableStatus)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("reads the status and Retry-After from client errors of several shapes", () => {
    expect(errorStatus(new ApiError(429, { "Retry-After": "2" }))).toEqual({
      status: 429,
      retryAfter: "2",
    });
    expect(
      errorStatus({ response: { status: 503, headers: new Headers({ "retry-after": "1" }) } }),
    ).toEqual({
      status: 503,
      retryAfter: "1",
    });
    expect(errorStatus({ statusCode: 409 })).toEqual({ status: 409 });
    expect(errorStatus(new Error("ECONNRESET"))).toEqual({});
  });
});

describe("withBackoff", () => {
  it("retries until success, sleeping a jittered delay each time", async () => {
    const sleeps: number[] = [];
    let calls = 0;
    const result = await withBackoff(
      () => {
        calls++;
        if (calls < 4) return Promise.reject(new ApiError(calls === 1 ? 409 : 500));
        return Promise.resolve("done");
      },
      {
        baseMs: 100,
        capMs: 1000,
        random: () => 0.5,
        sleep: (ms) => Promise.resolve(void sleeps.push(ms)),
      },
    );
    expect(result).toBe("done");
    expect(calls).toBe(4);
    expect(sleeps).toEqual([50, 100, 200]);
  });

  it("honours a 429's Retry-After as a floor, capped", async () => {
    const sleeps: number[] = [];
    let calls = 0;
    await withBackoff(
      () => {
        calls++;
        if (calls === 1) return Promise.reject(new ApiError(429, { "retry-after": "2" }));
        if (calls === 2) return Promise.reject(new ApiError(429, { "retry-after": "3600" }));
        return Promise.resolve(undefined);
      },
      {
        baseMs: 100,
        capMs: 5000,
        random: () => 0,
        sleep: (ms) => Promise.resolve(void sleeps.push(ms)),
      },
    );
    expect(sleeps).toEqual([2000, 5000]);
  });

  it("does not retry client errors, and gives up after maxAttempts", async () => {
    let calls = 0;
    const notFound = withBackoff(
      () => {
        calls++;
        return Promise.reject(new ApiError(404));
      },
      { sleep: async () => {} },
    );
    await expect(notFound).rejects.toThrow("HTTP 404");
    expect(calls).toBe(1);

    calls = 0;
    const retries: number[] = [];
    const down = withBackoff(
      () => {
        calls++;
        return Promise.reject(new ApiError(503));
      },
      { maxAttempts: 3, sleep: async () => {}, onRetry: (i) => retries.push(i.attempt) },
    );
    await expect(down).rejects.toThrow("HTTP 503");
    expect(calls).toBe(3);
    expect(retries).toEqual([1, 2]);
  });
});

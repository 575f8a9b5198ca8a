import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  Scheduler,
  checkCron,
  parseInterval,
  type RunReason,
} from "../../src/controller/schedule.js";

/** A run that stays in flight until released. */
function gate() {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

describe("Scheduler", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-03-01T10:00:30Z"));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("runs at start, then every interval plus jitter", async () => {
    const reasons: RunReason[] = [];
    const s = new Scheduler({
      intervalMs: 60_000,
      jitterMs: 10_000,
      random: () => 0.5,
      run: (r) => Promise.resolve(void reasons.push(r)),
    });
    s.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(reasons).toEqual(["start"]);
    await vi.advanceTimersByTimeAsync(64_999);
    expect(reasons).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(reasons).toEqual(["start", "schedule"]);
    await vi.advanceTimersByTimeAsync(65_000);
    expect(reasons).toHaveLength(3);
    await s.stop();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(reasons).toHaveLength(3);
  });

  it("follows a cron expression", async () => {
    const times: string[] = [];
    const s = new Scheduler({
      cron: "*/5 * * * *",
      runAtStart: false,
      run: () => Promise.resolve(void times.push(new Date().toISOString())),
    });
    s.start();
    await vi.advanceTimersByTimeAsync(11 * 60_000);
    expect(times).toEqual(["2026-03-01T10:05:00.000Z", "2026-03-01T10:10:00.000Z"]);
    await s.stop();
  });

  it("never runs twice at once: triggers during a run coalesce into one more run", async () => {
    let active = 0;
    let maxActive = 0;
    const gates: ReturnType<typeof gate>[] = [];
    const s = new Scheduler({
      intervalMs: 3_600_000,
      runAtStart: false,
      run: async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        const g = gate();
        gates.push(g);
        await g.promise;
        active--;
      },
    });
    s.start();
    const first = s.trigger();
    await vi.advanceTimersByTimeAsync(0);
    expect(s.running).toBe(true);
    let secondDone = false;
    const more = [s.trigger(), s.trigger(), s.trigger()];
    void Promise.all(more).then(() => (secondDone = true));
    gates[0]!.release();
    await first;
    await vi.advanceTimersByTimeAsync(0);
    expect(gates).toHaveLength(2);
    expect(secondDone).toBe(false);
    gates[1]!.release();
    await Promise.all(more);
    expect(s.runs).toBe(2);
    expect(maxActive).toBe(1);
    await s.stop();
  });

  it("a trigger resets the interval, and a failing run does not stop the schedule", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const s = new Scheduler({
      intervalMs: 10_000,
      runAtStart: false,
      random: () => 0.5,
      run: () => {
        calls++;
        return calls === 2 ? Promise.reject(new Error("boom")) : Promise.resolve();
      },
      onError: (e) => errors.push(e),
    });
    s.start();
    await vi.advanceTimersByTimeAsync(6_000);
    await s.trigger();
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
    // The failure is retried after half the 5s retry bound (random 0.5), not a whole interval.
    await vi.advanceTimersByTimeAsync(2_499);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(3);
    // Back to the regular interval after a success.
    await vi.advanceTimersByTimeAsync(9_999);
    expect(calls).toBe(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(4);
    await s.stop();
  });

  it("after a failed run retries sooner, with growing backoff, until a success", async () => {
    const at: number[] = [];
    const start = Date.now();
    let calls = 0;
    const s = new Scheduler({
      intervalMs: 3_600_000,
      retryBaseMs: 4000,
      random: () => 0.999,
      run: () => {
        at.push(Date.now() - start);
        calls++;
        return Promise.resolve(calls <= 3 ? { retry: true as const } : undefined);
      },
    });
    s.start();
    await vi.advanceTimersByTimeAsync(60_000);
    // Full jitter near its bound: ~4s, ~8s, ~16s after each failure, then the regular hour.
    expect(at).toHaveLength(4);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(3900);
    expect(at[1]! - at[0]!).toBeLessThanOrEqual(4000);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(7900);
    expect(at[3]! - at[2]!).toBeGreaterThanOrEqual(15_900);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(at).toHaveLength(5);
    expect(at[4]! - at[3]!).toBeGreaterThanOrEqual(3_600_000);
    await s.stop();
  });

  it("never retries later than the regular schedule, and at least a second apart", async () => {
    const at: number[] = [];
    const s = new Scheduler({
      intervalMs: 10_000,
      retryBaseMs: 60_000,
      random: () => 0,
      run: () => {
        at.push(Date.now());
        return Promise.reject(new Error("down"));
      },
      onError: () => {},
    });
    s.start();
    await vi.advanceTimersByTimeAsync(5_500);
    expect(at).toHaveLength(6);
    expect(at[1]! - at[0]!).toBe(1000);
    await s.stop();
  });

  it("stop waits for the run in flight and drops pending ones", async () => {
    const g = gate();
    let calls = 0;
    let finished = false;
    const s = new Scheduler({
      intervalMs: 1000,
      run: async () => {
        calls++;
        await g.promise;
        finished = true;
      },
    });
    s.start();
    await vi.advanceTimersByTimeAsync(0);
    const pending = s.trigger();
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    g.release();
    await stopping;
    await pending;
    expect(finished).toBe(true);
    expect(calls).toBe(1);
    await s.trigger();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toBe(1);
  });
});

describe("schedule flags", () => {
  it("accepts Go-style durations of at least one second", () => {
    expect(parseInterval("1m")).toBe(60_000);
    expect(parseInterval("1h30m")).toBe(5_400_000);
    expect(parseInterval("1.5s")).toBe(1500);
    for (const bad of ["", "5", "1 m", "1d", "-1m", "1M", "m"]) {
      expect(() => parseInterval(bad), bad).toThrow(/--interval/);
    }
    expect(() => parseInterval("500ms")).toThrow(/at least 1s/);
  });

  it("checks cron expressions", () => {
    expect(() => checkCron("*/5 * * * *")).not.toThrow();
    expect(() => checkCron("0 0 * * * *")).not.toThrow();
    expect(() => checkCron("every minute")).toThrow(/--schedule/);
    expect(() => checkCron("61 * * * *")).toThrow(/not a cron expression/);
    expect(() => new Scheduler({ run: async () => {} })).toThrow(/exactly one/);
    expect(
      () => new Scheduler({ intervalMs: 1000, cron: "* * * * *", run: async () => {} }),
    ).toThrow(/exactly one/);
  });
});

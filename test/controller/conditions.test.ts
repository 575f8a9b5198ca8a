// The one condition helper: transition times move only when a condition's status does.
import { describe, expect, it } from "vitest";
import {
  type Condition,
  conditionTime,
  patchCondition,
  setCondition,
  timed,
} from "../../src/controller/conditions.js";

describe("conditions", () => {
  const earlier = "2026-01-01T00:00:00Z";
  const now = "2026-02-02T00:00:00Z";
  const previous: Condition[] = [
    { type: "Ready", status: "True", reason: "Ready", message: "up", lastTransitionTime: earlier },
    { type: "Stalled", status: "False", reason: "Ok", message: "", lastTransitionTime: earlier },
  ];

  it("keeps lastTransitionTime when the status is unchanged, whatever the reason says", () => {
    const next = timed(
      [
        { type: "Ready", status: "True", reason: "StillReady", message: "still up" },
        { type: "Stalled", status: "True", reason: "RolloutTimeout", message: "slow" },
        { type: "Reconciling", status: "False", reason: "Done", message: "" },
      ],
      previous,
      now,
    );
    expect(next.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ["Ready", earlier],
      ["Stalled", now],
      ["Reconciling", now],
    ]);
    expect(next[0]).toMatchObject({ reason: "StillReady", message: "still up" });
    expect(timed(previous, undefined, now).every((c) => c.lastTransitionTime === now)).toBe(true);
  });

  it("sets one condition by type at the end, or patches it where it stands", () => {
    const set = setCondition(previous, { ...previous[0]!, status: "False" });
    expect(set.map((c) => `${c.type}=${c.status}`)).toEqual(["Stalled=False", "Ready=False"]);
    const patched = patchCondition(previous, "Ready", { status: "False", reason: "Down" });
    expect(patched.map((c) => `${c.type}=${c.status}`)).toEqual(["Ready=False", "Stalled=False"]);
    expect(patched[0]).toMatchObject({ reason: "Down", message: "up" });
    expect(conditionTime(new Date("2026-03-03T01:02:03.456Z"))).toBe("2026-03-03T01:02:03Z");
  });
});

// Status conditions as the controller writes and reads them: one type (the schemas' Condition,
// shared with synthesis) and the helpers that build them. lastTransitionTime follows the
// Kubernetes API conventions: it moves only when a condition's status changes, so a condition
// rewritten with a new reason or message keeps the time it last flipped.
import type { Condition } from "../../generated/types.js";

export type { Condition };

/** A condition before it is written: its transition time is decided by `timed`. */
export type ConditionInput = Omit<Condition, "lastTransitionTime"> & {
  lastTransitionTime?: string;
};

/** A condition read from a live object: any field may be missing. */
export type LiveCondition = Partial<Condition>;

/** Now, to the second, as Kubernetes writes metav1.Time. */
export function conditionTime(now: Date = new Date()): string {
  return now.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * `conditions` with their transition times: a condition whose status is the same as the one of
 * its type in `previous` keeps that one's time; any other is stamped `now`.
 */
export function timed(
  conditions: readonly ConditionInput[],
  previous: readonly Condition[] | undefined,
  now: string,
): Condition[] {
  return conditions.map((c) => {
    const before = previous?.find((b) => b.type === c.type);
    return {
      ...c,
      lastTransitionTime:
        before !== undefined && before.status === c.status ? before.lastTransitionTime : now,
    };
  });
}

/** The conditions with `next` in place of the one of its type, or added after them. */
export function setCondition<C extends ConditionInput>(conditions: readonly C[], next: C): C[] {
  const out = conditions.filter((c) => c.type !== next.type);
  return [...out, next];
}

/** The conditions with the one of `type` changed by `patch`, where it stands (absent: as they were). */
export function patchCondition<C extends ConditionInput>(
  conditions: readonly C[],
  type: string,
  patch: Partial<ConditionInput>,
): C[] {
  return conditions.map((c) => (c.type === type ? { ...c, ...patch } : c));
}

/** The conditions of a status object (synthesis's computed status, or a live one). */
export function conditionsOf<C extends LiveCondition = ConditionInput>(
  status: { conditions?: unknown } | undefined,
): C[] {
  return (status?.conditions as C[] | undefined) ?? [];
}

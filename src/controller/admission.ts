// Checks every object of a revision must pass before anything of it is written: namespace
// confinement (tenancy.ts) and any other policy a deployment adds. Each check sees each planned
// object and says why it refuses it; one refusal refuses the whole revision, as an invalid
// resource does, so a commit is applied entirely or not at all.
import { McpfleetError } from "../errors.js";
import type { KubeObject } from "../synth/model.js";
import { objectName } from "./applier.js";
import type { PlannedObject } from "./revision-plan.js";

/** Why `object` may not be applied, or undefined when this check admits it. */
export type AdmissionCheck = (object: KubeObject) => string | undefined;

export interface Refusal {
  /** `Kind namespace/name`. */
  object: string;
  reason: string;
}

/**
 * Every refusal of every check, in plan order. What the plan derives from a refused resource (its
 * workloads, the Namespace it lives in) is not named again: one line per thing the author wrote.
 */
export function admit(
  plan: readonly PlannedObject[],
  checks: readonly AdmissionCheck[],
): Refusal[] {
  if (checks.length === 0) return [];
  const found: { p: PlannedObject; reason: string }[] = [];
  for (const p of plan) {
    for (const check of checks) {
      const reason = check(p.object);
      if (reason !== undefined) found.push({ p, reason });
    }
  }
  const refused = new Set(found.filter((f) => f.p.stage !== "namespaces").map((f) => f.p.key));
  const namespaces = new Set(
    found.filter((f) => refused.has(f.p.key)).map((f) => f.p.object.metadata.namespace),
  );
  return found
    .filter(({ p }) => !(p.owner !== undefined && refused.has(p.owner)))
    .filter(({ p }) => !(p.stage === "namespaces" && namespaces.has(p.object.metadata.name)))
    .map(({ p, reason }) => ({ object: objectName(p.object), reason }));
}

/** A revision with objects the admission checks refused; nothing of it was written. */
export class AdmissionRefusedError extends McpfleetError {
  readonly refusals: readonly Refusal[];

  constructor(refusals: readonly Refusal[]) {
    const first = refusals[0];
    super(
      "ERR_REFUSED",
      `${refusals.length} object(s) refused${
        first !== undefined ? `, first ${first.object}: ${first.reason}` : ""
      }`,
    );
    this.refusals = refusals;
  }
}

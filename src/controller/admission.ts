// What an admission check is and what a refusal says. Checks (namespace confinement in
// tenancy.ts, any other policy a deployment adds) each see every planned object and say why they
// refuse it; admitPlan (revision-plan.ts) runs them once per revision, before any target sees it,
// and one refusal refuses the whole revision, as an invalid resource does.
import { McpfleetError } from "../errors.js";
import type { KubeObject } from "../synth/model.js";

/** Why `object` may not be applied, or undefined when this check admits it. */
export type AdmissionCheck = (object: KubeObject) => string | undefined;

export interface Refusal {
  /** `Kind namespace/name`. */
  object: string;
  reason: string;
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

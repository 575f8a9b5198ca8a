// The same MCPRegistry forms rendered with --registry-server=toolhive: the pods run the
// reference's registry server, built from ../shared/peers (test/synth/registry-forms.ts says how
// a pod is run, and what each form expects of that server).
import { describe, it } from "vitest";
import {
  haveReference,
  OURS,
  REFERENCE_FORMS,
  referenceMissing,
  runForm,
  usePods,
} from "./registry-forms.js";

describe.skipIf(referenceMissing !== undefined)(
  "rendered with --registry-server=toolhive, the pods run the reference's server",
  () => {
    usePods();
    for (const form of [...OURS, ...(haveReference ? REFERENCE_FORMS() : [])])
      it(form.name, () => runForm(form, "toolhive"), 120_000);
  },
);

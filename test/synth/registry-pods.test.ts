// Our registry server in the pod of every MCPRegistry form we and the reference write
// (test/synth/registry-forms.ts says how a pod is run).
import { describe, it } from "vitest";
import {
  haveReference,
  missing,
  OURS,
  REFERENCE_FORMS,
  runForm,
  usePods,
} from "./registry-forms.js";

describe.skipIf(missing !== undefined)("rendered MCPRegistry pods run our registry server", () => {
  usePods();
  for (const form of OURS) it(form.name, () => runForm(form), 120_000);

  describe.skipIf(!haveReference)("the reference's MCPRegistry examples, as written", () => {
    for (const form of haveReference ? REFERENCE_FORMS() : [])
      it(form.name, () => runForm(form), 120_000);
  });
});

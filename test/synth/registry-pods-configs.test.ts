// Our registry server in an MCPRegistry's pod with each of the reference's registry-server
// configs as its configYAML (test/synth/registry-forms.ts says how a pod is run).
import { describe, it } from "vitest";
import { CONFIG_FORMS, haveConfigs, missing, runForm, usePods } from "./registry-forms.js";

describe.skipIf(missing !== undefined || !haveConfigs)(
  "the reference's registry configs as configYAML, as written",
  () => {
    usePods();
    for (const form of haveConfigs ? CONFIG_FORMS() : [])
      it(form.name, () => runForm(form), 120_000);
  },
);

// Resources written for the reference operator (shared/data/reference-resources) render, pass
// the Kubernetes checks and get a status: each file on its own, references to resources it does
// not hold allowed, documents that do not validate left out (docs/compat.md lists why).
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { loadTexts, resourcesOfText } from "../../src/synth/load.js";
import { ResourceSet } from "../../src/synth/model.js";
import { computeStatuses } from "../../src/synth/status.js";
import { REFERENCE_RESOURCES } from "../schema/helpers.js";
import { describeWithSharedData } from "../support/shared-data.js";
import { render } from "./helpers.js";

describeWithSharedData("reference operator resources", REFERENCE_RESOURCES, () => {
  const files = readdirSync(REFERENCE_RESOURCES)
    .filter((f) => f.endsWith(".yaml"))
    .sort();

  it("are there", () => {
    expect(files.length).toBeGreaterThan(40);
  });

  it.each(files)("%s renders valid Kubernetes objects", async (file) => {
    const text = readFileSync(join(REFERENCE_RESOURCES, file), "utf8");
    const loaded = await loadTexts([{ name: file, text }], { allowMissingRefs: true });
    const invalid = new Set(
      loaded.report.resources
        .filter((r) => r.errors.length > 0)
        .map((r) => `${r.kind}/${r.namespace}/${r.name}`),
    );
    // loadTexts keeps nothing when anything is invalid; take the valid documents alone.
    const resources = resourcesOfText(text, "default").filter(
      (r) => !invalid.has(`${r.kind}/${r.metadata.namespace}/${r.metadata.name}`),
    );
    render(resources);
    const statuses = computeStatuses(new ResourceSet(resources));
    expect(statuses).toHaveLength(new ResourceSet(resources).all().length);
  });
});

// synthesize says which resource each object was rendered for: the controller's owner
// references, resource status and prune order all follow from it.
import { expect, it } from "vitest";
import { loadPaths } from "../../src/synth/load.js";
import { synthesize } from "../../src/synth/render.js";
import { EXAMPLES } from "../controller/helpers.js";

it("every rendered object of the examples has the resource it was rendered for, in its namespace", async () => {
  const loaded = await loadPaths([EXAMPLES], { namespace: "team-a" });
  expect(loaded.valid).toBe(true);
  const result = synthesize(loaded.resources);
  expect(result.objects.length).toBeGreaterThan(20);
  for (const o of result.objects) {
    const owner = result.owners.get(o);
    expect(owner, `${o.kind} ${o.metadata.name}`).toBeDefined();
    expect(owner?.metadata.namespace).toBe(o.metadata.namespace);
  }
  const deployment = result.objects.find(
    (o) => o.kind === "Deployment" && o.metadata.name === "fetch",
  );
  expect(result.owners.get(deployment!)).toMatchObject({
    kind: "MCPServer",
    metadata: { name: "fetch" },
  });
});

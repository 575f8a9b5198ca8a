// `synth --registry-server`: which program an MCPRegistry deploys, chosen on the command line.
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { projectVersion } from "../../src/project.js";
import { examples, runCli } from "./helpers.js";

const REGISTRY = join(examples, "resources", "mcpregistry-configyaml.yaml");

/** The registry container of the rendered Deployment. */
function registryContainer(yaml: string): { image: string; args: string[] } {
  const deployment = parseAllDocuments(yaml)
    .map((d) => d.toJS() as { kind?: string; spec?: unknown })
    .find((o) => o?.kind === "Deployment") as {
    spec: { template: { spec: { containers: { image: string; args: string[] }[] } } };
  };
  return deployment.spec.template.spec.containers[0]!;
}

describe("synth --registry-server", () => {
  it("deploys this project's registry server by default, at the package's version", async () => {
    const r = await runCli(["synth", REGISTRY, "-o", "yaml"]);
    expect(r.status, r.stderr).toBe(0);
    const c = registryContainer(r.stdout);
    expect(c.image).toBe(`ghcr.io/mcpfleet/mcpfleet:${projectVersion()}`);
    expect(c.args.slice(0, 2)).toEqual(["registry", "serve"]);
  });

  it("deploys the reference's server with toolhive, and another build with --registry-image", async () => {
    const r = await runCli(["synth", REGISTRY, "-o", "yaml", "--registry-server=toolhive"]);
    expect(r.status, r.stderr).toBe(0);
    expect(registryContainer(r.stdout)).toMatchObject({
      image: "ghcr.io/stacklok/thv-registry-api:v1.5.2",
      args: ["serve", "--config=/config/config.yaml"],
    });
    const own = await runCli([
      "synth",
      REGISTRY,
      "-o",
      "yaml",
      "--registry-server=toolhive",
      "--registry-image=registry.example.com/thv-registry-api:1.5.1",
    ]);
    expect(registryContainer(own.stdout).image).toBe("registry.example.com/thv-registry-api:1.5.1");
  });

  it("refuses another name with a usage error", async () => {
    const r = await runCli(["synth", REGISTRY, "-o", "yaml", "--registry-server=official"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--registry-server must be mcpfleet or toolhive, not "official"');
    expect(r.stdout).toBe("");
  });
});

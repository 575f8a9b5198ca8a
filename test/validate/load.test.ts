// synth (and the controller) load their input through the same validation as validate: what
// validate refuses, nothing is rendered from.
import { describe, expect, it } from "vitest";
import { loadTexts } from "../../src/synth/load.js";

const SERVER = [
  "apiVersion: toolhive.stacklok.dev/v1alpha1",
  "kind: MCPServer",
  "metadata:",
  "  name: github",
  "spec:",
  "  image: ghcr.io/github/github-mcp-server",
  "",
].join("\n");

describe("loadTexts", () => {
  it("loads a valid resource", async () => {
    const loaded = await loadTexts([{ name: "s.yaml", text: SERVER }]);
    expect(loaded.valid).toBe(true);
    expect(loaded.resources.map((r) => r.metadata.name)).toEqual(["github"]);
  });

  it("refuses a mistyped API group instead of rendering nothing", async () => {
    const text = SERVER.replace("stacklok.dev", "stacklok.io");
    const loaded = await loadTexts([{ name: "s.yaml", text }]);
    expect(loaded.valid).toBe(false);
    expect(loaded.resources).toEqual([]);
    expect(loaded.report.resources[0]?.errors[0]?.message).toMatch(/unknown API group/);
  });

  it("leaves other projects' kinds alone: it renders only ours", async () => {
    const certificate =
      "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: tls\n";
    const loaded = await loadTexts([{ name: "s.yaml", text: `${SERVER}---\n${certificate}` }]);
    expect(loaded.valid).toBe(true);
    expect(loaded.resources.map((r) => r.kind)).toEqual(["MCPServer"]);
    const strict = await loadTexts([{ name: "s.yaml", text: certificate }], {
      ignoreMissingSchemas: false,
    });
    expect(strict.valid).toBe(false);
  });

  it("refuses a misspelt field, as the API server does", async () => {
    const text = SERVER + "  transprot: stdio\n";
    const loaded = await loadTexts([{ name: "s.yaml", text }]);
    expect(loaded.valid).toBe(false);
    expect(loaded.report.resources[0]?.errors[0]?.message).toMatch(/did you mean "transport"/);
  });

  it("renders despite a misspelt field when told to only warn", async () => {
    const text = SERVER + "  transprot: stdio\n";
    const loaded = await loadTexts([{ name: "s.yaml", text }], { unknownFields: "warn" });
    expect(loaded.valid).toBe(true);
    expect(loaded.resources).toHaveLength(1);
  });
});

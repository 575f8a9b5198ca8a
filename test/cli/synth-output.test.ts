// What `mcpfleet synth` prints and writes as a new user meets it: the objects of the resources
// given (the install bundle only with --install), and --unknown-fields as validate has it.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTexts } from "../../src/synth/load.js";
import { examples, runCli } from "./helpers.js";

const work = mkdtempSync(join(tmpdir(), "mcpfleet-synth-output-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const resources = join(examples, "resources");

const kinds = (yaml: string) => [...yaml.matchAll(/^kind: (\S+)$/gm)].map((m) => m[1]);

describe("synth prints what was asked", () => {
  it("-o yaml prints the resources' objects, not the install bundle", async () => {
    const r = await runCli(["synth", join(resources, "mcpserver-stdio.yaml"), "-o", "yaml"]);
    expect(r.status, r.stderr).toBe(0);
    expect(kinds(r.stdout).sort()).toEqual([
      "ConfigMap",
      "Deployment",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
      "ServiceAccount",
    ]);
    expect(r.stdout).not.toContain("mcpfleet-controller");
  });

  it("--install adds the install bundle, first", async () => {
    const r = await runCli([
      "synth",
      join(resources, "mcpserver-stdio.yaml"),
      "-o",
      "yaml",
      "--install",
    ]);
    expect(r.status, r.stderr).toBe(0);
    const all = kinds(r.stdout);
    expect(all[0]).toBe("CustomResourceDefinition");
    expect(all).toContain("ClusterRole");
    expect(r.stdout).toContain("name: mcpfleet-controller");
  });

  it("-d DIR writes no install/ without --install", async () => {
    const out = join(work, "dist");
    const r = await runCli(["synth", join(resources, "mcpserver-stdio.yaml"), "-d", out]);
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual([".mcpfleet-output.json", "default.yaml"]);
  });
});

/** An MCPServer with a field the API server would prune (`clientID`; the schema has `clientId`). */
const PRUNED = `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: cid
spec:
  image: docker.io/mcp/time:latest
  transport: stdio
  oidcConfig:
    type: inline
    inline:
      issuer: https://issuer.example.com
      clientID: abc
`;

describe("synth --unknown-fields", () => {
  const file = join(work, "clientid.yaml");
  writeFileSync(file, PRUNED);

  it("refuses an unknown field by default, as validate does", async () => {
    const r = await runCli(["synth", file, "-o", "yaml"]);
    expect(r.stdout).toMatch(/unknown field "clientID" \(did you mean "clientId"\?\)/);
    expect(r.status).toBe(1);
  });

  it("warn renders it with a warning, ignore without one", async () => {
    const warned = await runCli(["synth", file, "-o", "yaml", "--unknown-fields=warn"]);
    expect(warned.status, warned.stderr).toBe(0);
    expect(warned.stderr).toMatch(/unknown field "clientID".*\(schema, warning\)/);
    expect(warned.stdout).toContain("kind: Deployment");
    const ignored = await runCli(["synth", file, "-o", "yaml", "--unknown-fields", "ignore"]);
    expect(ignored.status, ignored.stderr).toBe(0);
    expect(ignored.stderr).not.toContain("clientID");
    expect(ignored.stdout).toBe(warned.stdout);
  });

  it("leaves the unknown field out of what is rendered, as the API server prunes it", async () => {
    const loaded = await loadTexts([{ name: "x.yaml", text: PRUNED }], { unknownFields: "warn" });
    expect(loaded.valid).toBe(true);
    const spec = loaded.resources[0]!.spec as { oidcConfig: { inline: Record<string, unknown> } };
    expect(spec.oidcConfig.inline).toEqual({ issuer: "https://issuer.example.com" });
  });

  it("a mode it does not have is a usage error naming the closest", async () => {
    const r = await runCli(["synth", file, "-o", "yaml", "--unknown-fields=wran"]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      'mcpfleet: synth: unknown --unknown-fields mode "wran" (did you mean "warn"?); use one of error, warn, ignore; see mcpfleet help synth',
    );
  });
});

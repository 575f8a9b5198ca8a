// A Flux-style repository as a new user validates it: other groups' kinds beside ours,
// kustomizations, and the directory synth wrote inside the tree.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/helpers.js";
import { tempDir, writeTree } from "./helpers.js";

const GROUP =
  "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPGroup\nmetadata:\n  name: eng\n";
const SERVER =
  "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata:\n  name: s\n" +
  "spec:\n  image: i\n  groupRef: eng\n";
const CERTIFICATE =
  "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: web\n" +
  "spec:\n  secretName: web-tls\n  issuerRef: {name: letsencrypt}\n";

describe("--skip and --reject, as kubeconform has them", () => {
  const dir = writeTree(tempDir(), {
    "group.yaml": GROUP,
    "server.yaml": SERVER,
    "cert.yaml": CERTIFICATE,
  });

  it("--skip leaves a kind out by its name or its apiVersion/Kind, reported as skipped", async () => {
    for (const skip of [
      "Certificate",
      "cert-manager.io/v1/Certificate",
      "Deployment,Certificate",
    ]) {
      const r = await runCli(["validate", dir, "--skip", skip, "--summary"]);
      expect(r.stdout.trim(), skip).toBe(
        "3 resources: 2 valid, 0 invalid, 1 skipped; 0 errors, 0 warnings",
      );
      expect(r.status).toBe(0);
    }
    const other = await runCli(["validate", dir, "--skip", "cert-manager.io/v2/Certificate"]);
    expect(other.stdout).toMatch(/no schema for Certificate of cert-manager\.io\/v1/);
    expect(other.status).toBe(1);
  });

  it("--reject refuses a kind wherever it appears, ours too", async () => {
    const r = await runCli(["validate", dir, "--reject", "MCPServer", "--skip", "Certificate"]);
    expect(r.stdout.trim()).toBe(
      `${join(dir, "server.yaml")}:2:7: MCPServer/default/s: /kind: MCPServer of toolhive.stacklok.dev/v1alpha1 is rejected here (--reject) (schema)`,
    );
    expect(r.status).toBe(1);
  });
});

describe("kustomizations", () => {
  const dir = writeTree(tempDir(), {
    "apps/kustomization.yaml": "resources:\n  - ../base\n",
    "base/kustomization.yaml":
      "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [group.yaml]\n",
    "base/group.yaml": GROUP,
  });

  it("are errors by default, saying to render them first", async () => {
    const r = await runCli(["validate", dir]);
    expect(r.stdout).toMatch(/apps\/kustomization\.yaml:1:1: .*a kustomization, not a resource/);
    expect(r.status).toBe(1);
  });

  it("are skipped with one notice under --ignore-missing-schemas, with or without apiVersion", async () => {
    const r = await runCli(["validate", dir, "--ignore-missing-schemas", "--summary"]);
    expect(r.stdout.trim()).toBe(
      "3 resources: 1 valid, 0 invalid, 2 skipped; 0 errors, 0 warnings",
    );
    expect(r.stderr.trim()).toBe(
      `validate: 2 kustomization(s) skipped (${join(dir, "apps", "kustomization.yaml")}, ...): they are not resources; kustomize build DIR | mcpfleet validate checks what they render`,
    );
    expect(r.status).toBe(0);
  });
});

describe("the directory synth wrote", () => {
  it("is not read again by validate or synth, and is read when named", async () => {
    const dir = writeTree(tempDir(), { "group.yaml": GROUP, "server.yaml": SERVER });
    const synth = await runCli(["synth", ".", "-d", "dist"], { cwd: dir });
    expect(synth.status, synth.stderr).toBe(0);
    const r = await runCli(["validate", ".", "--summary"], { cwd: dir });
    expect(r.stdout.trim()).toBe(
      "2 resources: 2 valid, 0 invalid, 0 skipped; 0 errors, 0 warnings",
    );
    expect(r.stderr.trim()).toBe(
      "validate: skipped dist: written by mcpfleet (it holds .mcpfleet-output.json), not input; name it to read it",
    );
    expect(r.status).toBe(0);
    const again = await runCli(["synth", ".", "-d", "dist"], { cwd: dir });
    expect(again.stderr).toContain("synth: skipped dist: written by mcpfleet");
    expect(again.stderr).toContain("dist: 0 file(s) written, 1 unchanged");
    expect(again.status).toBe(0);
    const named = await runCli(["validate", "dist", "--summary"], { cwd: dir });
    expect(named.stdout.trim()).toMatch(/^[1-9]\d* resources: [1-9]\d* valid, 0 invalid/);
  });
});

// A Flux-style repository as a new user validates it: other groups' kinds beside ours (with
// their CRDs, skipped or rejected), kustomizations, and the directory synth wrote inside it.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { describe, expect, it } from "vitest";
import { defaultSchemaSet } from "../../src/schema/index.js";
import { loadCrds } from "../../src/validate/crds.js";
import { runCli } from "../cli/helpers.js";
import { type Doc, ROOT, tempDir, writeTree } from "./helpers.js";

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

/** A trimmed Certificate CRD in cert-manager's form: nullable, formats, a CEL rule. */
const CERTIFICATE_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: Certificate, plural: certificates}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            apiVersion: {type: string}
            kind: {type: string}
            metadata: {type: object}
            spec:
              type: object
              required: [secretName, issuerRef]
              x-kubernetes-validations:
                - rule: "!has(self.duration) || !has(self.renewBefore) || self.duration != self.renewBefore"
                  message: renewBefore must differ from duration
                - rule: "self.secretName == oldSelf.secretName"
                  message: an update rule, not checked on a file
              properties:
                secretName: {type: string}
                dnsNames: {type: array, items: {type: string}}
                duration: {type: string, format: duration}
                renewBefore: {type: string}
                revisionHistoryLimit:
                  {type: integer, format: int32, nullable: true, minimum: 1, example: 3}
                issuerRef:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    kind: {type: string}
`;

const BAD_CERTIFICATE = `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: web}
spec:
  secretName: web-tls
  duration: 2160h
  renewBefore: 2160h
  revisionHistoryLimit: 0
  dnsNmes: [a]
  issuerRef: {name: letsencrypt}
---
apiVersion: cert-manager.io/v1alpha2
kind: Certificate
metadata: {name: old}
spec: {secretName: old, issuerRef: {name: x}}
`;

describe("--crd: other projects' kinds validated with their CRDs", () => {
  const dir = writeTree(tempDir(), {
    "crds/certificates.yaml": CERTIFICATE_CRD,
    "deploy/cert.yaml": CERTIFICATE,
    "deploy/group.yaml": GROUP,
    "bad/cert.yaml": BAD_CERTIFICATE,
  });

  it("validates a kind of a CRD file or directory given: schema, unknown fields, CEL rules, versions", async () => {
    for (const crd of ["crds", "crds/certificates.yaml"]) {
      const ok = await runCli(["validate", "deploy", "--crd", crd, "--summary"], { cwd: dir });
      expect(ok.stdout.trim(), crd).toBe(
        "2 resources: 2 valid, 0 invalid, 0 skipped; 0 errors, 0 warnings",
      );
      expect(ok.status).toBe(0);
    }
    const bad = await runCli(["validate", "bad", "--crd", "crds"], { cwd: dir });
    expect(bad.stdout.trim().split("\n")).toEqual([
      "bad/cert.yaml:4:1: Certificate/default/web: /spec: renewBefore must differ from duration (cel)",
      "bad/cert.yaml:8:25: Certificate/default/web: /spec/revisionHistoryLimit: must be >= 1 (schema)",
      'bad/cert.yaml:9:3: Certificate/default/web: /spec/dnsNmes: unknown field "dnsNmes" (did you mean "dnsNames"?) (schema)',
      "bad/cert.yaml:12:13: Certificate/default/old: /apiVersion: no Certificate in cert-manager.io/v1alpha2; its CRD (--crd) serves cert-manager.io/v1 (schema)",
    ]);
    expect(bad.status).toBe(1);
  });

  it("a path without a CRD is a usage error", async () => {
    const r = await runCli(["validate", "deploy", "--crd", "deploy"], { cwd: dir });
    expect(r.stderr.trim()).toBe(
      "mcpfleet: validate: --crd deploy: no CustomResourceDefinition found; see mcpfleet help validate",
    );
    expect(r.status).toBe(2);
  });

  it("our own CRDs, given as --crd, find every example valid and the same mistakes as our schemas", () => {
    const crds = loadCrds([join(ROOT, "crds")]);
    const dir = join(ROOT, "examples", "resources");
    for (const file of readdirSync(dir)) {
      for (const doc of loadAll(readFileSync(join(dir, file), "utf8")) as Doc[]) {
        const id = crds.idOf(doc.apiVersion as string, doc.kind as string);
        expect(id, file).toBeDefined();
        expect(crds.validate(id!, doc), file).toEqual([]);
      }
    }
    const server = {
      apiVersion: "toolhive.stacklok.dev/v1alpha1",
      kind: "MCPServer",
      metadata: { name: "s" },
      spec: { image: "i", transprot: "stdio", proxyPort: 70000 },
    };
    const id = crds.idOf(server.apiVersion, server.kind)!;
    const strip = (issues: { path: string; message: string }[]) =>
      issues.map((i) => `${i.path}: ${i.message}`).sort();
    expect(strip(crds.validate(id, server))).toEqual(
      strip(defaultSchemaSet().validateKind("MCPServer", server)),
    );
  });
});

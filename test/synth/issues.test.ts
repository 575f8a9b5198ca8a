// What synthesis reports: renderers' warnings and the resources they render nothing for reach
// synthesize()'s result with their resource, and print in the shape validate prints its lines.
import { beforeAll, describe, expect, it } from "vitest";
import {
  locateIssues,
  SYNTH_ISSUE_CODES,
  type SynthIssue,
  synthIssueLine,
} from "../../src/synth/issues.js";
import { loadTexts } from "../../src/synth/load.js";
import { type Resource, ResourceSet } from "../../src/synth/model.js";
import { synthesisIssues, synthesize } from "../../src/synth/render.js";
import { computeStatus } from "../../src/synth/status.js";
import { FIXTURE, loadFixture, NAMESPACE } from "./vmcp-fixture.js";

const gateway = { kind: "VirtualMCPServer", namespace: NAMESPACE, name: "gateway" };

let resources: Resource[];
beforeAll(async () => {
  resources = await loadFixture();
});

describe("synthesize() returns what the renderers report", () => {
  it("a backend reached without credentials is a warning against its virtual server", () => {
    const { issues } = synthesize(resources);
    const noCredentials = issues.filter((i) => i.code === "SYNTH_AUTH_NOT_APPLIED");
    expect(noCredentials).toEqual([
      {
        severity: "warning",
        code: "SYNTH_AUTH_NOT_APPLIED",
        resource: gateway,
        message:
          "MCPExternalAuthConfig aws: type awsSts cannot authenticate a virtual server's backend; requests to it are sent without credentials",
      },
    ]);
  });

  it("a resource that renders nothing is an error naming it and why", () => {
    const missingGroup = resources.map((r): Resource =>
      r.kind === "VirtualMCPServer" && r.metadata.name === "plain"
        ? { ...r, spec: { ...r.spec, groupRef: "nope" } }
        : r,
    );
    const result = synthesize(missingGroup);
    expect(result.issues.filter((i) => i.severity === "error")).toEqual([
      {
        severity: "error",
        code: "SYNTH_NOT_RENDERED",
        resource: { kind: "VirtualMCPServer", namespace: NAMESPACE, name: "plain" },
        path: "/spec/groupRef",
        message: "renders nothing: MCPGroup nope not found",
      },
    ]);
    expect(result.objects.some((o) => o.metadata.name === "plain")).toBe(false);
  });

  it("an MCPServer whose OIDC settings sit in a ConfigMap is reported as rendering nothing", () => {
    const configMapOidc = resources.map((r): Resource =>
      r.kind === "MCPServer" && r.metadata.name === "alpha"
        ? {
            ...r,
            spec: { ...r.spec, oidcConfig: { type: "configMap", configMap: { name: "oidc" } } },
          }
        : r,
    );
    const errors = synthesize(configMapOidc).issues.filter((i) => i.severity === "error");
    expect(errors.map((i) => [i.resource.kind, i.resource.name, i.code])).toEqual([
      ["MCPServer", "alpha", "SYNTH_NOT_RENDERED"],
    ]);
    expect(errors[0]?.message).toMatch(/oidcConfig of type configMap/);
  });

  it("reports the same issues whatever the input order", () => {
    expect(synthesize([...resources].reverse()).issues).toEqual(synthesize(resources).issues);
  });

  it("uses only catalogued codes", () => {
    for (const i of synthesize(resources).issues) expect(SYNTH_ISSUE_CODES).toContain(i.code);
  });
});

describe("issue lines", () => {
  const warning: SynthIssue = {
    severity: "warning",
    code: "SYNTH_AUTH_NOT_APPLIED",
    resource: gateway,
    path: "/spec/outgoingAuth",
    message: "requests to it are sent without credentials",
  };

  it("read like validate's: FILE:LINE:COL: KIND/NAMESPACE/NAME: PATH: MESSAGE (CODE, warning)", () => {
    expect(
      synthIssueLine({ ...warning, resource: { ...gateway, file: "vmcp.yaml", line: 7 } }),
    ).toBe(
      "vmcp.yaml:7:1: VirtualMCPServer/team/gateway: /spec/outgoingAuth: requests to it are sent without credentials (SYNTH_AUTH_NOT_APPLIED, warning)",
    );
    expect(synthIssueLine({ ...warning, severity: "error", code: "SYNTH_NOT_RENDERED" })).toBe(
      "VirtualMCPServer/team/gateway: /spec/outgoingAuth: requests to it are sent without credentials (SYNTH_NOT_RENDERED)",
    );
  });

  it("are located at the document validation read the resource from", async () => {
    const loaded = await loadTexts([{ name: "fleet/vmcp.yaml", text: FIXTURE }], {
      namespace: NAMESPACE,
    });
    const [located] = locateIssues([warning], loaded.report);
    expect(located?.resource.file).toBe("fleet/vmcp.yaml");
    const doc = loaded.report.resources.find(
      (r) => r.kind === "VirtualMCPServer" && r.name === "gateway",
    );
    expect(doc).toBeDefined();
    expect(located?.resource.line).toBe(doc?.line);
  });
});

describe("status reads what the build resolved", () => {
  it("reports the backends synthesis resolved, and resolves the same ones without it", () => {
    const set = new ResourceSet(resources);
    const result = synthesize(resources);
    const v = set.get("VirtualMCPServer", NAMESPACE, "gateway") as Resource;
    const withBuild = computeStatus(v, set, { resolved: result.resolved });
    expect(withBuild).toEqual(computeStatus(v, set));
    expect(withBuild.backendCount).toBe(4);
    // What the build resolved is what status shows: a resolution without members shows none.
    const members = result.resolved.vmcpMembers.get(`${NAMESPACE}/gateway`);
    expect(members?.backends.map((b) => b.name)).toEqual(["alpha", "entry", "remote", "stdio-sse"]);
    const emptied = new Map([[`${NAMESPACE}/gateway`, { ...members!, backends: [] }]]);
    expect(computeStatus(v, set, { resolved: { vmcpMembers: emptied } }).backendCount).toBe(0);
  });
});

describe("synthesisIssues() (validate's synthesis check)", () => {
  it("reports what synthesize() reports, in the same order, without writing the objects", () => {
    const variants: Resource[][] = [
      resources,
      resources.map((r): Resource =>
        r.kind === "VirtualMCPServer" ? { ...r, spec: { ...r.spec, groupRef: "nope" } } : r,
      ),
      resources.filter((r) => r.kind !== "MCPExternalAuthConfig"),
    ];
    for (const variant of variants) {
      expect(synthesisIssues(variant)).toEqual(synthesize(variant).issues);
    }
    expect(synthesisIssues(variants[1]!).some((i) => i.severity === "error")).toBe(true);
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultSchemaSet, VMCP_CONFIG_SCHEMA_ID } from "../../src/schema/index.js";
import { renderVirtualMCPServer } from "../../src/synth/constructs/vmcp/index.js";
import { checkObjects } from "../../src/synth/kube-check.js";
import { resourcesOfText } from "../../src/synth/load.js";
import { REFERENCE_RESOURCES } from "../schema/helpers.js";
import { hasSharedData } from "../support/shared-data.js";
import { type Resource, ResourceSet } from "../../src/synth/model.js";
import { synthesize } from "../../src/synth/render.js";
import {
  buildReported,
  configOf,
  expectNotRendered,
  FIXTURE,
  loadFixture,
  NAMESPACE,
} from "./vmcp-fixture.js";

function resourcesIn(dir: string): Resource[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .flatMap((f) => resourcesOfText(readFileSync(join(dir, f), "utf8"), "default"));
}

/**
 * Issues the reference-operator resources carry into the configuration, listed in
 * docs/virtualmcpserver.md (fields our spec does not have, retry fields without action retry).
 * `validate` reports them on the resources; everything else must be clean.
 */
const KNOWN = [
  /^\/codeMode/,
  /^\/optimizer\/embedding(Provider|Model|Headers)/,
  /^\/compositeTools\/\d+\/(failureMode|annotations)$/,
  /^\/compositeTools\/\d+\/steps\/\d+\/onError\/(maxRetries|action)$/,
];

describe.each([
  ["examples/resources", join(import.meta.dirname, "../../examples/resources")],
  ...(hasSharedData(REFERENCE_RESOURCES, "VirtualMCPServers of the reference resources")
    ? [["reference resources", REFERENCE_RESOURCES] as [string, string]]
    : []),
])("every VirtualMCPServer of %s", (_label, dir) => {
  const all = resourcesIn(dir);
  // Reference files repeat names across files in one namespace; keep the first of each.
  const seen = new Set<string>();
  const resources = all.filter((r) => {
    const key = `${r.kind}/${r.metadata.namespace}/${r.metadata.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const set = new ResourceSet(resources);
  const servers = set.list("VirtualMCPServer");

  it("has virtual servers to render", () => {
    expect(servers.length).toBeGreaterThan(0);
  });

  it("renders a configuration valid against the Config schema", () => {
    for (const v of servers) {
      const { build } = buildReported(v, set);
      if (build === undefined) continue;
      const issues = defaultSchemaSet()
        .validateSchema(VMCP_CONFIG_SCHEMA_ID, build.config)
        .filter((i) => !KNOWN.some((re) => re.test(i.path)));
      expect({ name: v.metadata.name, issues }).toEqual({ name: v.metadata.name, issues: [] });
    }
  });

  it("renders objects that pass the Kubernetes checks", () => {
    const objects = synthesize(resources, undefined, {
      VirtualMCPServer: renderVirtualMCPServer,
    }).objects;
    expect(objects.filter((o) => o.kind === "Deployment").length).toBeGreaterThan(0);
    expect(checkObjects(objects)).toEqual([]);
  });
});

describe("VirtualMCPServer: client auth that cannot be rendered safely renders nothing", () => {
  it("refuses authz from a ConfigMap (the policies cannot be read at synth time)", async () => {
    const text = FIXTURE.replace(
      "    authzConfig:\n      type: inline\n      inline:\n        policies: ['permit(principal, action, resource);']",
      "    authzConfig:\n      type: configMap\n      configMap: {name: policies}",
    );
    expect(text).not.toBe(FIXTURE);
    const resources = await loadFixture(text);
    const set = new ResourceSet(resources);
    const gateway = set.get(
      "VirtualMCPServer",
      NAMESPACE,
      "gateway",
    ) as Resource<"VirtualMCPServer">;
    expectNotRendered(buildReported(gateway, set), /configMap/);
    const objects = synthesize(resources, undefined, {
      VirtualMCPServer: renderVirtualMCPServer,
    }).objects;
    expect(objects.some((o) => o.metadata.name.startsWith("gateway"))).toBe(false);
    expect(objects.some((o) => o.metadata.name === "plain")).toBe(true);
  });

  it("renders the deprecated inline oidcConfig, with its resource URL", async () => {
    const text = FIXTURE.replace(
      "    oidcConfigRef: {name: cluster, audience: plain}",
      [
        "    oidcConfig:",
        "      type: inline",
        "      resourceUrl: https://plain.example.com",
        "      inline:",
        "        issuer: https://issuer.example.com",
        "        audience: plain-aud",
        "        clientSecretRef: {name: plain-oidc, key: secret}",
      ].join("\n"),
    );
    expect(text).not.toBe(FIXTURE);
    const objects = synthesize(await loadFixture(text), undefined, {
      VirtualMCPServer: renderVirtualMCPServer,
    }).objects;
    expect(
      (configOf(objects, "plain-vmcp-config") as { incomingAuth: unknown }).incomingAuth,
    ).toEqual({
      type: "oidc",
      oidc: {
        issuer: "https://issuer.example.com",
        audience: "plain-aud",
        clientSecretEnv: "VMCP_OIDC_CLIENT_SECRET",
        resource: "https://plain.example.com",
      },
    });
  });

  it("refuses the deprecated oidcConfig of type configMap", async () => {
    const text = FIXTURE.replace(
      "    oidcConfigRef: {name: cluster, audience: plain}",
      "    oidcConfig:\n      type: configMap\n      configMap: {name: plain-oidc}",
    );
    expect(text).not.toBe(FIXTURE);
    const resources = await loadFixture(text);
    const set = new ResourceSet(resources);
    const plain = set.get("VirtualMCPServer", NAMESPACE, "plain") as Resource<"VirtualMCPServer">;
    expectNotRendered(buildReported(plain, set), /configMap/);
  });
});

// The reference table is found by walking the schemas; these tests pin what it finds and make
// sure no `...Ref` property in the schemas goes unclassified.
import { describe, expect, it } from "vitest";
import { defaultSchemaSet } from "../../src/schema/index.js";
import {
  NON_RESOURCE_REFERENCES,
  REFERENCE_PROPERTIES,
  WORKLOAD_PATTERNS,
  allRefPropertyNames,
  referenceTable,
} from "../../src/validate/reference-table.js";
import { valuesAt } from "../../src/validate/reference-facts.js";

const files = defaultSchemaSet().files;

function table(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [kind, patterns] of referenceTable(files)) {
    out[kind] = patterns.map((p) => `${p.segments.join(".")} -> ${p.targets.join("|")}`);
  }
  return out;
}

describe("reference table", () => {
  it("finds every name reference of every kind", () => {
    expect(table()).toEqual({
      MCPToolConfig: [],
      MCPTelemetryConfig: [],
      MCPOIDCConfig: [],
      MCPExternalAuthConfig: [],
      MCPGroup: [],
      EmbeddingServer: [],
      MCPServer: [
        "spec.authServerRef -> MCPExternalAuthConfig",
        "spec.externalAuthConfigRef -> MCPExternalAuthConfig",
        "spec.groupRef -> MCPGroup",
        "spec.oidcConfigRef -> MCPOIDCConfig",
        "spec.telemetryConfigRef -> MCPTelemetryConfig",
        "spec.toolConfigRef -> MCPToolConfig",
      ],
      MCPRemoteProxy: [
        "spec.authServerRef -> MCPExternalAuthConfig",
        "spec.externalAuthConfigRef -> MCPExternalAuthConfig",
        "spec.groupRef -> MCPGroup",
        "spec.oidcConfigRef -> MCPOIDCConfig",
        "spec.toolConfigRef -> MCPToolConfig",
      ],
      MCPServerEntry: [
        "spec.externalAuthConfigRef -> MCPExternalAuthConfig",
        "spec.groupRef -> MCPGroup",
      ],
      VirtualMCPCompositeToolDefinition: [],
      VirtualMCPServer: [
        "spec.config.aggregation.tools.*.toolConfigRef -> MCPToolConfig",
        "spec.config.compositeToolRefs -> VirtualMCPCompositeToolDefinition",
        "spec.config.groupRef -> MCPGroup",
        "spec.embeddingServerRef -> EmbeddingServer",
        "spec.groupRef -> MCPGroup",
        "spec.incomingAuth.oidcConfigRef -> MCPOIDCConfig",
        "spec.outgoingAuth.backends.*.externalAuthConfigRef -> MCPExternalAuthConfig",
        "spec.outgoingAuth.default.externalAuthConfigRef -> MCPExternalAuthConfig",
        "spec.telemetryConfigRef -> MCPTelemetryConfig",
      ],
      MCPRegistry: [],
    });
  });

  it("classifies every property named ...Ref or ...Refs in the schemas", () => {
    const names = [...allRefPropertyNames(files)];
    const unclassified = names.filter(
      (n) => !(n in REFERENCE_PROPERTIES) && !NON_RESOURCE_REFERENCES.has(n),
    );
    expect(unclassified).toEqual([]);
    // And lists nothing the schemas no longer have.
    expect([...NON_RESOURCE_REFERENCES].filter((n) => !names.includes(n))).toEqual([]);
  });

  it("names workload paths that exist in the VirtualMCPServer schema", () => {
    const set = defaultSchemaSet();
    for (const pattern of WORKLOAD_PATTERNS.VirtualMCPServer ?? []) {
      // A document with a value at the path must produce no unknown-field issue on the way.
      const doc: Record<string, unknown> = {};
      let node: Record<string, unknown> = doc;
      const segs = pattern.segments;
      segs.forEach((s, i) => {
        const last = i === segs.length - 1;
        const next = segs[i + 1];
        if (s === "*") return;
        if (last) {
          node[s] = pattern.form === "value" ? "w" : pattern.form === "items" ? ["w"] : { w: {} };
        } else if (next === "*") {
          const item: Record<string, unknown> = {};
          node[s] = [item];
          node = item;
        } else {
          const child: Record<string, unknown> = {};
          node[s] = child;
          node = child;
        }
      });
      const unknown = set
        .validateKind("VirtualMCPServer", {
          apiVersion: "toolhive.stacklok.dev/v1alpha1",
          kind: "VirtualMCPServer",
          metadata: { name: "v" },
          ...doc,
        })
        .filter((i) => i.unknownField);
      expect(unknown, segs.join(".")).toEqual([]);
      expect(valuesAt(doc, segs).length, segs.join(".")).toBe(1);
    }
  });
});

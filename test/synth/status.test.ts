// Computed status: reference conditions, phases, group membership, config hashes.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../src/project-root.js";
import { defaultSchemaSet } from "../../src/schema/index.js";
import { loadPaths } from "../../src/synth/load.js";
import { ResourceSet, type Resource } from "../../src/synth/model.js";
import { EPOCH, computeStatus, computeStatuses, configHash } from "../../src/synth/status.js";
import { NS, proxy, res, server } from "./helpers.js";

type Cond = { type: string; status: string; reason: string; lastTransitionTime: string };

function status(target: Resource, others: Resource[] = [], now?: string): Record<string, unknown> {
  return computeStatus(target, new ResourceSet([target, ...others]), now ? { now } : {});
}

function conditions(s: Record<string, unknown>): Cond[] {
  return s.conditions as Cond[];
}

describe("workload status", () => {
  it("MCPServer with every reference present: Pending, hashes copied, url", () => {
    const tools = res("MCPToolConfig", "tools", { toolsFilter: ["a"] });
    const group = res("MCPGroup", "g", {});
    const s = status(server("s", { groupRef: "g", toolConfigRef: { name: "tools" } }), [
      tools,
      group,
    ]);
    expect(s).toMatchObject({
      phase: "Pending",
      url: `http://mcp-s-proxy.${NS}.svc.cluster.local:8080/mcp`,
      observedGeneration: 1,
      toolConfigHash: configHash(tools),
    });
    expect(conditions(s).map((c) => [c.type, c.status, c.reason])).toEqual([
      ["GroupRefValidated", "True", "GroupFound"],
      ["ToolConfigRefValidated", "True", "ToolConfigFound"],
      ["Ready", "False", "Pending"],
    ]);
    expect(conditions(s).every((c) => c.lastTransitionTime === EPOCH)).toBe(true);
  });

  it("a missing group is advisory on MCPServer", () => {
    const s = status(server("s", { groupRef: "nope" }));
    expect(s.phase).toBe("Pending");
    expect(conditions(s)[0]).toMatchObject({
      type: "GroupRefValidated",
      status: "False",
      reason: "GroupNotFound",
    });
    expect(s.message).toContain('MCPGroup "nope" not found');
  });

  it("a missing tool config fails the MCPServer", () => {
    const s = status(server("s", { toolConfigRef: { name: "gone" } }));
    expect(s.phase).toBe("Failed");
    expect(conditions(s).map((c) => [c.type, c.status, c.reason])).toEqual([
      ["ToolConfigRefValidated", "False", "ToolConfigNotFound"],
      ["Ready", "False", "ReferenceNotFound"],
    ]);
    expect(s.toolConfigHash).toBeUndefined();
  });

  it("every workload reference gets its condition and hash", () => {
    const refs = [
      res("MCPOIDCConfig", "o", { type: "inline", inline: { issuer: "https://id.example.com" } }),
      res("MCPTelemetryConfig", "t", {}),
      res("MCPExternalAuthConfig", "e", { type: "unauthenticated" }),
    ];
    const s = status(
      server("s", {
        oidcConfigRef: { name: "o", audience: "a" },
        telemetryConfigRef: { name: "t" },
        externalAuthConfigRef: { name: "e" },
        authServerRef: { name: "e" },
      }),
      refs,
    );
    expect(conditions(s).map((c) => c.type)).toEqual([
      "ExternalAuthConfigRefValidated",
      "AuthServerRefValidated",
      "OIDCConfigRefValidated",
      "TelemetryConfigRefValidated",
      "Ready",
    ]);
    expect(s).toMatchObject({
      oidcConfigHash: configHash(refs[0] as Resource),
      telemetryConfigHash: configHash(refs[1] as Resource),
      externalAuthConfigHash: configHash(refs[2] as Resource),
      authServerConfigHash: configHash(refs[2] as Resource),
    });
  });

  it("sse servers get the /sse#<name> url; replicas 0 is Stopped", () => {
    expect(status(server("s", { transport: "sse", proxyPort: 9000 })).url).toBe(
      `http://mcp-s-proxy.${NS}.svc.cluster.local:9000/sse#s`,
    );
    expect(status(server("s", { proxyMode: "sse" })).url).toMatch(/\/sse#s$/);
    expect(status(server("s", { replicas: 0 })).phase).toBe("Stopped");
  });

  it("observations make a workload Ready", () => {
    const s = server("s");
    const out = computeStatus(s, new ResourceSet([s]), {
      now: "2026-01-01T00:00:00Z",
      observe: () => ({ readyReplicas: 2 }),
    });
    expect(out).toMatchObject({ phase: "Ready", readyReplicas: 2 });
    expect(conditions(out).at(-1)).toMatchObject({
      type: "Ready",
      status: "True",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    });
  });

  it("MCPRemoteProxy url and missing external auth", () => {
    const s = status(proxy("p", { externalAuthConfigRef: { name: "x" } }));
    expect(s).toMatchObject({
      phase: "Failed",
      url: `http://mcp-p-remote-proxy.${NS}.svc.cluster.local:8080/mcp`,
    });
  });

  it("a missing group is fatal on VirtualMCPServer and on MCPServerEntry", () => {
    const v = res("VirtualMCPServer", "v", {
      groupRef: "nope",
      incomingAuth: { type: "anonymous" },
    });
    expect(status(v).phase).toBe("Failed");
    const e = res("MCPServerEntry", "e", {
      remoteURL: "https://x.example.com/mcp",
      transport: "sse",
      groupRef: "nope",
    });
    expect(status(e).phase).toBe("Failed");
    const g = res("MCPGroup", "g", {});
    expect(status({ ...e, spec: { ...e.spec, groupRef: "g" } }, [g]).phase).toBe("Valid");
  });
});

describe("group and config status", () => {
  const group = res("MCPGroup", "g", {});
  const members: Resource[] = [
    server("b", { groupRef: "g" }),
    server("a", { groupRef: { name: "g" } }),
    server("other", { groupRef: "h" }),
    proxy("p", { groupRef: "g" }),
    res("MCPServerEntry", "e", {
      remoteURL: "https://x.example.com",
      transport: "sse",
      groupRef: "g",
    }),
    server("elsewhere", { groupRef: "g" }),
  ];
  // The last server is in another namespace: groups only count their own namespace.
  (members[5] as Resource).metadata.namespace = "other-ns";

  it("MCPGroup lists members sorted with counts", () => {
    expect(status(group, members)).toMatchObject({
      phase: "Ready",
      servers: ["a", "b"],
      serverCount: 2,
      remoteProxies: ["p"],
      remoteProxyCount: 1,
      entries: ["e"],
      entryCount: 1,
    });
  });

  it("config kinds publish configHash and referencingWorkloads", () => {
    const tools = res("MCPToolConfig", "tools", { toolsFilter: ["x"] });
    const users = [
      server("s2", { toolConfigRef: { name: "tools" } }),
      server("s1", { toolConfigRef: { name: "tools" } }),
      proxy("p", { toolConfigRef: { name: "tools" } }),
      server("none"),
    ];
    const s = status(tools, users);
    expect(s.configHash).toBe(configHash(tools));
    expect(s.referencingWorkloads).toEqual([
      { kind: "MCPServer", name: "s1" },
      { kind: "MCPServer", name: "s2" },
      { kind: "MCPRemoteProxy", name: "p" },
    ]);
    const changed = res("MCPToolConfig", "tools", { toolsFilter: ["y"] });
    expect(configHash(changed)).not.toBe(configHash(tools));
  });

  it("computeStatuses covers every resource in a stable order", () => {
    const all = [group, ...members];
    const a = computeStatuses(new ResourceSet(all));
    const b = computeStatuses(new ResourceSet([...all].reverse()));
    expect(a).toEqual(b);
    expect(a).toHaveLength(all.length);
    expect(a[0]?.kind).toBe("MCPGroup");
  });
});

describe("status against the CRDs' status schemas", () => {
  it("every field of every example's computed status is one the API server keeps", async () => {
    const { resources } = await loadPaths([join(projectRoot(), "examples", "resources")]);
    expect(resources.length).toBeGreaterThan(10);
    const set = new ResourceSet(resources);
    const schemas = defaultSchemaSet();
    const pruned: string[] = [];
    for (const r of resources) {
      // With ready replicas observed, as the controller writes it once workloads run.
      const status = computeStatus(r, set, { observe: () => ({ readyReplicas: 1 }) });
      for (const issue of schemas.validateKind(r.kind, { ...r, status })) {
        if (issue.unknownField === true) pruned.push(`${r.kind} ${issue.path}`);
      }
    }
    expect(pruned).toEqual([]);
    const kinds = new Set(resources.map((r) => r.kind));
    expect(kinds).toContain("MCPRemoteProxy");
    expect(kinds).toContain("VirtualMCPServer");
  });
});

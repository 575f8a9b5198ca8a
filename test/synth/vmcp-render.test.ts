import { beforeAll, describe, expect, it } from "vitest";
import type * as T from "../../generated/types.js";
import { defaultSchemaSet, VMCP_CONFIG_SCHEMA_ID } from "../../src/schema/index.js";
import {
  CONFIG_CHECKSUM_ANNOTATION,
  renderVirtualMCPServer,
  resolveBackends,
} from "../../src/synth/constructs/vmcp/index.js";
import { contentHash } from "../../src/synth/hash.js";
import { checkObjects } from "../../src/synth/kube-check.js";
import { type KubeObject, type Resource, ResourceSet } from "../../src/synth/model.js";
import { synthesize } from "../../src/synth/render.js";
import { toYaml } from "../../src/synth/yaml.js";
import {
  buildReported,
  configMapText,
  configOf,
  CORE_SECRETS,
  expectNotRendered,
  find,
  FIXTURE,
  loadFixture,
  NAMESPACE,
  SECRET_VALUES,
} from "./vmcp-fixture.js";

type Container = {
  name: string;
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  [k: string]: unknown;
};
type Pod = {
  metadata: { labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    containers: Container[];
    volumes: {
      name: string;
      projected?: {
        sources: { configMap: { name: string; items: { key: string; path: string }[] } }[];
      };
    }[];
    [k: string]: unknown;
  };
};

const only = { VirtualMCPServer: renderVirtualMCPServer };

let resources: Resource[];
let objects: KubeObject[];
let config: T.VirtualMCPConfig;

function pod(objs: KubeObject[], name: string): Pod {
  return (find(objs, "Deployment", name).spec as { template: Pod }).template;
}
function container(objs: KubeObject[], name: string): Container {
  const c = pod(objs, name).spec.containers.find((x) => x.name === "vmcp");
  if (c === undefined) throw new Error("no vmcp container");
  return c;
}
function envOf(
  objs: KubeObject[],
  name: string,
): Map<string, NonNullable<Container["env"]>[number]> {
  return new Map((container(objs, name).env ?? []).map((e) => [e.name, e]));
}

beforeAll(async () => {
  resources = await loadFixture();
  objects = synthesize(resources, undefined, only).objects;
  config = configOf(objects, "gateway-vmcp-config") as T.VirtualMCPConfig;
});

describe("VirtualMCPServer: backends from the group", () => {
  it("resolves every member of the group, sorted, by service URL; others are left out", () => {
    expect(config.groupRef).toBe("tools");
    expect(config.backends).toEqual([
      {
        name: "alpha",
        transport: "streamable-http",
        url: "http://mcp-alpha-proxy.team.svc.cluster.local:9000/mcp",
      },
      {
        name: "entry",
        transport: "streamable-http",
        type: "entry",
        url: "https://entry.example.com/mcp",
        caBundlePath: "/etc/vmcp-config/ca-bundles/entry/ca.crt",
      },
      {
        name: "remote",
        transport: "sse",
        url: "http://mcp-remote-remote-proxy.team.svc.cluster.local:8443/sse#remote",
      },
      {
        name: "stdio-sse",
        transport: "sse",
        url: "http://mcp-stdio-sse-proxy.team.svc.cluster.local:8080/sse#stdio-sse",
      },
    ]);
  });

  it("mounts the entry's CA bundle from its ConfigMap next to config.yaml", () => {
    const volume = pod(objects, "gateway").spec.volumes.find((v) => v.name === "vmcp-config");
    expect(volume?.projected?.sources).toContainEqual({
      configMap: { name: "entry-ca", items: [{ key: "tls.crt", path: "ca-bundles/entry/ca.crt" }] },
    });
  });

  it("resolveBackends is independent of input order", () => {
    const reversed = new ResourceSet([...resources].reverse());
    const forward = new ResourceSet(resources);
    expect(resolveBackends(reversed, NAMESPACE, "tools")).toEqual(
      resolveBackends(forward, NAMESPACE, "tools"),
    );
  });

  it("renders nothing when the group is missing", () => {
    const set = new ResourceSet(
      resources.map((r) =>
        r.kind === "VirtualMCPServer" && r.metadata.name === "plain"
          ? { ...r, spec: { ...r.spec, groupRef: "nope" } }
          : r,
      ),
    );
    const plain = set.get("VirtualMCPServer", NAMESPACE, "plain");
    expect(plain).toBeDefined();
    expectNotRendered(buildReported(plain as Resource<"VirtualMCPServer">, set), /MCPGroup nope/);
    const out = synthesize(set.all(), undefined, only).objects;
    expect(out.filter((o) => o.metadata.name.startsWith("plain"))).toEqual([]);
    expect(out.some((o) => o.metadata.name === "gateway")).toBe(true);
  });
});

describe("VirtualMCPServer: the rendered configuration", () => {
  it("validates against the virtual-server Config schema", () => {
    const issues = defaultSchemaSet().validateSchema(VMCP_CONFIG_SCHEMA_ID, config);
    expect(issues).toEqual([]);
    const plain = configOf(objects, "plain-vmcp-config");
    expect(defaultSchemaSet().validateSchema(VMCP_CONFIG_SCHEMA_ID, plain)).toEqual([]);
  });

  it("keeps the embedded config's own sections", () => {
    expect(config.name).toBe("gateway");
    expect(config.operational).toEqual({ failureHandling: { partialFailureMode: "best_effort" } });
  });

  it("resolves incoming OIDC from the MCPOIDCConfig, the secret as an env var name", () => {
    expect(config.incomingAuth).toEqual({
      type: "oidc",
      oidc: {
        issuer: "https://login.example.com",
        clientId: "gateway",
        clientSecretEnv: "VMCP_OIDC_CLIENT_SECRET",
        audience: "gateway",
        jwksUrl: "https://login.example.com/jwks",
        scopes: ["openid", "profile"],
      },
      authz: { type: "cedar", policies: ["permit(principal, action, resource);"] },
    });
    expect(
      envOf(objects, "gateway").get("VMCP_OIDC_CLIENT_SECRET")?.valueFrom?.secretKeyRef,
    ).toEqual({
      name: "oidc-client",
      key: "secret",
    });
  });

  it("uses the cluster issuer for a kubernetesServiceAccount MCPOIDCConfig", () => {
    const plain = configOf(objects, "plain-vmcp-config") as T.VirtualMCPConfig;
    expect(plain.incomingAuth).toEqual({
      type: "oidc",
      oidc: {
        issuer: "https://kubernetes.default.svc",
        audience: "plain",
        jwksAllowPrivateIp: true,
      },
    });
  });

  it("resolves outgoing auth per backend: discovered, by reference, bearer and token exchange", () => {
    expect(config.outgoingAuth).toEqual({
      source: "inline",
      backends: {
        alpha: {
          type: "header_injection",
          headerInjection: {
            headerName: "X-API-Key",
            headerValueEnv: "VMCP_AUTH_HEADER_HEADER_VALUE",
          },
        },
        remote: {
          type: "header_injection",
          headerInjection: {
            headerName: "Authorization",
            headerValueEnv: "VMCP_AUTH_BEARER_AUTHORIZATION",
          },
        },
        entry: {
          type: "token_exchange",
          tokenExchange: {
            tokenUrl: "https://sts.example.com/token",
            clientId: "vmcp",
            clientSecretEnv: "VMCP_AUTH_EXCHANGE_CLIENT_SECRET",
            audience: "entry-api",
            scopes: ["read"],
            subjectTokenType: "urn:ietf:params:oauth:token-type:id_token",
          },
        },
      },
    });
    const env = envOf(objects, "gateway");
    expect(env.get("VMCP_AUTH_HEADER_HEADER_VALUE")?.valueFrom?.secretKeyRef).toEqual({
      name: "header-secret",
      key: "value",
    });
    expect(env.get("VMCP_AUTH_BEARER_BEARER_TOKEN")?.valueFrom?.secretKeyRef).toEqual({
      name: "bearer-secret",
      key: "token",
    });
    expect(env.get("VMCP_AUTH_BEARER_AUTHORIZATION")?.value).toBe(
      "Bearer $(VMCP_AUTH_BEARER_BEARER_TOKEN)",
    );
    expect(env.get("VMCP_AUTH_EXCHANGE_CLIENT_SECRET")?.valueFrom?.secretKeyRef).toEqual({
      name: "exchange-client",
      key: "secret",
    });
    // $(VAR) expansion needs the referenced variable first.
    const names = [...env.keys()];
    expect(names.indexOf("VMCP_AUTH_BEARER_BEARER_TOKEN")).toBeLessThan(
      names.indexOf("VMCP_AUTH_BEARER_AUTHORIZATION"),
    );
  });

  it("defaults to discovered: each backend's own externalAuthConfigRef", () => {
    const plain = configOf(objects, "plain-vmcp-config") as T.VirtualMCPConfig;
    expect(plain.outgoingAuth).toEqual({
      source: "inline",
      backends: {
        alpha: {
          type: "header_injection",
          headerInjection: {
            headerName: "X-API-Key",
            headerValueEnv: "VMCP_AUTH_HEADER_HEADER_VALUE",
          },
        },
      },
    });
    expect(
      envOf(objects, "plain").get("VMCP_AUTH_HEADER_HEADER_VALUE")?.valueFrom?.secretKeyRef,
    ).toEqual({
      name: "header-secret",
      key: "value",
    });
  });

  it("warns, and sends no credentials, for an auth type a backend cannot use (awsSts)", () => {
    const set = new ResourceSet(resources);
    const { issues } = buildReported(
      set.get("VirtualMCPServer", NAMESPACE, "gateway") as Resource<"VirtualMCPServer">,
      set,
    );
    const warnings = issues.filter((i) => i.severity === "warning").map((i) => i.message);
    expect(warnings.some((w) => w.includes("aws") && w.includes("awsSts"))).toBe(true);
    expect(config.outgoingAuth?.backends?.["stdio-sse"]).toBeUndefined();
  });

  it("replaces a workload's toolConfigRef with the MCPToolConfig's filter and overrides", () => {
    expect(config.aggregation?.tools).toEqual([
      {
        workload: "alpha",
        filter: ["search", "fetch"],
        overrides: { fetch: { name: "alpha_fetch", description: "Fetch a page" } },
      },
    ]);
  });

  it("merges composite tool refs after the inline tools; an inline tool of the same name wins", () => {
    expect(config.compositeTools?.map((t) => t.name)).toEqual(["inline_flow", "shared_flow"]);
    expect(config.compositeTools?.[0]?.steps[0]?.id).toBe("first");
    expect(config.compositeToolRefs).toBeUndefined();
  });

  it("keeps an unresolved composite tool ref and warns", () => {
    const set = new ResourceSet(resources.filter((r) => r.metadata.name !== "shared-flow"));
    const { build, issues } = buildReported(
      set.get("VirtualMCPServer", NAMESPACE, "gateway") as Resource<"VirtualMCPServer">,
      set,
    );
    expect(build?.config.compositeToolRefs).toEqual([{ name: "shared-flow" }]);
    const warnings = issues.filter((i) => i.severity === "warning").map((i) => i.message);
    expect(warnings.join("\n")).toMatch(/shared-flow not found/);
  });

  it("renders telemetry from the MCPTelemetryConfig, sensitive headers through env", () => {
    expect(config.telemetry).toEqual({
      endpoint: "otel.example.com:4318",
      serviceName: "gateway-svc",
      headers: { "X-Tenant": "team" },
      tracingEnabled: true,
      metricsEnabled: true,
      samplingRate: "0.2",
      customAttributes: { env: "test" },
      enablePrometheusMetricsPath: true,
      caCertPath: "/etc/vmcp-config/telemetry-ca/ca.crt",
    });
    const env = envOf(objects, "gateway");
    expect(env.get("VMCP_OTEL_HEADER_0")?.valueFrom?.secretKeyRef).toEqual({
      name: "otel-auth",
      key: "bearer",
    });
    expect(env.get("OTEL_EXPORTER_OTLP_HEADERS")?.value).toBe(
      "Authorization=$(VMCP_OTEL_HEADER_0)",
    );
  });

  it("keeps inline telemetry as written", () => {
    const plain = configOf(objects, "plain-vmcp-config") as T.VirtualMCPConfig;
    expect(plain.telemetry).toEqual({ endpoint: "inline-otel:4318", tracingEnabled: true });
  });

  it("points the optimizer at the EmbeddingServer's URL, keeping the other optimizer settings", () => {
    expect(config.optimizer).toEqual({
      embeddingService: "http://embed.team.svc.cluster.local:8081",
      maxToolsToReturn: 5,
    });
  });

  it("writes session storage without the password, which comes from its Secret as env", () => {
    expect(config.sessionStorage).toEqual({
      provider: "redis",
      address: "redis:6379",
      db: 2,
      keyPrefix: "gw:",
    });
    expect(
      envOf(objects, "gateway").get("THV_SESSION_REDIS_PASSWORD")?.valueFrom?.secretKeyRef,
    ).toEqual({
      name: "redis",
      key: "password",
    });
  });

  it("never puts a secret value or a Secret name into a ConfigMap", async () => {
    const all = await loadFixture(`${FIXTURE}\n---\n${CORE_SECRETS}`);
    const text = configMapText(synthesize(all, undefined, only).objects);
    expect(text).toContain("gateway");
    for (const [name, data] of Object.entries(SECRET_VALUES)) {
      for (const value of Object.values(data)) expect(text).not.toContain(value);
      expect(text).not.toMatch(new RegExp(`["\\s:]${name}["\\s,]`));
    }
  });
});

describe("VirtualMCPServer: workload objects", () => {
  it("renders the Deployment's vmcp container with port http 4483 and its probes", () => {
    const c = container(objects, "gateway");
    expect(c.image).toBe("ghcr.io/stacklok/toolhive/vmcp:v0.47.0");
    expect(c.ports).toEqual([{ name: "http", containerPort: 4483, protocol: "TCP" }]);
    expect((c.livenessProbe as { httpGet: unknown }).httpGet).toEqual({
      path: "/health",
      port: "http",
    });
    expect((c.readinessProbe as { httpGet: unknown }).httpGet).toEqual({
      path: "/readyz",
      port: "http",
    });
    expect(c.resources).toEqual({ requests: { cpu: "100m", memory: "128Mi" } });
    expect(c.volumeMounts).toEqual([
      { name: "vmcp-config", mountPath: "/etc/vmcp-config", readOnly: true },
    ]);
  });

  it("carries the checksum of config.yaml, which changes when a referenced config changes", async () => {
    const cm = find(objects, "ConfigMap", "gateway-vmcp-config");
    const text = (cm.data as Record<string, string>)["config.yaml"];
    expect(pod(objects, "gateway").metadata.annotations[CONFIG_CHECKSUM_ANNOTATION]).toBe(
      contentHash(text),
    );
    const changed = await loadFixture(
      FIXTURE.replace("toolsFilter: [search, fetch]", "toolsFilter: [search]"),
    );
    const again = synthesize(changed, undefined, only).objects;
    expect(pod(again, "gateway").metadata.annotations[CONFIG_CHECKSUM_ANNOTATION]).not.toBe(
      pod(objects, "gateway").metadata.annotations[CONFIG_CHECKSUM_ANNOTATION],
    );
    expect(pod(again, "plain").metadata.annotations[CONFIG_CHECKSUM_ANNOTATION]).toBe(
      pod(objects, "plain").metadata.annotations[CONFIG_CHECKSUM_ANNOTATION],
    );
  });

  it("references the HMAC Secret and never renders it", () => {
    expect(
      envOf(objects, "gateway").get("VMCP_SESSION_HMAC_SECRET")?.valueFrom?.secretKeyRef,
    ).toEqual({
      name: "gateway-hmac-secret",
      key: "hmac-secret",
    });
    expect(objects.filter((o) => o.kind === "Secret")).toEqual([]);
  });

  it("renders Service vmcp-<name> with spec.serviceType, ClusterIP by default", () => {
    const svc = find(objects, "Service", "vmcp-gateway").spec as Record<string, unknown>;
    expect(svc.type).toBe("LoadBalancer");
    expect(svc.ports).toEqual([{ name: "http", port: 4483, targetPort: 4483, protocol: "TCP" }]);
    expect((find(objects, "Service", "vmcp-plain").spec as Record<string, unknown>).type).toBe(
      "ClusterIP",
    );
  });

  it("creates ServiceAccount <name>-vmcp only when serviceAccount is empty; RBAC <name>-vmcp binds the one used", () => {
    expect(find(objects, "ServiceAccount", "gateway-vmcp")).toBeDefined();
    expect(
      objects.some((o) => o.kind === "ServiceAccount" && o.metadata.name === "plain-vmcp"),
    ).toBe(false);
    const binding = find(objects, "RoleBinding", "plain-vmcp");
    expect(binding.subjects).toEqual([
      { kind: "ServiceAccount", name: "existing-sa", namespace: NAMESPACE },
    ]);
    expect(pod(objects, "plain").spec.serviceAccountName).toBe("existing-sa");
    const role = find(objects, "Role", "gateway-vmcp");
    const rules = role.rules as { resources: string[]; verbs: string[] }[];
    expect(rules.flatMap((r) => r.resources)).toContain("mcpservers");
    expect(rules.flatMap((r) => r.resources)).not.toContain("secrets");
  });

  it("gives the created ServiceAccount the image pull secrets of resourceOverrides", () => {
    expect(find(objects, "ServiceAccount", "gateway-vmcp").imagePullSecrets).toEqual([
      { name: "regcred" },
    ]);
  });

  it("writes replicas only when set", () => {
    expect((find(objects, "Deployment", "gateway").spec as Record<string, unknown>).replicas).toBe(
      3,
    );
    expect(
      "replicas" in (find(objects, "Deployment", "plain").spec as Record<string, unknown>),
    ).toBe(false);
  });

  it("merges podTemplateSpec into the vmcp container and the pod", () => {
    const p = pod(objects, "gateway");
    expect(p.spec.nodeSelector).toEqual({ pool: "mcp" });
    expect(envOf(objects, "gateway").get("LOG_FORMAT")?.value).toBe("json");
    expect(p.spec.containers.map((c) => c.name)).toEqual(["vmcp"]);
  });

  it("applies resourceOverrides to the Deployment, pod template, vmcp env and Service", () => {
    const dep = find(objects, "Deployment", "gateway");
    expect(dep.metadata.labels?.team).toBe("platform");
    expect(dep.metadata.annotations).toEqual({ owner: "platform" });
    const p = pod(objects, "gateway");
    expect(p.metadata.annotations.scrape).toBe("true");
    expect(p.spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(envOf(objects, "gateway").get("EXTRA")?.value).toBe("1");
    expect(find(objects, "Service", "vmcp-gateway").metadata.annotations).toEqual({
      lb: "internal",
    });
  });

  it("passes the Kubernetes checks", () => {
    expect(checkObjects(objects)).toEqual([]);
  });

  it("gives the same bytes whatever the input order", () => {
    const shuffled = [...resources].reverse();
    const a = toYaml(synthesize(resources, undefined, only).objects);
    const b = toYaml(synthesize(shuffled, undefined, only).objects);
    expect(b).toBe(a);
  });
});

// MCPRemoteProxy: objects by name and one test per spec field that shapes the output.
import { describe, expect, it } from "vitest";
import {
  NS,
  containerOf,
  envOf,
  find,
  podSpecOf,
  proxy,
  render,
  res,
  runConfigOf,
} from "./helpers.js";

type Obj = Record<string, unknown>;

describe("MCPRemoteProxy", () => {
  it("renders Deployment, Service mcp-<n>-remote-proxy, RBAC and run-config", () => {
    const objects = render([proxy("gh")]);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      "ConfigMap/gh-runconfig",
      "Deployment/gh",
      "Role/gh-remote-proxy-runner",
      "RoleBinding/gh-remote-proxy-runner",
      "Service/mcp-gh-remote-proxy",
      "ServiceAccount/gh-remote-proxy-runner",
    ]);
    expect(find(objects, "Role", "gh-remote-proxy-runner").rules).toEqual([
      { apiGroups: [""], resources: ["configmaps", "secrets"], verbs: ["get", "list", "watch"] },
    ]);
    const d = find(objects, "Deployment", "gh");
    expect(d.metadata.labels).toMatchObject({ app: "mcpremoteproxy", "toolhive-name": "gh" });
    expect(containerOf(d, "toolhive").livenessProbe).toMatchObject({
      httpGet: { path: "/health", port: "http" },
    });
    expect(runConfigOf(objects, "gh")).toMatchObject({
      remote_url: "https://mcp.example.com/mcp",
      transport: "streamable-http",
      port: 8080,
    });
  });

  it("accepts remoteUrl as the deprecated spelling of remoteURL", () => {
    const objects = render([
      res("MCPRemoteProxy", "old", { remoteUrl: "https://old.example.com/mcp" }),
    ]);
    expect(runConfigOf(objects, "old").remote_url).toBe("https://old.example.com/mcp");
  });

  it("proxyPort, transport and sessionAffinity", () => {
    const objects = render([
      proxy("p", { proxyPort: 9000, transport: "sse", sessionAffinity: "None" }),
    ]);
    const svc = find(objects, "Service", "mcp-p-remote-proxy").spec as Obj;
    expect(svc.ports).toEqual([{ name: "http", port: 9000, targetPort: 9000, protocol: "TCP" }]);
    expect(svc.sessionAffinity).toBe("None");
    expect(runConfigOf(objects, "p")).toMatchObject({ transport: "sse", port: 9000 });
  });

  it("resources apply to the proxy container", () => {
    const resources = { limits: { cpu: "200m", memory: "256Mi" } };
    const d = find(render([proxy("p", { resources })]), "Deployment", "p");
    expect(containerOf(d, "toolhive").resources).toEqual(resources);
  });

  it("serviceAccount: an existing account is bound and used, none is created", () => {
    const objects = render([proxy("p", { serviceAccount: "mine" })]);
    expect(objects.some((o) => o.kind === "ServiceAccount")).toBe(false);
    expect(podSpecOf(find(objects, "Deployment", "p")).serviceAccountName).toBe("mine");
    expect(find(objects, "RoleBinding", "p-remote-proxy-runner").subjects).toEqual([
      { kind: "ServiceAccount", name: "mine", namespace: NS },
    ]);
  });

  it("starts the runner with one positional argument; the URL is the run-config's remote_url", () => {
    // `thv-proxyrunner run` needs exactly one argument and ignores flags it does not know.
    const objects = render([proxy("p")]);
    expect(containerOf(find(objects, "Deployment", "p"), "toolhive").args).toEqual([
      "run",
      "--foreground=true",
      "placeholder-for-remote-proxy",
    ]);
    expect(runConfigOf(objects, "p").remote_url).toBe("https://mcp.example.com/mcp");
  });

  it("headerForward: plaintext headers in the config, secret headers through the provider", () => {
    const objects = render([
      proxy("p", {
        headerForward: {
          addPlaintextHeaders: { "X-Tenant": "a" },
          addHeadersFromSecret: [
            { headerName: "X-Api-Key", valueSecretRef: { name: "k", key: "v" } },
          ],
        },
      }),
    ]);
    expect(runConfigOf(objects, "p").header_forward).toEqual({
      add_plaintext_headers: { "X-Tenant": "a" },
      add_headers_from_secret: { "X-Api-Key": "k" },
    });
    expect(envOf(containerOf(find(objects, "Deployment", "p"), "toolhive"))).toContainEqual({
      name: "TOOLHIVE_SECRET_k",
      valueFrom: { secretKeyRef: { name: "k", key: "v" } },
    });
  });

  it("OIDC, authz, audit, telemetry, tool config and external auth", () => {
    const objects = render([
      res("MCPOIDCConfig", "oidc", {
        type: "inline",
        inline: { issuer: "https://id.example.com" },
      }),
      res("MCPToolConfig", "tools", { toolsFilter: ["x"] }),
      res("MCPExternalAuthConfig", "ext", {
        type: "tokenExchange",
        tokenExchange: { tokenUrl: "https://sts.example.com/t", audience: "gh" },
      }),
      proxy("p", {
        oidcConfigRef: { name: "oidc", audience: "p" },
        authzConfig: {
          type: "inline",
          inline: { policies: ["permit(principal, action, resource);"] },
        },
        audit: { enabled: true },
        telemetry: { openTelemetry: { enabled: true, endpoint: "otel:4318" } },
        toolConfigRef: { name: "tools" },
        externalAuthConfigRef: { name: "ext" },
        trustProxyHeaders: true,
        endpointPrefix: "/p",
      }),
    ]);
    const rc = runConfigOf(objects, "p");
    expect(rc.oidc_config).toMatchObject({
      issuer: "https://id.example.com",
      audience: "p",
      resourceUrl: `http://mcp-p-remote-proxy.${NS}.svc.cluster.local:8080/mcp`,
    });
    expect(rc.authz_config).toMatchObject({ type: "cedarv1" });
    expect(rc.audit_config).toMatchObject({ enabled: true });
    expect(rc.telemetry_config).toMatchObject({ endpoint: "otel:4318", serviceName: "p" });
    expect(rc.tools_filter).toEqual(["x"]);
    expect(rc.token_exchange_config).toMatchObject({
      token_url: "https://sts.example.com/t",
      audience: "gh",
    });
    expect(rc).toMatchObject({ trust_proxy_headers: true, endpoint_prefix: "/p" });
  });

  it("resourceOverrides reach the Deployment, pod template and Service", () => {
    const objects = render([
      proxy("p", {
        resourceOverrides: {
          proxyDeployment: {
            annotations: { a: "1" },
            env: [{ name: "E", value: "v" }],
            imagePullSecrets: [{ name: "pull" }],
          },
          proxyService: { annotations: { b: "2" } },
        },
      }),
    ]);
    const d = find(objects, "Deployment", "p");
    expect(d.metadata.annotations).toEqual({ a: "1" });
    expect(envOf(containerOf(d, "toolhive"))).toContainEqual({ name: "E", value: "v" });
    expect(podSpecOf(d).imagePullSecrets).toEqual([{ name: "pull" }]);
    expect(find(objects, "Service", "mcp-p-remote-proxy").metadata.annotations).toEqual({ b: "2" });
  });
});

// MCPServer: one test per spec field that affects what is rendered (set it, see it).
import { describe, expect, it } from "vitest";
import { resourcesOfText } from "../../src/synth/load.js";
import { ResourceSet } from "../../src/synth/model.js";
import { computeStatus } from "../../src/synth/status.js";
import { RUNCONFIG_CHECKSUM } from "../../src/synth/runner.js";
import {
  NS,
  containerOf,
  envOf,
  find,
  podPatchOf,
  podSpecOf,
  render,
  res,
  runConfigOf,
  server,
} from "./helpers.js";

type Obj = Record<string, unknown>;

function checksum(objects: ReturnType<typeof render>, name: string): string {
  const d = find(objects, "Deployment", name);
  const meta = ((d.spec as Obj).template as Obj).metadata as {
    annotations: Record<string, string>;
  };
  return meta.annotations[RUNCONFIG_CHECKSUM] ?? "";
}

describe("MCPServer objects", () => {
  it("renders the runner Deployment, Service, RBAC, ServiceAccounts and run-config by name", () => {
    const objects = render([server("fetch")]);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      "ConfigMap/fetch-runconfig",
      "Deployment/fetch",
      "Role/fetch-proxy-runner",
      "RoleBinding/fetch-proxy-runner",
      "Service/mcp-fetch-proxy",
      "ServiceAccount/fetch-proxy-runner",
      "ServiceAccount/fetch-sa",
    ]);
    for (const o of objects) {
      expect(o.metadata.namespace).toBe(NS);
      expect(o.metadata.labels).toMatchObject({
        app: "mcpserver",
        "app.kubernetes.io/name": "mcpserver",
        "app.kubernetes.io/instance": "fetch",
        toolhive: "true",
        "toolhive-name": "fetch",
      });
    }
  });

  it("runs the runner image with run --k8s-pod-patch <image>, port http and /health probes", () => {
    const objects = render([server("fetch")], {
      runnerImage: "registry.local/runner:9",
      vmcpImage: "v",
      registryServer: "mcpfleet",
      registryImage: "r",
      embeddingImage: "e",
    });
    const d = find(objects, "Deployment", "fetch");
    const runner = containerOf(d, "toolhive");
    expect(runner.image).toBe("registry.local/runner:9");
    const args = runner.args as string[];
    expect(args[0]).toBe("run");
    expect(args[1]).toMatch(/^--k8s-pod-patch=\{/);
    expect(args[2]).toBe("ghcr.io/example/server:1.0.0");
    expect(runner.ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }]);
    expect(runner.livenessProbe).toMatchObject({ httpGet: { path: "/health", port: "http" } });
    expect(runner.readinessProbe).toMatchObject({ httpGet: { path: "/health", port: "http" } });
    expect(podSpecOf(d).serviceAccountName).toBe("fetch-proxy-runner");
  });

  it("grants the runner exactly the reference operator's rules", () => {
    const role = find(render([server("fetch")]), "Role", "fetch-proxy-runner");
    expect(role.rules).toEqual([
      {
        apiGroups: ["apps"],
        resources: ["statefulsets"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
      {
        apiGroups: [""],
        resources: ["services"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
      { apiGroups: [""], resources: ["pods/attach"], verbs: ["create", "get"] },
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] },
    ]);
    const binding = find(render([server("fetch")]), "RoleBinding", "fetch-proxy-runner");
    expect(binding.subjects).toEqual([
      { kind: "ServiceAccount", name: "fetch-proxy-runner", namespace: NS },
    ]);
  });

  it("mounts the run-config and puts its checksum on the pod template", () => {
    const objects = render([server("fetch")]);
    const d = find(objects, "Deployment", "fetch");
    expect(podSpecOf(d).volumes).toContainEqual({
      name: "runconfig",
      configMap: { name: "fetch-runconfig" },
    });
    expect(containerOf(d, "toolhive").volumeMounts).toContainEqual({
      name: "runconfig",
      mountPath: "/etc/runconfig",
      readOnly: true,
    });
    expect(checksum(objects, "fetch")).toMatch(/^[0-9a-f]{64}$/);
    expect(runConfigOf(objects, "fetch")).toMatchObject({
      schema_version: "v0.1.0",
      name: "fetch",
      image: "ghcr.io/example/server:1.0.0",
      transport: "stdio",
      port: 8080,
    });
  });
});

describe("MCPServer fields", () => {
  it("image", () => {
    const objects = render([server("s", { image: "docker.io/mcp/time:2" })]);
    expect(runConfigOf(objects, "s").image).toBe("docker.io/mcp/time:2");
    expect(containerOf(find(objects, "Deployment", "s"), "toolhive").args).toContain(
      "docker.io/mcp/time:2",
    );
  });

  it("transport and proxyMode: stdio uses proxyMode; other transports serve their own", () => {
    const stdio = runConfigOf(render([server("s", { proxyMode: "sse" })]), "s");
    expect(stdio).toMatchObject({ transport: "stdio", proxy_mode: "sse" });
    const stdioDefault = runConfigOf(render([server("s")]), "s");
    expect(stdioDefault.proxy_mode).toBe("streamable-http");
    const http = runConfigOf(
      render([server("s", { transport: "streamable-http", proxyMode: "sse" })]),
      "s",
    );
    expect(http.transport).toBe("streamable-http");
    expect(http.proxy_mode).toBe("streamable-http");
  });

  it("proxyPort and mcpPort", () => {
    const objects = render([server("s", { transport: "sse", proxyPort: 9090, mcpPort: 3000 })]);
    expect(containerOf(find(objects, "Deployment", "s"), "toolhive").ports).toEqual([
      { name: "http", containerPort: 9090, protocol: "TCP" },
    ]);
    expect((find(objects, "Service", "mcp-s-proxy").spec as Obj).ports).toEqual([
      { name: "http", port: 9090, targetPort: 9090, protocol: "TCP" },
    ]);
    expect(runConfigOf(objects, "s")).toMatchObject({ port: 9090, target_port: 3000 });
  });

  it("args go to the server through the run-config, not the runner's command line", () => {
    const objects = render([server("s", { args: ["--tz=UTC", "-v"] })]);
    expect(runConfigOf(objects, "s").cmd_args).toEqual(["--tz=UTC", "-v"]);
    const args = containerOf(find(objects, "Deployment", "s"), "toolhive").args as string[];
    expect(args).toHaveLength(3);
    expect(args[2]).toBe("ghcr.io/example/server:1.0.0");
  });

  it("env is the server's, in the run-config", () => {
    const objects = render([server("s", { env: [{ name: "LOG_LEVEL", value: "debug" }] })]);
    expect(runConfigOf(objects, "s").env_vars).toEqual({ LOG_LEVEL: "debug" });
  });

  it("volumes: Kubernetes volumes mount at /mnt/<name>; the reference form mounts where it says", () => {
    const objects = render([
      server("s", {
        volumes: [
          { name: "data", persistentVolumeClaim: { claimName: "data-pvc" } },
          { name: "cfg", hostPath: "/srv/cfg", mountPath: "/config", readOnly: true },
        ],
      }),
    ]);
    const patch = podPatchOf(find(objects, "Deployment", "s")) as {
      spec: { volumes: Obj[]; containers: Obj[] };
    };
    expect(patch.spec.volumes).toEqual([
      { name: "data", persistentVolumeClaim: { claimName: "data-pvc" } },
      { name: "cfg", hostPath: { path: "/srv/cfg" } },
    ]);
    expect(patch.spec.containers[0]?.volumeMounts).toEqual([
      { name: "data", mountPath: "/mnt/data" },
      { name: "cfg", mountPath: "/config", readOnly: true },
    ]);
  });

  it("resources go to the mcp container; the runner keeps its own", () => {
    const resources = { limits: { cpu: "1", memory: "1Gi" }, requests: { cpu: "100m" } };
    const objects = render([server("s", { resources })]);
    const patch = podPatchOf(find(objects, "Deployment", "s")) as { spec: { containers: Obj[] } };
    expect(patch.spec.containers[0]).toMatchObject({ name: "mcp", resources });
    expect(containerOf(find(objects, "Deployment", "s"), "toolhive").resources).not.toEqual(
      resources,
    );
  });

  it("secrets become env from secretKeyRef on the mcp container, never values", () => {
    const objects = render([
      server("s", {
        secrets: [
          { name: "gh", key: "token", targetEnvName: "GITHUB_TOKEN" },
          { name: "api", key: "API_KEY" },
        ],
      }),
    ]);
    const patch = podPatchOf(find(objects, "Deployment", "s")) as { spec: { containers: Obj[] } };
    expect(envOf(patch.spec.containers[0] ?? {})).toEqual([
      { name: "GITHUB_TOKEN", valueFrom: { secretKeyRef: { name: "gh", key: "token" } } },
      { name: "API_KEY", valueFrom: { secretKeyRef: { name: "api", key: "API_KEY" } } },
    ]);
    // Listed in the run-config, the runner would ask a secrets provider for them and stop.
    expect(runConfigOf(objects, "s").secrets).toBeUndefined();
    expect(runConfigOf(objects, "s").k8s_pod_template_patch).toBeUndefined();
  });

  it("serviceAccount: created as <n>-sa when empty, used as given otherwise", () => {
    const own = render([server("s", { serviceAccount: "existing" })]);
    expect(own.some((o) => o.kind === "ServiceAccount" && o.metadata.name === "s-sa")).toBe(false);
    expect(
      (podPatchOf(find(own, "Deployment", "s")) as { spec: Obj }).spec.serviceAccountName,
    ).toBe("existing");
    const created = render([server("s")]);
    expect(find(created, "ServiceAccount", "s-sa")).toBeDefined();
    expect(
      (podPatchOf(find(created, "Deployment", "s")) as { spec: Obj }).spec.serviceAccountName,
    ).toBe("s-sa");
  });

  it("permissionProfile: builtin by name, configmap as a mounted file", () => {
    expect(
      runConfigOf(
        render([server("s", { permissionProfile: { type: "builtin", name: "network" } })]),
        "s",
      ).permission_profile_name_or_path,
    ).toBe("network");
    const objects = render([
      server("s", { permissionProfile: { type: "configmap", name: "perm", key: "p.json" } }),
    ]);
    expect(runConfigOf(objects, "s").permission_profile_name_or_path).toBe(
      "/etc/toolhive/configmaps/perm/p.json",
    );
    expect(podSpecOf(find(objects, "Deployment", "s")).volumes).toContainEqual({
      name: "cm-perm",
      configMap: { name: "perm" },
    });
  });

  it("podTemplateSpec is merged into the mcp container and pod", () => {
    const objects = render([
      server("s", {
        resources: { limits: { cpu: "1", memory: "1Gi" } },
        secrets: [{ name: "gh", key: "token", targetEnvName: "TOKEN" }],
        podTemplateSpec: {
          metadata: { labels: { extra: "yes" } },
          spec: {
            nodeSelector: { pool: "mcp" },
            tolerations: [{ key: "mcp", operator: "Exists" }],
            containers: [
              {
                name: "mcp",
                resources: { limits: { memory: "2Gi" } },
                env: [{ name: "TOKEN", value: "override" }],
                securityContext: { readOnlyRootFilesystem: true },
              },
              { name: "sidecar", image: "busybox" },
            ],
          },
        },
      }),
    ]);
    const patch = podPatchOf(find(objects, "Deployment", "s")) as {
      metadata: Obj;
      spec: { containers: Obj[]; nodeSelector: Obj; tolerations: Obj[] };
    };
    expect(patch.metadata).toEqual({ labels: { extra: "yes" } });
    expect(patch.spec.nodeSelector).toEqual({ pool: "mcp" });
    expect(patch.spec.tolerations).toEqual([{ key: "mcp", operator: "Exists" }]);
    expect(patch.spec.containers.map((c) => c.name)).toEqual(["mcp", "sidecar"]);
    expect(patch.spec.containers[0]).toMatchObject({
      resources: { limits: { cpu: "1", memory: "2Gi" } },
      env: [{ name: "TOKEN", value: "override" }],
      securityContext: { readOnlyRootFilesystem: true },
    });
  });

  it("resourceOverrides: labels, annotations, proxy env and imagePullSecrets", () => {
    const objects = render([
      server("s", {
        resourceOverrides: {
          proxyDeployment: {
            labels: { team: "a", app: "not-allowed" },
            annotations: { "example.com/owner": "a" },
            podTemplateMetadataOverrides: {
              labels: { tier: "mcp" },
              annotations: { "prometheus.io/scrape": "true" },
            },
            env: [{ name: "TOOLHIVE_DEBUG", value: "true" }],
            imagePullSecrets: [{ name: "ghcr" }],
          },
          proxyService: { labels: { exposed: "yes" }, annotations: { "example.com/dns": "s" } },
        },
      }),
    ]);
    const d = find(objects, "Deployment", "s");
    expect(d.metadata.labels).toMatchObject({ team: "a", app: "mcpserver" });
    expect(d.metadata.annotations).toEqual({ "example.com/owner": "a" });
    const tmeta = ((d.spec as Obj).template as Obj).metadata as {
      labels: Obj;
      annotations: Obj;
    };
    expect(tmeta.labels).toMatchObject({ tier: "mcp", app: "mcpserver" });
    expect(tmeta.annotations).toMatchObject({ "prometheus.io/scrape": "true" });
    expect(tmeta.annotations[RUNCONFIG_CHECKSUM]).toBeDefined();
    expect(envOf(containerOf(d, "toolhive"))).toContainEqual({
      name: "TOOLHIVE_DEBUG",
      value: "true",
    });
    expect(podSpecOf(d).imagePullSecrets).toEqual([{ name: "ghcr" }]);
    expect(find(objects, "ServiceAccount", "s-proxy-runner").imagePullSecrets).toEqual([
      { name: "ghcr" },
    ]);
    const svc = find(objects, "Service", "mcp-s-proxy");
    expect(svc.metadata.labels).toMatchObject({ exposed: "yes" });
    expect(svc.metadata.annotations).toEqual({ "example.com/dns": "s" });
  });

  it("trustProxyHeaders and endpointPrefix", () => {
    const rc = runConfigOf(
      render([server("s", { trustProxyHeaders: true, endpointPrefix: "/team-a/s" })]),
      "s",
    );
    expect(rc).toMatchObject({ trust_proxy_headers: true, endpoint_prefix: "/team-a/s" });
    expect(runConfigOf(render([server("s")]), "s").trust_proxy_headers).toBe(false);
  });

  it("sessionAffinity defaults to ClientIP", () => {
    const spec = (o: ReturnType<typeof render>): Obj =>
      find(o, "Service", "mcp-s-proxy").spec as Obj;
    expect(spec(render([server("s")])).sessionAffinity).toBe("ClientIP");
    expect(spec(render([server("s", { sessionAffinity: "None" })])).sessionAffinity).toBe("None");
  });

  it("replicas and backendReplicas are omitted when unset and capped at 1 for stdio", () => {
    const unset = render([server("s", { transport: "sse" })]);
    expect((find(unset, "Deployment", "s").spec as Obj).replicas).toBeUndefined();
    expect(runConfigOf(unset, "s").scaling_config).toBeUndefined();
    const http = render([server("s", { transport: "sse", replicas: 3, backendReplicas: 4 })]);
    expect((find(http, "Deployment", "s").spec as Obj).replicas).toBe(3);
    expect(runConfigOf(http, "s").scaling_config).toEqual({ backend_replicas: 4 });
    const stdio = render([server("s", { replicas: 3, backendReplicas: 4 })]);
    expect((find(stdio, "Deployment", "s").spec as Obj).replicas).toBe(1);
    expect(runConfigOf(stdio, "s").scaling_config).toEqual({ backend_replicas: 1 });
    const zero = render([server("s", { replicas: 0 })]);
    expect((find(zero, "Deployment", "s").spec as Obj).replicas).toBe(0);
  });

  it("telemetry inline", () => {
    const rc = runConfigOf(
      render([
        server("s", {
          telemetry: {
            openTelemetry: {
              enabled: true,
              endpoint: "otel:4318",
              headers: ["x-org=a"],
              tracing: { enabled: true, samplingRate: "0.5" },
              metrics: { enabled: true },
            },
            prometheus: { enabled: true },
          },
        }),
      ]),
      "s",
    );
    expect(rc.telemetry_config).toEqual({
      endpoint: "otel:4318",
      serviceName: "s",
      tracingEnabled: true,
      metricsEnabled: true,
      samplingRate: "0.5",
      headers: { "x-org": "a" },
      insecure: false,
      enablePrometheusMetricsPath: true,
      useLegacyAttributes: true,
    });
  });

  it("telemetry by MCPTelemetryConfig reference, sensitive headers from secrets", () => {
    const telemetry = res("MCPTelemetryConfig", "otel", {
      openTelemetry: {
        enabled: true,
        endpoint: "otel:4318",
        sensitiveHeaders: [{ name: "Authorization", secretKeyRef: { name: "otel", key: "t" } }],
        tracing: { enabled: true },
        caBundleRef: { configMapRef: { name: "ca" } },
      },
    });
    const objects = render([
      telemetry,
      server("s", { telemetryConfigRef: { name: "otel", serviceName: "svc" } }),
    ]);
    const rc = runConfigOf(objects, "s");
    expect(rc.telemetry_config).toMatchObject({
      endpoint: "otel:4318",
      serviceName: "svc",
      tracingEnabled: true,
      metricsEnabled: false,
      caCertPath: "/etc/toolhive/configmaps/ca/ca.crt",
    });
    // The runner merges every TOOLHIVE_OTEL_HEADER_<NAME> into the exporter's headers.
    expect(JSON.stringify(rc)).not.toContain("TOOLHIVE_OTEL_HEADER");
    expect(envOf(containerOf(find(objects, "Deployment", "s"), "toolhive"))).toContainEqual({
      name: "TOOLHIVE_OTEL_HEADER_AUTHORIZATION",
      valueFrom: { secretKeyRef: { name: "otel", key: "t" } },
    });
  });

  it("audit", () => {
    expect(
      runConfigOf(render([server("s", { audit: { enabled: true } })]), "s").audit_config,
    ).toEqual({ enabled: true, component: "s", maxDataSize: 1024 });
    expect(runConfigOf(render([server("s")]), "s").audit_config).toBeUndefined();
  });

  it("OIDC by MCPOIDCConfig reference with the server's audience", () => {
    const oidc = res("MCPOIDCConfig", "corp", {
      type: "inline",
      inline: {
        issuer: "https://id.example.com",
        clientId: "c",
        clientSecretRef: { name: "oidc", key: "secret" },
      },
    });
    const objects = render([
      oidc,
      server("s", { oidcConfigRef: { name: "corp", audience: "s-aud" } }),
    ]);
    expect(runConfigOf(objects, "s").oidc_config).toMatchObject({
      issuer: "https://id.example.com",
      audience: "s-aud",
      clientId: "c",
      scopes: ["openid"],
      resourceUrl: `http://mcp-s-proxy.${NS}.svc.cluster.local:8080/mcp`,
    });
    // The runner reads the client secret from this variable when the file has none.
    expect(envOf(containerOf(find(objects, "Deployment", "s"), "toolhive"))).toContainEqual({
      name: "TOOLHIVE_OIDC_CLIENT_SECRET",
      valueFrom: { secretKeyRef: { name: "oidc", key: "secret" } },
    });
    expect(JSON.stringify(runConfigOf(objects, "s"))).not.toContain('"secret"');
  });

  it("OIDC by reference to a kubernetesServiceAccount MCPOIDCConfig", () => {
    const oidc = res("MCPOIDCConfig", "k8s", {
      type: "kubernetesServiceAccount",
      kubernetesServiceAccount: { serviceAccount: "agent" },
    });
    const rc = runConfigOf(
      render([oidc, server("s", { oidcConfigRef: { name: "k8s", audience: "a" } })]),
      "s",
    );
    expect(rc.oidc_config).toMatchObject({
      audience: "a",
      issuer: "https://kubernetes.default.svc",
      caCertPath: "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
      authTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
      allowPrivateIP: true,
    });
  });

  it("OIDC inline (deprecated): kubernetes and inline; a ConfigMap's renders no server", () => {
    const k8s = runConfigOf(render([server("s", { oidcConfig: { type: "kubernetes" } })]), "s");
    expect(k8s.oidc_config).toMatchObject({ audience: "toolhive" });
    // Synthesis cannot read the ConfigMap, and a server without the authentication asked for
    // must not run: nothing is rendered for it.
    const cmObjects = render([
      server("s", { oidcConfig: { type: "configMap", configMap: { name: "oidc-cm" } } }),
    ]);
    expect(cmObjects).toEqual([]);
    const status = computeStatus(
      server("s", { oidcConfig: { type: "configMap", configMap: { name: "oidc-cm" } } }),
      new ResourceSet([]),
    );
    expect(status).toMatchObject({ phase: "Failed" });
    const inline = runConfigOf(
      render([
        server("s", {
          oidcConfig: {
            type: "inline",
            resourceUrl: "https://s.example.com/mcp",
            inline: { issuer: "https://id.example.com", audience: "x" },
          },
        }),
      ]),
      "s",
    );
    expect(inline.oidc_config).toMatchObject({
      audience: "x",
      resourceUrl: "https://s.example.com/mcp",
    });
  });

  it("authz: inline policies in the config, a ConfigMap as a mounted file", () => {
    const inline = runConfigOf(
      render([
        server("s", {
          authzConfig: {
            type: "inline",
            inline: { policies: ["permit(principal, action, resource);"] },
          },
        }),
      ]),
      "s",
    );
    expect(inline.authz_config).toEqual({
      version: "1.0",
      type: "cedarv1",
      cedar: { policies: ["permit(principal, action, resource);"], entitiesJson: "[]" },
    });
    const cm = render([server("s", { authzConfig: { configMap: { name: "authz" } } })]);
    expect(runConfigOf(cm, "s").authz_config_path).toBe(
      "/etc/toolhive/configmaps/authz/authz.json",
    );
  });

  it("external auth: in the sections the runner reads, secrets as env from secretKeyRef", () => {
    // [spec, run-config section expected, env var expected, Secret key]
    const cases: [unknown, Record<string, unknown>, string, string][] = [
      [
        {
          type: "tokenExchange",
          tokenExchange: {
            tokenUrl: "https://sts.example.com/token",
            audience: "backend",
            subjectTokenType: "id_token",
            clientSecretRef: { name: "sec", key: "k1" },
          },
        },
        {
          token_exchange_config: {
            token_url: "https://sts.example.com/token",
            client_id: "",
            client_secret: "",
            audience: "backend",
            subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
            header_strategy: "replace",
          },
        },
        "TOOLHIVE_TOKEN_EXCHANGE_CLIENT_SECRET",
        "k1",
      ],
      [
        {
          type: "headerInjection",
          headerInjection: { headerName: "X-Key", valueSecretRef: { name: "sec", key: "k2" } },
        },
        { header_forward: { add_headers_from_secret: { "X-Key": "sec" } } },
        "TOOLHIVE_SECRET_sec",
        "k2",
      ],
      [
        { type: "bearerToken", bearerToken: { tokenSecretRef: { name: "sec", key: "k3" } } },
        { remote_auth_config: { bearer_token: "sec,target=bearer_token" } },
        "TOOLHIVE_SECRET_sec",
        "k3",
      ],
    ];
    for (const [spec, section, env, key] of cases) {
      const objects = render([
        res("MCPExternalAuthConfig", "ext", spec),
        server("s", { externalAuthConfigRef: { name: "ext" } }),
      ]);
      expect(runConfigOf(objects, "s")).toMatchObject(section);
      const runnerEnv = envOf(containerOf(find(objects, "Deployment", "s"), "toolhive"));
      expect(runnerEnv).toContainEqual({
        name: env,
        valueFrom: { secretKeyRef: { name: "sec", key } },
      });
      if (env.startsWith("TOOLHIVE_SECRET_"))
        expect(runnerEnv).toContainEqual({
          name: "TOOLHIVE_SECRETS_PROVIDER",
          value: "environment",
        });
      const cm = JSON.stringify(find(objects, "ConfigMap", "s-runconfig").data);
      expect(cm).not.toContain("secretKeyRef");
      expect(cm).not.toContain("SecretRef");
    }
  });

  it("embedded authorization server by authServerRef: keys as mounted files, redis credentials as env", () => {
    const auth = res("MCPExternalAuthConfig", "as", {
      type: "embeddedAuthServer",
      embeddedAuthServer: {
        issuer: "https://auth.example.com",
        signingKeySecretRefs: [{ name: "keys", key: "current.pem" }],
        hmacSecretRefs: [{ name: "hmac", key: "current" }],
        upstreamProviders: [
          {
            name: "corp",
            type: "oidc",
            oidcConfig: {
              issuerUrl: "https://id.example.com",
              clientId: "c",
              clientSecretRef: { name: "up", key: "s" },
            },
          },
        ],
      },
    });
    const objects = render([auth, server("s", { authServerRef: { name: "as" } })]);
    const rc = runConfigOf(objects, "s");
    expect(rc.embedded_auth_server_config).toMatchObject({
      issuer: "https://auth.example.com",
      signing_key_config: { signing_key_file: "/etc/toolhive/secrets/keys/current.pem" },
      hmac_secret_files: ["/etc/toolhive/secrets/hmac/current"],
      allowed_audiences: [`http://mcp-s-proxy.${NS}.svc.cluster.local:8080/mcp`],
      upstreams: [
        {
          name: "corp",
          type: "oidc",
          oidc_config: {
            issuer_url: "https://id.example.com",
            client_id: "c",
            client_secret_env_var: "TOOLHIVE_UPSTREAM_CORP_CLIENT_SECRET",
            redirect_uri: `http://mcp-s-proxy.${NS}.svc.cluster.local:8080/mcp/oauth/callback`,
          },
        },
      ],
    });
    const d = find(objects, "Deployment", "s");
    expect(podSpecOf(d).volumes).toContainEqual({
      name: "secret-keys",
      secret: { secretName: "keys" },
    });
    expect(envOf(containerOf(d, "toolhive"))).toContainEqual({
      name: "TOOLHIVE_UPSTREAM_CORP_CLIENT_SECRET",
      valueFrom: { secretKeyRef: { name: "up", key: "s" } },
    });
  });

  it("tool config filter and overrides from MCPToolConfig", () => {
    const tools = res("MCPToolConfig", "tools", {
      toolsFilter: ["a", "b"],
      toolsOverride: { a: { name: "renamed", description: "d" } },
    });
    const rc = runConfigOf(render([tools, server("s", { toolConfigRef: { name: "tools" } })]), "s");
    expect(rc.tools_filter).toEqual(["a", "b"]);
    expect(rc.tools_override).toEqual({ a: { name: "renamed", description: "d" } });
  });

  it("rate limiting", () => {
    const rateLimiting = {
      shared: { maxTokens: 10, refillPeriod: "1m" },
      tools: [{ name: "t", shared: { maxTokens: 1, refillPeriod: "1h" } }],
    };
    expect(runConfigOf(render([server("s", { rateLimiting })]), "s").rate_limit_config).toEqual(
      rateLimiting,
    );
  });

  it("session storage: the redis password comes from its secret", () => {
    const objects = render([
      server("s", {
        sessionStorage: {
          provider: "redis",
          address: "redis:6379",
          keyPrefix: "s:",
          passwordRef: { name: "redis", key: "password" },
        },
      }),
    ]);
    expect(runConfigOf(objects, "s").scaling_config).toEqual({
      session_redis: { address: "redis:6379", db: 0, key_prefix: "s:" },
    });
    expect(envOf(containerOf(find(objects, "Deployment", "s"), "toolhive"))).toContainEqual({
      name: "THV_SESSION_REDIS_PASSWORD",
      valueFrom: { secretKeyRef: { name: "redis", key: "password" } },
    });
  });

  it("groupRef as a string or {name}", () => {
    const group = res("MCPGroup", "g", {});
    expect(runConfigOf(render([group, server("s", { groupRef: "g" })]), "s").group).toBe("g");
    expect(runConfigOf(render([group, server("s", { groupRef: { name: "g" } })]), "s").group).toBe(
      "g",
    );
  });
});

describe("MCPServer run-config checksum", () => {
  const base = [
    res("MCPToolConfig", "tools", { toolsFilter: ["a"] }),
    res("MCPOIDCConfig", "oidc", { type: "inline", inline: { issuer: "https://id.example.com" } }),
    res("MCPTelemetryConfig", "otel", { openTelemetry: { enabled: true, endpoint: "otel:4318" } }),
    res("MCPExternalAuthConfig", "ext", { type: "unauthenticated" }),
  ];
  const s = server("s", {
    toolConfigRef: { name: "tools" },
    oidcConfigRef: { name: "oidc", audience: "s" },
    telemetryConfigRef: { name: "otel" },
    externalAuthConfigRef: { name: "ext" },
  });
  const before = checksum(render([...base, s]), "s");

  it.each([
    ["MCPToolConfig", 0, { toolsFilter: ["a", "b"] }],
    ["MCPOIDCConfig", 1, { type: "inline", inline: { issuer: "https://id2.example.com" } }],
    ["MCPTelemetryConfig", 2, { openTelemetry: { enabled: true, endpoint: "otel2:4318" } }],
    [
      "MCPExternalAuthConfig",
      3,
      { type: "bearerToken", bearerToken: { tokenSecretRef: { name: "t", key: "k" } } },
    ],
  ] as const)("changes when a referenced %s changes, so the pods roll", (_kind, index, spec) => {
    const changed = base.map((r, i) => (i === index ? { ...r, spec } : r)) as typeof base;
    expect(checksum(render([...changed, s]), "s")).not.toBe(before);
  });

  it("does not change when an unrelated resource changes", () => {
    expect(checksum(render([...base, s, res("MCPToolConfig", "other", {})]), "s")).toBe(before);
  });
});

describe("MCPServer from YAML", () => {
  it("treats null fields as absent, as the API server does", () => {
    const [s] = resourcesOfText(
      "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\nmetadata:\n  name: n\n  namespace: team-a\nspec:\n  image: img:1\n  env:\n  args:\n",
      "default",
    );
    expect(s?.spec).toEqual({ image: "img:1" });
    const objects = render(s === undefined ? [] : [s]);
    expect(runConfigOf(objects, "n").env_vars).toBeUndefined();
  });
});

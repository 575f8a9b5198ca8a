// A namespace with one group of every backend kind, the configuration kinds a virtual server
// references, and core Secrets whose values must never appear in rendered ConfigMaps.
import { parse } from "yaml";
import { expect } from "vitest";
import { buildVmcpConfig, type VmcpBuild } from "../../src/synth/constructs/vmcp/index.js";
import { type SynthIssue, SynthIssues } from "../../src/synth/issues.js";
import { loadTexts } from "../../src/synth/load.js";
import type { KubeObject, Resource, ResourceSet } from "../../src/synth/model.js";

export const NAMESPACE = "team";

/** Secret values of the fixture: none of them may appear in any rendered ConfigMap. */
export const SECRET_VALUES: Record<string, Record<string, string>> = {
  "oidc-client": { secret: "oidc-client-secret-VALUE-1" },
  "header-secret": { value: "x-api-key-VALUE-2" },
  "bearer-secret": { token: "bearer-token-VALUE-3" },
  "exchange-client": { secret: "exchange-client-secret-VALUE-4" },
  "otel-auth": { bearer: "otel-bearer-VALUE-5" },
  redis: { password: "redis-password-VALUE-6" },
};

export const CORE_SECRETS = Object.entries(SECRET_VALUES)
  .map(([name, data]) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name },
    stringData: data,
  }))
  .map((s) => JSON.stringify(s))
  .join("\n---\n");

export const FIXTURE = `
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPGroup
metadata: {name: tools}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPGroup
metadata: {name: elsewhere}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata: {name: alpha}
spec:
  image: ghcr.io/example/alpha:1.0
  transport: streamable-http
  proxyPort: 9000
  groupRef: tools
  externalAuthConfigRef: {name: header}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata: {name: stdio-sse}
spec:
  image: ghcr.io/example/stdio:1.0
  transport: stdio
  proxyMode: sse
  groupRef: {name: tools}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata: {name: outsider}
spec:
  image: ghcr.io/example/outsider:1.0
  groupRef: elsewhere
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPRemoteProxy
metadata: {name: remote}
spec:
  remoteURL: https://remote.example.com/mcp
  transport: sse
  proxyPort: 8443
  groupRef: tools
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServerEntry
metadata: {name: entry}
spec:
  remoteURL: https://entry.example.com/mcp
  transport: streamable-http
  groupRef: tools
  caBundleRef:
    configMapRef: {name: entry-ca, key: tls.crt}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPExternalAuthConfig
metadata: {name: header}
spec:
  type: headerInjection
  headerInjection:
    headerName: X-API-Key
    valueSecretRef: {name: header-secret, key: value}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPExternalAuthConfig
metadata: {name: bearer}
spec:
  type: bearerToken
  bearerToken:
    tokenSecretRef: {name: bearer-secret, key: token}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPExternalAuthConfig
metadata: {name: exchange}
spec:
  type: tokenExchange
  tokenExchange:
    tokenUrl: https://sts.example.com/token
    clientId: vmcp
    clientSecretRef: {name: exchange-client, key: secret}
    audience: entry-api
    scopes: [read]
    subjectTokenType: id_token
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPExternalAuthConfig
metadata: {name: aws}
spec:
  type: awsSts
  awsSts:
    region: us-east-1
    fallbackRoleArn: arn:aws:iam::123456789012:role/mcp
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPOIDCConfig
metadata: {name: corp}
spec:
  type: inline
  inline:
    issuer: https://login.example.com
    clientId: gateway
    clientSecretRef: {name: oidc-client, key: secret}
    jwksUrl: https://login.example.com/jwks
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPOIDCConfig
metadata: {name: cluster}
spec:
  type: kubernetesServiceAccount
  kubernetesServiceAccount: {}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPTelemetryConfig
metadata: {name: otel}
spec:
  openTelemetry:
    enabled: true
    endpoint: otel.example.com:4318
    headers: {X-Tenant: team}
    sensitiveHeaders:
      - name: Authorization
        secretKeyRef: {name: otel-auth, key: bearer}
    resourceAttributes: {env: test}
    tracing: {enabled: true, samplingRate: "0.2"}
    metrics: {enabled: true}
    caBundleRef:
      configMapRef: {name: otel-ca}
  prometheus: {enabled: true}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPToolConfig
metadata: {name: alpha-tools}
spec:
  toolsFilter: [search, fetch]
  toolsOverride:
    fetch: {name: alpha_fetch, description: Fetch a page}
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: VirtualMCPCompositeToolDefinition
metadata: {name: shared-flow}
spec:
  name: shared_flow
  description: Shared workflow
  steps:
    - id: one
      tool: alpha.search
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: VirtualMCPCompositeToolDefinition
metadata: {name: shadowed}
spec:
  name: inline_flow
  description: Same name as an inline tool
  steps:
    - id: one
      tool: alpha.fetch
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: EmbeddingServer
metadata: {name: embed}
spec:
  port: 8081
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: VirtualMCPServer
metadata: {name: gateway}
spec:
  groupRef: tools
  incomingAuth:
    type: oidc
    oidcConfigRef: {name: corp, audience: gateway, scopes: [openid, profile]}
    authzConfig:
      type: inline
      inline:
        policies: ['permit(principal, action, resource);']
  outgoingAuth:
    source: inline
    default: {type: discovered}
    backends:
      remote: {type: external_auth_config_ref, externalAuthConfigRef: {name: bearer}}
      entry: {type: external_auth_config_ref, externalAuthConfigRef: {name: exchange}}
      stdio-sse: {type: external_auth_config_ref, externalAuthConfigRef: {name: aws}}
  telemetryConfigRef: {name: otel, serviceName: gateway-svc}
  embeddingServerRef: {name: embed}
  sessionStorage:
    provider: redis
    address: redis:6379
    db: 2
    keyPrefix: "gw:"
    passwordRef: {name: redis, key: password}
  serviceType: LoadBalancer
  replicas: 3
  resources:
    requests: {cpu: 100m, memory: 128Mi}
  resourceOverrides:
    proxyDeployment:
      labels: {team: platform}
      annotations: {owner: platform}
      env: [{name: EXTRA, value: "1"}]
      imagePullSecrets: [{name: regcred}]
      podTemplateMetadataOverrides:
        annotations: {scrape: "true"}
    proxyService:
      annotations: {lb: internal}
  podTemplateSpec:
    spec:
      nodeSelector: {pool: mcp}
      containers:
        - name: vmcp
          env: [{name: LOG_FORMAT, value: json}]
  config:
    aggregation:
      conflictResolution: prefix
      tools:
        - workload: alpha
          toolConfigRef: {name: alpha-tools}
    compositeTools:
      - name: inline_flow
        steps:
          - id: first
            tool: alpha.search
    compositeToolRefs:
      - name: shared-flow
      - name: shadowed
    optimizer:
      embeddingService: http://old.example.com
      maxToolsToReturn: 5
    operational:
      failureHandling:
        partialFailureMode: best_effort
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: VirtualMCPServer
metadata: {name: plain}
spec:
  groupRef: tools
  serviceAccount: existing-sa
  incomingAuth:
    type: oidc
    oidcConfigRef: {name: cluster, audience: plain}
  config:
    telemetry:
      endpoint: inline-otel:4318
      tracingEnabled: true
`;

/** Validates the fixture (all three levels) and returns its resources; throws if invalid. */
export async function loadFixture(text = FIXTURE): Promise<Resource[]> {
  const result = await loadTexts([{ name: "fixture.yaml", text }], { namespace: NAMESPACE });
  if (!result.valid) {
    const errors = result.report.resources.flatMap((r) =>
      r.errors.map((e) => `${r.kind}/${r.name}: ${JSON.stringify(e)}`),
    );
    throw new Error(`fixture is invalid:\n${errors.join("\n")}`);
  }
  return result.resources;
}

export function find(objects: KubeObject[], kind: string, name: string): KubeObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (o === undefined)
    throw new Error(
      `no ${kind}/${name} in ${objects.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`,
    );
  return o;
}

export function configOf(objects: KubeObject[], configMap: string, key = "config.yaml"): unknown {
  const cm = find(objects, "ConfigMap", configMap);
  const data = cm.data as Record<string, string>;
  const text = data[key];
  if (text === undefined) throw new Error(`ConfigMap ${configMap} has no ${key}`);
  return parse(text);
}

/** Every ConfigMap's data as one string, for scanning. */
export function configMapText(objects: KubeObject[]): string {
  return objects
    .filter((o) => o.kind === "ConfigMap")
    .map((o) => JSON.stringify(o.data ?? {}))
    .join("\n");
}

/** A virtual server's build and the issues it reported. */
export function buildReported(
  resource: Resource<"VirtualMCPServer">,
  set: ResourceSet,
): { build: VmcpBuild | undefined; issues: SynthIssue[] } {
  const issues = new SynthIssues();
  const build = buildVmcpConfig(resource, set, issues.for(resource));
  return { build, issues: issues.all() };
}

/** Asserts the build rendered nothing and reported exactly one error whose message matches. */
export function expectNotRendered(
  outcome: { build: VmcpBuild | undefined; issues: SynthIssue[] },
  why: RegExp,
): void {
  expect(outcome.build).toBeUndefined();
  expect(outcome.issues.map((i) => [i.severity, i.code])).toEqual([
    ["error", "SYNTH_NOT_RENDERED"],
  ]);
  expect(outcome.issues[0]?.message).toMatch(why);
}

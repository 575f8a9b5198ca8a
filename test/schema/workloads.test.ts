import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import {
  SCHEMA_BASE,
  type SchemaIssue,
  type SchemaNode,
  defaultSchemaSet,
  schemasDir,
} from "../../src/schema/index.js";
import { type Doc, expectIssue, expectValid, issuesOf, loadYamlDocs } from "./helpers.js";

const API_VERSION = "toolhive.stacklok.dev/v1alpha1";

const KINDS = [
  "MCPServer",
  "MCPRemoteProxy",
  "MCPServerEntry",
  "MCPGroup",
  "MCPToolConfig",
  "MCPTelemetryConfig",
  "EmbeddingServer",
] as const;
type WorkloadKind = (typeof KINDS)[number];

/** The schema files these tests cover, relative to schemas/. */
const FILES = [
  "common/workload.yaml",
  "config/audit.yaml",
  "config/telemetry.yaml",
  ...KINDS.map((k) => `crd/${k.toLowerCase()}.yaml`),
];

/** The smallest valid spec of each kind; cases add to it or take from it. */
const BASE_SPEC: Record<WorkloadKind, Doc> = {
  MCPServer: { image: "ghcr.io/example/server:1.0.0" },
  MCPRemoteProxy: { remoteURL: "https://mcp.example.com/mcp" },
  MCPServerEntry: {
    remoteURL: "https://mcp.example.com/mcp",
    transport: "streamable-http",
    groupRef: "engineering",
  },
  MCPGroup: {},
  MCPToolConfig: {},
  MCPTelemetryConfig: {},
  EmbeddingServer: {},
};

interface Variant {
  spec?: Doc;
  status?: Doc;
  /** Fields of the base spec to leave out. */
  omit?: string[];
}

function resource(kind: WorkloadKind, v: Variant): Doc {
  const spec: Doc = { ...BASE_SPEC[kind], ...v.spec };
  for (const key of v.omit ?? []) delete spec[key];
  const doc: Doc = { apiVersion: API_VERSION, kind, metadata: { name: "sample" }, spec };
  if (v.status !== undefined) doc.status = v.status;
  return doc;
}

interface KindCase {
  kind: WorkloadKind;
  rule: string;
  valid: Variant;
  invalid: Variant;
  path: string;
  level: "schema" | "cel";
}

const redis = { provider: "redis", address: "redis:6379" };
const bucket = { maxTokens: 100, refillPeriod: "1m" };
const secretKey = { name: "creds", key: "token" };
const inlineOidc = { type: "inline", inline: { issuer: "https://idp.example.com" } };
const oidcRef = { name: "corp-oidc", audience: "sample" };

const KIND_CASES: KindCase[] = [
  {
    kind: "MCPServer",
    rule: "secrets are keyed by Secret name",
    valid: {
      spec: {
        secrets: [
          { name: "a", key: "k" },
          { name: "b", key: "k" },
        ],
      },
    },
    invalid: {
      spec: {
        secrets: [
          { name: "a", key: "k" },
          { name: "a", key: "l" },
        ],
      },
    },
    path: "/spec/secrets/1",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "volumes are keyed by name",
    valid: { spec: { volumes: [{ name: "a" }, { name: "b" }] } },
    invalid: { spec: { volumes: [{ name: "a" }, { name: "a" }] } },
    path: "/spec/volumes/1",
    level: "schema",
  },
  {
    kind: "MCPToolConfig",
    rule: "toolsFilter is a set",
    valid: { spec: { toolsFilter: ["fetch", "get"] } },
    invalid: { spec: { toolsFilter: ["fetch", "fetch"] } },
    path: "/spec/toolsFilter/1",
    level: "schema",
  },
  // MCPServer: fields
  {
    kind: "MCPServer",
    rule: "image is required",
    valid: {},
    invalid: { omit: ["image"] },
    path: "/spec/image",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "image is not empty",
    valid: { spec: { image: "docker.io/mcp/time" } },
    invalid: { spec: { image: "" } },
    path: "/spec/image",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "transport is stdio, streamable-http or sse",
    valid: { spec: { transport: "sse" } },
    invalid: { spec: { transport: "http" } },
    path: "/spec/transport",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "proxyMode is sse or streamable-http",
    valid: { spec: { transport: "stdio", proxyMode: "sse" } },
    invalid: { spec: { transport: "stdio", proxyMode: "stdio" } },
    path: "/spec/proxyMode",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "proxyPort is at least 1",
    valid: { spec: { proxyPort: 1 } },
    invalid: { spec: { proxyPort: 0 } },
    path: "/spec/proxyPort",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "proxyPort is at most 65535",
    valid: { spec: { proxyPort: 65535 } },
    invalid: { spec: { proxyPort: 65536 } },
    path: "/spec/proxyPort",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "mcpPort is a port",
    valid: { spec: { mcpPort: 8080 } },
    invalid: { spec: { mcpPort: 70000 } },
    path: "/spec/mcpPort",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "args are strings",
    valid: { spec: { args: ["--read-only"] } },
    invalid: { spec: { args: [1] } },
    path: "/spec/args/0",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "env entries need a value",
    valid: { spec: { env: [{ name: "LOG_LEVEL", value: "info" }] } },
    invalid: { spec: { env: [{ name: "LOG_LEVEL" }] } },
    path: "/spec/env/0/value",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "volumes are named",
    valid: { spec: { volumes: [{ name: "data", emptyDir: {} }] } },
    invalid: { spec: { volumes: [{ emptyDir: {} }] } },
    path: "/spec/volumes/0/name",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "resources use quantities",
    valid: { spec: { resources: { limits: { cpu: "500m", memory: "512Mi" } } } },
    invalid: { spec: { resources: { limits: { memory: "lots" } } } },
    path: "/spec/resources/limits/memory",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "a secret needs a key",
    valid: { spec: { secrets: [{ name: "gh", key: "token", targetEnvName: "GITHUB_TOKEN" }] } },
    invalid: { spec: { secrets: [{ name: "gh" }] } },
    path: "/spec/secrets/0/key",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "a secret needs a name",
    valid: { spec: { secrets: [{ name: "gh", key: "token" }] } },
    invalid: { spec: { secrets: [{ name: "", key: "token" }] } },
    path: "/spec/secrets/0/name",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "serviceAccount is a string",
    valid: { spec: { serviceAccount: "mkp-sa" } },
    invalid: { spec: { serviceAccount: { name: "mkp-sa" } } },
    path: "/spec/serviceAccount",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "permissionProfile type is builtin or configmap",
    valid: { spec: { permissionProfile: { type: "configmap", name: "profile" } } },
    invalid: { spec: { permissionProfile: { type: "file", name: "profile" } } },
    path: "/spec/permissionProfile/type",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "permissionProfile name is required",
    valid: { spec: { permissionProfile: { name: "none" } } },
    invalid: { spec: { permissionProfile: { type: "builtin" } } },
    path: "/spec/permissionProfile/name",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "a builtin profile is none or network",
    valid: { spec: { permissionProfile: { type: "builtin", name: "network" } } },
    invalid: { spec: { permissionProfile: { type: "builtin", name: "restricted" } } },
    path: "/spec/permissionProfile/name",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "the default profile type is builtin, so its name is none or network",
    valid: { spec: { permissionProfile: { name: "none" } } },
    invalid: { spec: { permissionProfile: { name: "restricted" } } },
    path: "/spec/permissionProfile/name",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "permissionProfile key only with configmap",
    valid: { spec: { permissionProfile: { type: "configmap", name: "cm", key: "profile.json" } } },
    invalid: {
      spec: { permissionProfile: { type: "builtin", name: "none", key: "profile.json" } },
    },
    path: "/spec/permissionProfile/key",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "podTemplateSpec is an object",
    valid: { spec: { podTemplateSpec: { spec: { containers: [{ name: "mcp" }] } } } },
    invalid: { spec: { podTemplateSpec: "containers: []" } },
    path: "/spec/podTemplateSpec",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "proxy deployment env entries need a value",
    valid: {
      spec: {
        resourceOverrides: {
          proxyDeployment: {
            env: [{ name: "TOOLHIVE_DEBUG", value: "true" }],
            imagePullSecrets: [{ name: "pull" }],
            podTemplateMetadataOverrides: { labels: { a: "b" } },
          },
          proxyService: { annotations: { a: "b" } },
        },
      },
    },
    invalid: { spec: { resourceOverrides: { proxyDeployment: { env: [{ value: "true" }] } } } },
    path: "/spec/resourceOverrides/proxyDeployment/env/0/name",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "override labels are strings",
    valid: { spec: { resourceOverrides: { proxyDeployment: { labels: { team: "a" } } } } },
    invalid: { spec: { resourceOverrides: { proxyDeployment: { labels: { replicas: 2 } } } } },
    path: "/spec/resourceOverrides/proxyDeployment/labels/replicas",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "oidcConfig and oidcConfigRef are mutually exclusive",
    valid: { spec: { oidcConfigRef: oidcRef } },
    invalid: { spec: { oidcConfig: inlineOidc, oidcConfigRef: oidcRef } },
    path: "/spec/oidcConfigRef",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "the deprecated oidcConfig alone is accepted",
    valid: { spec: { oidcConfig: inlineOidc } },
    invalid: { spec: { oidcConfig: "inline" } },
    path: "/spec/oidcConfig",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "audit.enabled is a boolean",
    valid: { spec: { audit: { enabled: true } } },
    invalid: { spec: { audit: { enabled: "yes" } } },
    path: "/spec/audit/enabled",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "toolConfigRef needs a name",
    valid: { spec: { toolConfigRef: { name: "github-tools" } } },
    invalid: { spec: { toolConfigRef: {} } },
    path: "/spec/toolConfigRef/name",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "telemetryConfigRef name is not empty",
    valid: { spec: { telemetryConfigRef: { name: "otel", serviceName: "fetch" } } },
    invalid: { spec: { telemetryConfigRef: { name: "" } } },
    path: "/spec/telemetryConfigRef/name",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "telemetry and telemetryConfigRef are mutually exclusive",
    valid: { spec: { telemetry: { prometheus: { enabled: true } } } },
    invalid: {
      spec: { telemetry: { prometheus: { enabled: true } }, telemetryConfigRef: { name: "otel" } },
    },
    path: "/spec/telemetryConfigRef",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "inline telemetry headers are key=value",
    valid: { spec: { telemetry: { openTelemetry: { headers: ["x-api-key=abc"] } } } },
    invalid: { spec: { telemetry: { openTelemetry: { headers: ["x-api-key"] } } } },
    path: "/spec/telemetry/openTelemetry/headers/0",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "inline sampling rate is a decimal from 0 to 1",
    valid: { spec: { telemetry: { openTelemetry: { tracing: { samplingRate: "1.0" } } } } },
    invalid: { spec: { telemetry: { openTelemetry: { tracing: { samplingRate: "1.5" } } } } },
    path: "/spec/telemetry/openTelemetry/tracing/samplingRate",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "inline sampling rate is written as a string",
    valid: { spec: { telemetry: { openTelemetry: { tracing: { samplingRate: "0.25" } } } } },
    invalid: { spec: { telemetry: { openTelemetry: { tracing: { samplingRate: 0.25 } } } } },
    path: "/spec/telemetry/openTelemetry/tracing/samplingRate",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "trustProxyHeaders is a boolean",
    valid: { spec: { trustProxyHeaders: true, endpointPrefix: "/mcp/github" } },
    invalid: { spec: { trustProxyHeaders: "true" } },
    path: "/spec/trustProxyHeaders",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "groupRef as a name",
    valid: { spec: { groupRef: "engineering" } },
    invalid: { spec: { groupRef: "" } },
    path: "/spec/groupRef",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "groupRef as an object needs a name",
    valid: { spec: { groupRef: { name: "engineering" } } },
    invalid: { spec: { groupRef: {} } },
    path: "/spec/groupRef",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "groupRef is neither a number nor a list",
    valid: { spec: { groupRef: "engineering" } },
    invalid: { spec: { groupRef: ["engineering"] } },
    path: "/spec/groupRef",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "sessionAffinity is ClientIP or None",
    valid: { spec: { sessionAffinity: "None" } },
    invalid: { spec: { sessionAffinity: "Sticky" } },
    path: "/spec/sessionAffinity",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "replicas is at least 0",
    valid: { spec: { replicas: 0 } },
    invalid: { spec: { replicas: -1 } },
    path: "/spec/replicas",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "backendReplicas is at least 0",
    valid: { spec: { backendReplicas: 0 } },
    invalid: { spec: { backendReplicas: -1 } },
    path: "/spec/backendReplicas",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "sessionStorage provider is required",
    valid: { spec: { sessionStorage: { provider: "memory" } } },
    invalid: { spec: { sessionStorage: { address: "redis:6379" } } },
    path: "/spec/sessionStorage/provider",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "sessionStorage provider is memory or redis",
    valid: { spec: { sessionStorage: redis } },
    invalid: { spec: { sessionStorage: { provider: "etcd" } } },
    path: "/spec/sessionStorage/provider",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "redis session storage needs an address",
    valid: {
      spec: {
        sessionStorage: { ...redis, db: 3, keyPrefix: "mcp:", passwordRef: secretKey },
      },
    },
    invalid: { spec: { sessionStorage: { provider: "redis" } } },
    path: "/spec/sessionStorage/address",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "session storage address is not empty",
    valid: { spec: { sessionStorage: redis } },
    invalid: { spec: { sessionStorage: { provider: "redis", address: "" } } },
    path: "/spec/sessionStorage/address",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "session storage db is at least 0",
    valid: { spec: { sessionStorage: { ...redis, db: 0 } } },
    invalid: { spec: { sessionStorage: { ...redis, db: -1 } } },
    path: "/spec/sessionStorage/db",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "session storage password is a secret key",
    valid: { spec: { sessionStorage: { ...redis, passwordRef: secretKey } } },
    invalid: { spec: { sessionStorage: { ...redis, passwordRef: { name: "redis" } } } },
    path: "/spec/sessionStorage/passwordRef/key",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "rate limiting requires redis session storage",
    valid: { spec: { sessionStorage: redis, rateLimiting: { shared: bucket } } },
    invalid: { spec: { rateLimiting: { shared: bucket } } },
    path: "/spec/rateLimiting",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "rate limiting does not work with memory session storage",
    valid: { spec: { sessionStorage: redis, rateLimiting: { shared: bucket } } },
    invalid: { spec: { sessionStorage: { provider: "memory" }, rateLimiting: { shared: bucket } } },
    path: "/spec/rateLimiting",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "rate limiting sets shared or tools",
    valid: {
      spec: { sessionStorage: redis, rateLimiting: { tools: [{ name: "fetch", shared: bucket }] } },
    },
    invalid: { spec: { sessionStorage: redis, rateLimiting: {} } },
    path: "/spec/rateLimiting",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "an empty tools list does not count",
    valid: { spec: { sessionStorage: redis, rateLimiting: { shared: bucket, tools: [] } } },
    invalid: { spec: { sessionStorage: redis, rateLimiting: { tools: [] } } },
    path: "/spec/rateLimiting",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "bucket maxTokens is at least 1",
    valid: {
      spec: { sessionStorage: redis, rateLimiting: { shared: { ...bucket, maxTokens: 1 } } },
    },
    invalid: {
      spec: { sessionStorage: redis, rateLimiting: { shared: { ...bucket, maxTokens: 0 } } },
    },
    path: "/spec/rateLimiting/shared/maxTokens",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "bucket refillPeriod is required",
    valid: { spec: { sessionStorage: redis, rateLimiting: { shared: bucket } } },
    invalid: { spec: { sessionStorage: redis, rateLimiting: { shared: { maxTokens: 10 } } } },
    path: "/spec/rateLimiting/shared/refillPeriod",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "bucket refillPeriod is a duration",
    valid: {
      spec: {
        sessionStorage: redis,
        rateLimiting: { shared: { ...bucket, refillPeriod: "1h30m" } },
      },
    },
    invalid: {
      spec: {
        sessionStorage: redis,
        rateLimiting: { shared: { ...bucket, refillPeriod: "1 minute" } },
      },
    },
    path: "/spec/rateLimiting/shared/refillPeriod",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "bucket refillPeriod is longer than zero",
    valid: {
      spec: {
        sessionStorage: redis,
        rateLimiting: { shared: { ...bucket, refillPeriod: "500ms" } },
      },
    },
    invalid: {
      spec: { sessionStorage: redis, rateLimiting: { shared: { ...bucket, refillPeriod: "0s" } } },
    },
    path: "/spec/rateLimiting/shared/refillPeriod",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "a per-tool limit needs a bucket",
    valid: {
      spec: { sessionStorage: redis, rateLimiting: { tools: [{ name: "fetch", shared: bucket }] } },
    },
    invalid: { spec: { sessionStorage: redis, rateLimiting: { tools: [{ name: "fetch" }] } } },
    path: "/spec/rateLimiting/tools/0",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "per-user limits need authenticated callers",
    valid: {
      spec: {
        sessionStorage: redis,
        oidcConfigRef: { name: "corp", audience: "fetch" },
        rateLimiting: { perUser: bucket, tools: [{ name: "fetch", perUser: bucket }] },
      },
    },
    invalid: {
      spec: {
        sessionStorage: redis,
        rateLimiting: { tools: [{ name: "fetch", perUser: bucket }] },
      },
    },
    path: "/spec/rateLimiting",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "authzConfig and authzConfigRef are mutually exclusive",
    valid: { spec: { authzConfigRef: { name: "shared" } } },
    invalid: {
      spec: {
        authzConfigRef: { name: "shared" },
        authzConfig: {
          type: "inline",
          inline: { policies: ["permit(principal, action, resource);"] },
        },
      },
    },
    path: "/spec/authzConfigRef",
    level: "cel",
  },
  {
    kind: "MCPServer",
    rule: "a per-tool limit names its tool",
    valid: {
      spec: { sessionStorage: redis, rateLimiting: { tools: [{ name: "fetch", shared: bucket }] } },
    },
    invalid: {
      spec: { sessionStorage: redis, rateLimiting: { tools: [{ name: "", shared: bucket }] } },
    },
    path: "/spec/rateLimiting/tools/0/name",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "status phase is one of the MCPServer states",
    valid: {
      status: { phase: "Stopped", readyReplicas: 0, url: "http://x", observedGeneration: 1 },
    },
    invalid: { status: { phase: "Running" } },
    path: "/status/phase",
    level: "schema",
  },
  {
    kind: "MCPServer",
    rule: "status conditions are standard conditions",
    valid: {
      status: {
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "DeploymentReady",
            message: "ready",
            lastTransitionTime: "2025-01-01T00:00:00Z",
          },
        ],
        toolConfigHash: "abc",
        telemetryConfigHash: "def",
      },
    },
    invalid: { status: { conditions: [{ type: "Ready", status: "Yes" }] } },
    path: "/status/conditions/0/status",
    level: "schema",
  },

  // MCPRemoteProxy
  {
    kind: "MCPRemoteProxy",
    rule: "remoteURL is required",
    valid: {},
    invalid: { omit: ["remoteURL"] },
    path: "/spec/remoteURL",
    level: "cel",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "remoteUrl, the reference operator's spelling, is accepted instead of remoteURL",
    valid: { omit: ["remoteURL"], spec: { remoteUrl: "https://mcp.example.com/mcp" } },
    invalid: { spec: { remoteUrl: "https://mcp.example.com/mcp" } },
    path: "/spec/remoteUrl",
    level: "cel",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "remoteURL begins with http:// or https://",
    valid: { spec: { remoteURL: "http://mcp.internal:8080/mcp" } },
    invalid: { spec: { remoteURL: "mcp.example.com/mcp" } },
    path: "/spec/remoteURL",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "transport is sse or streamable-http",
    valid: { spec: { transport: "sse" } },
    invalid: { spec: { transport: "stdio" } },
    path: "/spec/transport",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "proxyPort is a port",
    valid: { spec: { proxyPort: 9090 } },
    invalid: { spec: { proxyPort: 0 } },
    path: "/spec/proxyPort",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "oidcConfig and oidcConfigRef are mutually exclusive",
    valid: { spec: { oidcConfig: inlineOidc } },
    invalid: { spec: { oidcConfig: inlineOidc, oidcConfigRef: oidcRef } },
    path: "/spec/oidcConfigRef",
    level: "cel",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "externalAuthConfigRef needs a name",
    valid: { spec: { externalAuthConfigRef: { name: "github-token-exchange" } } },
    invalid: { spec: { externalAuthConfigRef: {} } },
    path: "/spec/externalAuthConfigRef/name",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "a forwarded header name is not empty",
    valid: {
      spec: {
        headerForward: {
          addPlaintextHeaders: { "X-Tenant": "a" },
          addHeadersFromSecret: [{ headerName: "X-API-Key", valueSecretRef: secretKey }],
        },
      },
    },
    invalid: {
      spec: {
        headerForward: { addHeadersFromSecret: [{ headerName: "", valueSecretRef: secretKey }] },
      },
    },
    path: "/spec/headerForward/addHeadersFromSecret/0/headerName",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "a forwarded header name has at most 255 characters",
    valid: {
      spec: {
        headerForward: {
          addHeadersFromSecret: [{ headerName: "X".repeat(255), valueSecretRef: secretKey }],
        },
      },
    },
    invalid: {
      spec: {
        headerForward: {
          addHeadersFromSecret: [{ headerName: "X".repeat(256), valueSecretRef: secretKey }],
        },
      },
    },
    path: "/spec/headerForward/addHeadersFromSecret/0/headerName",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "a forwarded header from a secret needs the secret",
    valid: {
      spec: {
        headerForward: {
          addHeadersFromSecret: [{ headerName: "X-Key", valueSecretRef: secretKey }],
        },
      },
    },
    invalid: { spec: { headerForward: { addHeadersFromSecret: [{ headerName: "X-Key" }] } } },
    path: "/spec/headerForward/addHeadersFromSecret/0/valueSecretRef",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "plaintext header values are strings",
    valid: { spec: { headerForward: { addPlaintextHeaders: { "X-Tenant": "42" } } } },
    invalid: { spec: { headerForward: { addPlaintextHeaders: { "X-Tenant": 42 } } } },
    path: "/spec/headerForward/addPlaintextHeaders/X-Tenant",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "sessionAffinity is ClientIP or None",
    valid: { spec: { sessionAffinity: "ClientIP" } },
    invalid: { spec: { sessionAffinity: "none" } },
    path: "/spec/sessionAffinity",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "groupRef as a name or an object",
    valid: { spec: { groupRef: { name: "engineering" } } },
    invalid: { spec: { groupRef: 7 } },
    path: "/spec/groupRef",
    level: "schema",
  },
  {
    kind: "MCPRemoteProxy",
    rule: "status phase is one of the MCPRemoteProxy states",
    valid: { status: { phase: "Terminating", externalURL: "https://mcp.example.com" } },
    invalid: { status: { phase: "Stopped" } },
    path: "/status/phase",
    level: "schema",
  },

  // MCPServerEntry
  {
    kind: "MCPServerEntry",
    rule: "remoteURL is required",
    valid: {},
    invalid: { omit: ["remoteURL"] },
    path: "/spec/remoteURL",
    level: "cel",
  },
  {
    kind: "MCPServerEntry",
    rule: "remoteUrl, the reference operator's spelling, is accepted instead of remoteURL",
    valid: { omit: ["remoteURL"], spec: { remoteUrl: "https://mcp.example.com/mcp" } },
    invalid: { spec: { remoteUrl: "https://mcp.example.com/mcp" } },
    path: "/spec/remoteUrl",
    level: "cel",
  },
  {
    kind: "MCPServerEntry",
    rule: "remoteURL begins with http:// or https://",
    valid: { spec: { remoteURL: "http://mcp.internal/mcp" } },
    invalid: { spec: { remoteURL: "ftp://mcp.internal/mcp" } },
    path: "/spec/remoteURL",
    level: "schema",
  },
  {
    kind: "MCPServerEntry",
    rule: "transport is required",
    valid: {},
    invalid: { omit: ["transport"] },
    path: "/spec/transport",
    level: "schema",
  },
  {
    kind: "MCPServerEntry",
    rule: "transport is sse or streamable-http",
    valid: { spec: { transport: "sse" } },
    invalid: { spec: { transport: "stdio" } },
    path: "/spec/transport",
    level: "schema",
  },
  {
    kind: "MCPServerEntry",
    rule: "groupRef is required",
    valid: { spec: { groupRef: { name: "engineering" } } },
    invalid: { omit: ["groupRef"] },
    path: "/spec/groupRef",
    level: "schema",
  },
  {
    kind: "MCPServerEntry",
    rule: "groupRef is not empty",
    valid: { spec: { groupRef: "g" } },
    invalid: { spec: { groupRef: "" } },
    path: "/spec/groupRef",
    level: "schema",
  },
  {
    kind: "MCPServerEntry",
    rule: "caBundleRef names its config map",
    valid: { spec: { caBundleRef: { configMapRef: { name: "corp-ca" } } } },
    invalid: { spec: { caBundleRef: { configMapRef: { key: "ca.crt" } } } },
    path: "/spec/caBundleRef/configMapRef/name",
    level: "schema",
  },
  {
    kind: "MCPServerEntry",
    rule: "externalAuthConfigRef needs a name",
    valid: { spec: { externalAuthConfigRef: { name: "bearer-token" } } },
    invalid: { spec: { externalAuthConfigRef: { name: "" } } },
    path: "/spec/externalAuthConfigRef/name",
    level: "schema",
  },
  {
    kind: "MCPServerEntry",
    rule: "status phase is Valid, Pending or Failed",
    valid: { status: { phase: "Valid", observedGeneration: 2 } },
    invalid: { status: { phase: "Ready" } },
    path: "/status/phase",
    level: "schema",
  },

  // MCPGroup
  {
    kind: "MCPGroup",
    rule: "description is a string",
    valid: { spec: { description: "Engineering tools" } },
    invalid: { spec: { description: 5 } },
    path: "/spec/description",
    level: "schema",
  },
  {
    kind: "MCPGroup",
    rule: "status phase is Ready, Pending or Failed",
    valid: {
      status: {
        phase: "Ready",
        servers: ["a", "b"],
        remoteProxies: [],
        entries: ["c"],
        serverCount: 2,
        remoteProxyCount: 0,
        entryCount: 1,
      },
    },
    invalid: { status: { phase: "Valid" } },
    path: "/status/phase",
    level: "schema",
  },
  {
    kind: "MCPGroup",
    rule: "member counts are not negative",
    valid: { status: { serverCount: 0 } },
    invalid: { status: { serverCount: -1 } },
    path: "/status/serverCount",
    level: "schema",
  },
  {
    kind: "MCPGroup",
    rule: "member lists hold names",
    valid: { status: { servers: ["fetch"] } },
    invalid: { status: { servers: [{ name: "fetch" }] } },
    path: "/status/servers/0",
    level: "schema",
  },

  // MCPToolConfig
  {
    kind: "MCPToolConfig",
    rule: "toolsFilter holds tool names",
    valid: { spec: { toolsFilter: ["fetch"] } },
    invalid: { spec: { toolsFilter: [""] } },
    path: "/spec/toolsFilter/0",
    level: "schema",
  },
  {
    kind: "MCPToolConfig",
    rule: "an override sets a name or a description",
    valid: { spec: { toolsOverride: { fetch: { description: "Fetch a URL" } } } },
    invalid: { spec: { toolsOverride: { fetch: {} } } },
    path: "/spec/toolsOverride/fetch",
    level: "cel",
  },
  {
    kind: "MCPToolConfig",
    rule: "an override name is not empty",
    valid: { spec: { toolsOverride: { fetch: { name: "web_fetch" } } } },
    invalid: { spec: { toolsOverride: { fetch: { name: "" } } } },
    path: "/spec/toolsOverride/fetch/name",
    level: "schema",
  },
  {
    kind: "MCPToolConfig",
    rule: "referencing workloads have a kind and a name",
    valid: {
      status: {
        configHash: "abc",
        observedGeneration: 1,
        referencingWorkloads: [{ kind: "MCPServer", name: "github" }],
      },
    },
    invalid: { status: { referencingWorkloads: [{ name: "github" }] } },
    path: "/status/referencingWorkloads/0/kind",
    level: "schema",
  },

  // MCPTelemetryConfig
  {
    kind: "MCPTelemetryConfig",
    rule: "service.name is not a shared resource attribute",
    valid: {
      spec: { openTelemetry: { resourceAttributes: { "deployment.environment": "prod" } } },
    },
    invalid: { spec: { openTelemetry: { resourceAttributes: { "service.name": "shared" } } } },
    path: "/spec/openTelemetry/resourceAttributes",
    level: "cel",
  },
  {
    kind: "MCPTelemetryConfig",
    rule: "a header is plain or sensitive, not both",
    valid: {
      spec: {
        openTelemetry: {
          headers: { "X-Scope-OrgID": "platform" },
          sensitiveHeaders: [{ name: "Authorization", secretKeyRef: secretKey }],
        },
      },
    },
    invalid: {
      spec: {
        openTelemetry: {
          headers: { authorization: "Bearer x" },
          sensitiveHeaders: [{ name: "Authorization", secretKeyRef: secretKey }],
        },
      },
    },
    path: "/spec/openTelemetry/sensitiveHeaders",
    level: "cel",
  },
  {
    kind: "MCPTelemetryConfig",
    rule: "an endpoint needs tracing or metrics",
    valid: { spec: { openTelemetry: { endpoint: "otel:4318", metrics: { enabled: true } } } },
    invalid: { spec: { openTelemetry: { endpoint: "otel:4318", tracing: { enabled: false } } } },
    path: "/spec/openTelemetry/endpoint",
    level: "cel",
  },
  {
    kind: "MCPTelemetryConfig",
    rule: "a sensitive header has a name",
    valid: {
      spec: { openTelemetry: { sensitiveHeaders: [{ name: "X-Key", secretKeyRef: secretKey }] } },
    },
    invalid: {
      spec: { openTelemetry: { sensitiveHeaders: [{ name: "", secretKeyRef: secretKey }] } },
    },
    path: "/spec/openTelemetry/sensitiveHeaders/0/name",
    level: "schema",
  },
  {
    kind: "MCPTelemetryConfig",
    rule: "a sensitive header has a secret key",
    valid: {
      spec: { openTelemetry: { sensitiveHeaders: [{ name: "X-Key", secretKeyRef: secretKey }] } },
    },
    invalid: { spec: { openTelemetry: { sensitiveHeaders: [{ name: "X-Key" }] } } },
    path: "/spec/openTelemetry/sensitiveHeaders/0/secretKeyRef",
    level: "schema",
  },
  {
    kind: "MCPTelemetryConfig",
    rule: "sampling rate is a decimal from 0 to 1",
    valid: {
      spec: {
        openTelemetry: { endpoint: "otel:4318", tracing: { enabled: true, samplingRate: "0" } },
      },
    },
    invalid: { spec: { openTelemetry: { tracing: { enabled: true, samplingRate: "-0.1" } } } },
    path: "/spec/openTelemetry/tracing/samplingRate",
    level: "schema",
  },
  {
    kind: "MCPTelemetryConfig",
    rule: "the CA bundle names its config map",
    valid: { spec: { openTelemetry: { caBundleRef: { configMapRef: { name: "otel-ca" } } } } },
    invalid: { spec: { openTelemetry: { caBundleRef: { configMapRef: { name: "" } } } } },
    path: "/spec/openTelemetry/caBundleRef/configMapRef/name",
    level: "schema",
  },
  {
    kind: "MCPTelemetryConfig",
    rule: "prometheus.enabled is a boolean",
    valid: { spec: { prometheus: { enabled: true } } },
    invalid: { spec: { prometheus: { enabled: "true" } } },
    path: "/spec/prometheus/enabled",
    level: "schema",
  },

  // EmbeddingServer
  {
    kind: "EmbeddingServer",
    rule: "model is not empty",
    valid: { spec: { model: "sentence-transformers/all-MiniLM-L6-v2" } },
    invalid: { spec: { model: "" } },
    path: "/spec/model",
    level: "schema",
  },
  {
    kind: "EmbeddingServer",
    rule: "imagePullPolicy is Always, Never or IfNotPresent",
    valid: { spec: { imagePullPolicy: "Always" } },
    invalid: { spec: { imagePullPolicy: "Sometimes" } },
    path: "/spec/imagePullPolicy",
    level: "schema",
  },
  {
    kind: "EmbeddingServer",
    rule: "port is a port",
    valid: { spec: { port: 8080 } },
    invalid: { spec: { port: 0 } },
    path: "/spec/port",
    level: "schema",
  },
  {
    kind: "EmbeddingServer",
    rule: "replicas is at least 1",
    valid: { spec: { replicas: 1 } },
    invalid: { spec: { replicas: 0 } },
    path: "/spec/replicas",
    level: "schema",
  },
  {
    kind: "EmbeddingServer",
    rule: "the Hugging Face token is a secret key",
    valid: { spec: { hfTokenSecretRef: { name: "hf", key: "token" } } },
    invalid: { spec: { hfTokenSecretRef: { name: "hf" } } },
    path: "/spec/hfTokenSecretRef/key",
    level: "schema",
  },
  {
    kind: "EmbeddingServer",
    rule: "model cache access mode is one of the claim modes",
    valid: { spec: { modelCache: { enabled: true, accessMode: "ReadWriteMany" } } },
    invalid: { spec: { modelCache: { accessMode: "ReadWriteOncePod" } } },
    path: "/spec/modelCache/accessMode",
    level: "schema",
  },
  {
    kind: "EmbeddingServer",
    rule: "model cache size is a quantity",
    valid: { spec: { modelCache: { size: "20Gi", storageClassName: "fast-ssd" } } },
    invalid: { spec: { modelCache: { size: "20 GB" } } },
    path: "/spec/modelCache/size",
    level: "schema",
  },
  {
    kind: "EmbeddingServer",
    rule: "statefulSet overrides are metadata maps",
    valid: {
      spec: {
        resourceOverrides: {
          statefulSet: { labels: { a: "b" }, podTemplateMetadataOverrides: { labels: { c: "d" } } },
          service: { annotations: { e: "f" } },
          persistentVolumeClaim: { labels: { g: "h" } },
        },
      },
    },
    invalid: { spec: { resourceOverrides: { statefulSet: { annotations: { a: true } } } } },
    path: "/spec/resourceOverrides/statefulSet/annotations/a",
    level: "schema",
  },
  {
    kind: "EmbeddingServer",
    rule: "status phase is one of the EmbeddingServer states",
    valid: { status: { phase: "Downloading", readyReplicas: 0, message: "pulling model" } },
    invalid: { status: { phase: "Running" } },
    path: "/status/phase",
    level: "schema",
  },
];

const WORKLOAD_ID = `${SCHEMA_BASE}common/workload.yaml`;
const AUDIT_ID = `${SCHEMA_BASE}config/audit.yaml`;
const TELEMETRY_ID = `${SCHEMA_BASE}config/telemetry.yaml`;

interface ConfigCase {
  schema: string;
  rule: string;
  valid: unknown;
  invalid: unknown;
  path: string;
  level: "schema" | "cel";
}

const CONFIG_CASES: ConfigCase[] = [
  {
    schema: AUDIT_ID,
    rule: "audit maxDataSize is not negative",
    valid: {
      enabled: true,
      component: "github",
      eventTypes: ["mcp_tool_call"],
      excludeEventTypes: ["mcp_ping"],
      includeRequestData: true,
      includeResponseData: false,
      maxDataSize: 4096,
      logFile: "/var/log/audit.log",
    },
    invalid: { maxDataSize: -1 },
    path: "/maxDataSize",
    level: "schema",
  },
  {
    schema: AUDIT_ID,
    rule: "audit event types are names",
    valid: { eventTypes: ["mcp_tool_call"] },
    invalid: { eventTypes: [""] },
    path: "/eventTypes/0",
    level: "schema",
  },
  {
    schema: `${AUDIT_ID}#/$defs/AuditConfig`,
    rule: "resource-form audit is only a switch",
    valid: { enabled: false },
    invalid: { enabled: 1 },
    path: "/enabled",
    level: "schema",
  },
  {
    schema: TELEMETRY_ID,
    rule: "embedded sampling rate is from 0.0 to 1.0",
    valid: {
      endpoint: "otel:4318",
      serviceName: "vmcp",
      serviceVersion: "1.0.0",
      tracingEnabled: true,
      metricsEnabled: true,
      samplingRate: "0.5",
      headers: { "X-Org": "a" },
      insecure: true,
      enablePrometheusMetricsPath: true,
      environmentVariables: ["POD_NAME"],
      customAttributes: { team: "platform" },
      useLegacyAttributes: false,
      caCertPath: "/etc/ssl/otel-ca.pem",
    },
    invalid: { samplingRate: "2" },
    path: "/samplingRate",
    level: "schema",
  },
  {
    schema: TELEMETRY_ID,
    rule: "embedded telemetry headers are a map",
    valid: { headers: { Authorization: "Bearer x" } },
    invalid: { headers: ["Authorization=Bearer x"] },
    path: "/headers",
    level: "schema",
  },
  {
    schema: `${TELEMETRY_ID}#/$defs/MCPTelemetryConfigReference`,
    rule: "a telemetry reference needs a name",
    valid: { name: "otel", serviceName: "" },
    invalid: { serviceName: "fetch" },
    path: "/name",
    level: "schema",
  },
  {
    schema: `${WORKLOAD_ID}#/$defs/NetworkPermissions`,
    rule: "allowed outbound ports are ports",
    valid: {
      mode: "bridge",
      outbound: { insecureAllowAll: false, allowHost: ["api.github.com"], allowPort: [443] },
    },
    invalid: { outbound: { allowPort: [0] } },
    path: "/outbound/allowPort/0",
    level: "schema",
  },
  {
    schema: `${WORKLOAD_ID}#/$defs/EmbeddingServerRef`,
    rule: "an embedding server reference needs a name",
    valid: { name: "embeddings" },
    invalid: {},
    path: "/name",
    level: "schema",
  },
  {
    schema: `${WORKLOAD_ID}#/$defs/RateLimitConfig`,
    rule: "a rate limit config alone sets shared or tools",
    valid: { shared: bucket },
    invalid: { tools: [] },
    path: "",
    level: "cel",
  },
];

const set = defaultSchemaSet();

function schemaIssue(ref: string, value: unknown): SchemaIssue[] {
  return set.validateSchema(ref, value);
}

describe.each(KIND_CASES)("$kind: $rule", (c) => {
  it("accepts the valid case", () => {
    expectValid(c.kind, resource(c.kind, c.valid));
  });
  it(`rejects the invalid case at ${c.path} (${c.level})`, () => {
    expectIssue(c.kind, resource(c.kind, c.invalid), { path: c.path, level: c.level });
  });
});

describe.each(CONFIG_CASES)("$schema: $rule", (c) => {
  it("accepts the valid case", () => {
    expect(schemaIssue(c.schema, c.valid)).toEqual([]);
  });
  it(`rejects the invalid case at ${c.path || "/"} (${c.level})`, () => {
    const issues = schemaIssue(c.schema, c.invalid);
    expect(
      issues.some((i) => i.path === c.path && i.level === c.level),
      JSON.stringify(issues),
    ).toBe(true);
  });
});

function readSchema(path: string): SchemaNode {
  return parse(readFileSync(join(schemasDir(), path), "utf8")) as SchemaNode;
}

interface Found {
  file: string;
  pointer: string;
  node: SchemaNode;
}

/** Every schema node of a file, with its JSON pointer. */
function nodesOf(file: string): Found[] {
  const out: Found[] = [];
  const visit = (node: unknown, pointer: string): void => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => visit(n, `${pointer}/${i}`));
      return;
    }
    if (node === null || typeof node !== "object") return;
    const n = node as SchemaNode;
    out.push({ file, pointer, node: n });
    for (const key of ["properties", "$defs"]) {
      const children = n[key] as Record<string, unknown> | undefined;
      for (const [name, child] of Object.entries(children ?? {})) {
        visit(child, `${pointer}/${key}/${name}`);
      }
    }
    for (const key of ["items", "additionalProperties", "anyOf"]) {
      if (n[key] !== undefined && typeof n[key] === "object") visit(n[key], `${pointer}/${key}`);
    }
  };
  visit(readSchema(file), "");
  return out;
}

interface CelRuleNode {
  rule: string;
  message: string;
}

describe("schema files", () => {
  const all = FILES.flatMap(nodesOf);

  it("have defaults that are valid against their own schema", () => {
    const withDefaults = all.filter((f) => f.node.default !== undefined);
    expect(withDefaults.length).toBeGreaterThan(20);
    const invalid = withDefaults
      .map((f) => ({
        at: `${f.file}#${f.pointer}`,
        issues: schemaIssue(`${SCHEMA_BASE}${f.file}#${f.pointer}`, f.node.default),
      }))
      .filter((r) => r.issues.length > 0);
    expect(invalid).toEqual([]);
  });

  it("have every CEL rule exercised by an invalid case with the rule's message", () => {
    const rules = all.flatMap(
      (f) => (f.node["x-kubernetes-validations"] as CelRuleNode[] | undefined) ?? [],
    );
    expect(rules.length).toBe(21);
    const messages = new Set<string>();
    for (const c of KIND_CASES.filter((k) => k.level === "cel")) {
      for (const i of issuesOf(c.kind, resource(c.kind, c.invalid))) {
        if (i.level === "cel") messages.add(i.message);
      }
    }
    for (const c of CONFIG_CASES.filter((k) => k.level === "cel")) {
      for (const i of schemaIssue(c.schema, c.invalid))
        if (i.level === "cel") messages.add(i.message);
    }
    expect(rules.filter((r) => !messages.has(r.message)).map((r) => r.rule)).toEqual([]);
  });

  it("mark the replaced fields deprecated", () => {
    const deprecated = all
      .filter((f) => f.node.deprecated === true)
      .map((f) => `${f.file}#${f.pointer}`)
      .sort();
    expect(deprecated).toEqual([
      "crd/mcpremoteproxy.yaml#/$defs/MCPRemoteProxySpec/properties/oidcConfig",
      "crd/mcpremoteproxy.yaml#/$defs/MCPRemoteProxySpec/properties/remoteUrl",
      "crd/mcpserver.yaml#/$defs/MCPServerSpec/properties/oidcConfig",
      "crd/mcpserver.yaml#/$defs/MCPServerSpec/properties/telemetry",
      "crd/mcpserverentry.yaml#/$defs/MCPServerEntrySpec/properties/remoteUrl",
    ]);
  });

  it("never close objects with additionalProperties: false", () => {
    expect(all.filter((f) => f.node.additionalProperties === false)).toEqual([]);
  });

  it.each([
    ["MCPServer", ["mcpserver", "mcps"]],
    ["MCPRemoteProxy", ["rp", "mcprp"]],
    ["MCPServerEntry", ["mcpentry", "mse"]],
    ["MCPGroup", ["mcpg", "mcpgroup"]],
    ["MCPToolConfig", ["tc", "toolconfig"]],
    ["MCPTelemetryConfig", ["mcpotel"]],
    ["EmbeddingServer", ["emb", "embedding"]],
  ] as const)("give %s its short names, a Phase or Ready column and Age", (kind, shortNames) => {
    const crd = readSchema(`crd/${kind.toLowerCase()}.yaml`)["x-mcpfleet-crd"] as {
      singular: string;
      shortNames: string[];
      printerColumns: { name: string; type: string; jsonPath: string }[];
    };
    expect(crd.singular).toBe(kind.toLowerCase());
    expect(crd.shortNames).toEqual(shortNames);
    const columns = crd.printerColumns.map((c) => c.name);
    expect(columns.includes("Phase") || columns.includes("Ready")).toBe(true);
    expect(crd.printerColumns.find((c) => c.name === "Age")).toEqual({
      name: "Age",
      type: "date",
      jsonPath: ".metadata.creationTimestamp",
    });
  });
});

describe("examples/resources", () => {
  const dir = join(schemasDir(), "..", "examples", "resources");
  const ours: ReadonlySet<string> = new Set(KINDS);
  const docs = loadYamlDocs(dir).filter((d) => ours.has(String(d.doc.kind)));

  it("hold at least one example of every workload kind", () => {
    expect(new Set(docs.map((d) => d.doc.kind))).toEqual(ours);
  });

  it("name files after the kind they hold", () => {
    for (const d of docs)
      expect(d.file.startsWith(`${String(d.doc.kind).toLowerCase()}-`)).toBe(true);
    expect(readdirSync(dir).length).toBeGreaterThanOrEqual(docs.length);
  });

  it.each(docs.map((d) => [`${d.file}#${d.index}`, d] as const))("%s validates", (_name, d) => {
    expect(d.doc.metadata).not.toHaveProperty("namespace");
    expectValid(String(d.doc.kind), d.doc);
  });
});

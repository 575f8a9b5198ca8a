import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import {
  SCHEMA_BASE,
  type SchemaIssue,
  type SchemaNode,
  VMCP_CONFIG_SCHEMA_ID,
  defaultSchemaSet,
  schemasDir,
} from "../../src/schema/index.js";
import { type Doc, loadYamlDocs } from "./helpers.js";

const API_VERSION = "toolhive.stacklok.dev/v1alpha1";
const EXAMPLES = join(import.meta.dirname, "../../examples/resources");

/** The schema files these tests cover, relative to schemas/. */
const FILES = [
  "config/vmcp.yaml",
  "crd/virtualmcpserver.yaml",
  "crd/virtualmcpcompositetooldefinition.yaml",
];

type Level = SchemaIssue["level"];

function def(name: string): string {
  return `${VMCP_CONFIG_SCHEMA_ID}#/$defs/${name}`;
}

function issues(target: string, doc: unknown): SchemaIssue[] {
  const set = defaultSchemaSet();
  return target.startsWith("https://")
    ? set.validateSchema(target, doc)
    : set.validateKind(target, doc);
}

/** A case: a valid document and a minimal change that breaks one rule. */
interface Case {
  name: string;
  /** A `$defs` name of config/vmcp.yaml, the root `Config`, or a kind. */
  target: string;
  valid: unknown;
  invalid: unknown;
  path: string;
  level: Level;
}

const CONFIG = "Config";

function targetId(target: string): string {
  if (target === CONFIG) return VMCP_CONFIG_SCHEMA_ID;
  if (target === "VirtualMCPServer" || target === "VirtualMCPCompositeToolDefinition") {
    return target;
  }
  return def(target);
}

const vmcp = (spec: Doc): Doc => ({
  apiVersion: API_VERSION,
  kind: "VirtualMCPServer",
  metadata: { name: "gateway" },
  spec,
});

const ctd = (spec: Doc): Doc => ({
  apiVersion: API_VERSION,
  kind: "VirtualMCPCompositeToolDefinition",
  metadata: { name: "workflow" },
  spec,
});

const toolStep = (id: string, extra: Doc = {}): Doc => ({ id, tool: "github.get_issue", ...extra });
const workflow = (steps: Doc[], extra: Doc = {}): Doc => ({ name: "wf", steps, ...extra });
const minimalServer: Doc = { groupRef: "engineering", incomingAuth: { type: "anonymous" } };
const tokenExchange = { tokenUrl: "https://sts.example.com/token", audience: "github" };

const CASES: Case[] = [
  // Config (root) and EmbeddedConfig
  {
    name: "Config requires groupRef",
    target: CONFIG,
    valid: { groupRef: "engineering" },
    invalid: { name: "gateway" },
    path: "/groupRef",
    level: "schema",
  },
  {
    name: "groupRef is a non-empty string",
    target: CONFIG,
    valid: { groupRef: "g" },
    invalid: { groupRef: "" },
    path: "/groupRef",
    level: "schema",
  },
  {
    name: "composite tool names are unique",
    target: "EmbeddedConfig",
    valid: {
      compositeTools: [workflow([toolStep("a")]), { ...workflow([toolStep("a")]), name: "wf2" }],
    },
    invalid: { compositeTools: [workflow([toolStep("a")]), workflow([toolStep("b")])] },
    path: "/compositeTools",
    level: "cel",
  },
  {
    name: "compositeToolRefs name each definition once",
    target: "EmbeddedConfig",
    valid: { compositeToolRefs: [{ name: "a" }, { name: "b" }] },
    invalid: { compositeToolRefs: [{ name: "a" }, { name: "a" }] },
    path: "/compositeToolRefs",
    level: "cel",
  },
  {
    name: "compositeToolRefs entries need a name",
    target: "EmbeddedConfig",
    valid: { compositeToolRefs: [{ name: "a" }] },
    invalid: { compositeToolRefs: [{}] },
    path: "/compositeToolRefs/0/name",
    level: "schema",
  },
  {
    name: "at most 32 inline composite tools",
    target: "EmbeddedConfig",
    valid: {
      compositeTools: Array.from({ length: 32 }, (_, i) =>
        workflow([toolStep("a")], { name: `t${i}` }),
      ),
    },
    invalid: {
      compositeTools: Array.from({ length: 33 }, (_, i) =>
        workflow([toolStep("a")], { name: `t${i}` }),
      ),
    },
    path: "/compositeTools",
    level: "schema",
  },
  {
    name: "static backend names are unique",
    target: "EmbeddedConfig",
    valid: {
      outgoingAuth: { source: "inline" },
      backends: [
        { name: "a", url: "http://a:8080/mcp", transport: "sse" },
        { name: "b", url: "http://b:8080/mcp", transport: "sse" },
      ],
    },
    invalid: {
      outgoingAuth: { source: "inline" },
      backends: [
        { name: "a", url: "http://a:8080/mcp", transport: "sse" },
        { name: "a", url: "http://b:8080/mcp", transport: "sse" },
      ],
    },
    path: "/backends",
    level: "cel",
  },
  {
    name: "static backends are not combined with discovered outgoing auth",
    target: "EmbeddedConfig",
    valid: {
      outgoingAuth: { source: "inline" },
      backends: [{ name: "a", url: "http://a:8080/mcp", transport: "sse" }],
    },
    invalid: {
      outgoingAuth: { source: "discovered" },
      backends: [{ name: "a", url: "http://a:8080/mcp", transport: "sse" }],
    },
    path: "/backends",
    level: "cel",
  },
  {
    name: "metadata is a map of strings",
    target: "EmbeddedConfig",
    valid: { metadata: { team: "engineering" } },
    invalid: { metadata: { replicas: 2 } },
    path: "/metadata/replicas",
    level: "schema",
  },
  {
    name: "telemetry is the embedded telemetry Config",
    target: "EmbeddedConfig",
    valid: { telemetry: { tracingEnabled: true, samplingRate: "0.1" } },
    invalid: { telemetry: { tracingEnabled: "yes" } },
    path: "/telemetry/tracingEnabled",
    level: "schema",
  },
  {
    name: "audit is the embedded audit Config",
    target: "EmbeddedConfig",
    valid: { audit: { enabled: true, maxDataSize: 4096 } },
    invalid: { audit: { enabled: true, maxDataSize: "4k" } },
    path: "/audit/maxDataSize",
    level: "schema",
  },

  // StaticBackend
  {
    name: "static backends need a transport",
    target: "StaticBackend",
    valid: { name: "a", url: "https://a.example.com/mcp", transport: "streamable-http" },
    invalid: { name: "a", url: "https://a.example.com/mcp" },
    path: "/transport",
    level: "schema",
  },
  {
    name: "static backend transport is sse or streamable-http",
    target: "StaticBackend",
    valid: { name: "a", url: "https://a.example.com/mcp", transport: "sse" },
    invalid: { name: "a", url: "https://a.example.com/mcp", transport: "stdio" },
    path: "/transport",
    level: "schema",
  },
  {
    name: "static backend URLs are http or https",
    target: "StaticBackend",
    valid: { name: "a", url: "http://a:8080/mcp", transport: "sse" },
    invalid: { name: "a", url: "ftp://a/mcp", transport: "sse" },
    path: "/url",
    level: "schema",
  },
  {
    name: "static backend type is entry or empty",
    target: "StaticBackend",
    valid: { name: "a", url: "http://a/mcp", transport: "sse", type: "" },
    invalid: { name: "a", url: "http://a/mcp", transport: "sse", type: "remote" },
    path: "/type",
    level: "schema",
  },
  {
    name: "caBundlePath only for entry backends",
    target: "StaticBackend",
    valid: {
      name: "a",
      url: "https://a/mcp",
      transport: "sse",
      type: "entry",
      caBundlePath: "/etc/vmcp/ca-bundles/a/ca.crt",
    },
    invalid: {
      name: "a",
      url: "https://a/mcp",
      transport: "sse",
      caBundlePath: "/etc/vmcp/ca-bundles/a/ca.crt",
    },
    path: "/caBundlePath",
    level: "cel",
  },

  // Incoming authentication (configuration form)
  {
    name: "incoming auth type is oidc, local or anonymous",
    target: "IncomingAuthConfig",
    valid: { type: "local" },
    invalid: { type: "basic" },
    path: "/type",
    level: "schema",
  },
  {
    name: "incoming auth type oidc needs oidc",
    target: "IncomingAuthConfig",
    valid: { type: "oidc", oidc: { issuer: "https://idp.example.com" } },
    invalid: { type: "oidc" },
    path: "/oidc",
    level: "cel",
  },
  {
    name: "oidc settings only with type oidc",
    target: "IncomingAuthConfig",
    valid: { type: "anonymous" },
    invalid: { type: "anonymous", oidc: { issuer: "https://idp.example.com" } },
    path: "/oidc",
    level: "cel",
  },
  {
    name: "oidc needs an issuer",
    target: "OIDCConfig",
    valid: { issuer: "https://idp.example.com", audience: "vmcp" },
    invalid: { audience: "vmcp" },
    path: "/issuer",
    level: "schema",
  },
  {
    name: "an http issuer needs insecureAllowHttp",
    target: "OIDCConfig",
    valid: { issuer: "http://keycloak.local:8080/realms/dev", insecureAllowHttp: true },
    invalid: { issuer: "http://keycloak.local:8080/realms/dev" },
    path: "/issuer",
    level: "cel",
  },
  {
    name: "clientSecretEnv is an environment variable name",
    target: "OIDCConfig",
    valid: { issuer: "https://idp.example.com", clientSecretEnv: "VMCP_OIDC_CLIENT_SECRET" },
    invalid: { issuer: "https://idp.example.com", clientSecretEnv: "vmcp-oidc-secret" },
    path: "/clientSecretEnv",
    level: "schema",
  },
  {
    name: "cedar authorization needs policies",
    target: "AuthzConfig",
    valid: { type: "cedar", policies: ["permit(principal, action, resource);"] },
    invalid: { type: "cedar", policies: [] },
    path: "/policies",
    level: "cel",
  },
  {
    name: "policies only with cedar",
    target: "AuthzConfig",
    valid: { type: "none" },
    invalid: { type: "none", policies: ["permit(principal, action, resource);"] },
    path: "/policies",
    level: "cel",
  },

  // Outgoing authentication (configuration form)
  {
    name: "outgoing auth needs a source",
    target: "OutgoingAuthConfig",
    valid: { source: "discovered" },
    invalid: { default: { type: "unauthenticated" } },
    path: "/source",
    level: "schema",
  },
  {
    name: "outgoing auth source is inline or discovered",
    target: "OutgoingAuthConfig",
    valid: { source: "inline", backends: { github: { type: "unauthenticated" } } },
    invalid: { source: "mixed" },
    path: "/source",
    level: "schema",
  },
  {
    name: "backend strategy type is one of four",
    target: "BackendAuthStrategy",
    valid: { type: "unauthenticated" },
    invalid: { type: "pass_through" },
    path: "/type",
    level: "schema",
  },
  {
    name: "header_injection needs headerInjection",
    target: "BackendAuthStrategy",
    valid: {
      type: "header_injection",
      headerInjection: { headerName: "X-API-Key", headerValueEnv: "GITHUB_API_KEY" },
    },
    invalid: { type: "header_injection" },
    path: "/headerInjection",
    level: "cel",
  },
  {
    name: "headerInjection only with type header_injection",
    target: "BackendAuthStrategy",
    valid: { type: "unauthenticated" },
    invalid: {
      type: "unauthenticated",
      headerInjection: { headerName: "X-API-Key", headerValueEnv: "GITHUB_API_KEY" },
    },
    path: "/headerInjection",
    level: "cel",
  },
  {
    name: "token_exchange needs tokenExchange",
    target: "BackendAuthStrategy",
    valid: { type: "token_exchange", tokenExchange },
    invalid: { type: "token_exchange" },
    path: "/tokenExchange",
    level: "cel",
  },
  {
    name: "tokenExchange only with type token_exchange",
    target: "BackendAuthStrategy",
    valid: { type: "token_exchange", tokenExchange },
    invalid: { type: "unauthenticated", tokenExchange },
    path: "/tokenExchange",
    level: "cel",
  },
  {
    name: "upstream_inject needs upstreamInject",
    target: "BackendAuthStrategy",
    valid: { type: "upstream_inject", upstreamInject: { providerName: "github" } },
    invalid: { type: "upstream_inject" },
    path: "/upstreamInject",
    level: "cel",
  },
  {
    name: "upstreamInject only with type upstream_inject",
    target: "BackendAuthStrategy",
    valid: { type: "upstream_inject", upstreamInject: { providerName: "github" } },
    invalid: { type: "unauthenticated", upstreamInject: { providerName: "github" } },
    path: "/upstreamInject",
    level: "cel",
  },
  {
    name: "upstreamInject names a provider",
    target: "UpstreamInjectStrategy",
    valid: { providerName: "github" },
    invalid: { providerName: "" },
    path: "/providerName",
    level: "schema",
  },
  {
    name: "headerValue and headerValueEnv are not both set",
    target: "HeaderInjectionStrategy",
    valid: { headerName: "X-API-Key", headerValue: "not-a-secret" },
    invalid: { headerName: "X-API-Key", headerValue: "v", headerValueEnv: "API_KEY" },
    path: "/headerValueEnv",
    level: "cel",
  },
  {
    name: "header injection needs a value",
    target: "HeaderInjectionStrategy",
    valid: { headerName: "X-API-Key", headerValueEnv: "API_KEY" },
    invalid: { headerName: "X-API-Key" },
    path: "/headerValue",
    level: "cel",
  },
  {
    name: "header injection needs a header name",
    target: "HeaderInjectionStrategy",
    valid: { headerName: "X-API-Key", headerValueEnv: "API_KEY" },
    invalid: { headerValueEnv: "API_KEY" },
    path: "/headerName",
    level: "schema",
  },
  {
    name: "clientSecret and clientSecretEnv are not both set",
    target: "TokenExchangeStrategy",
    valid: { ...tokenExchange, clientId: "vmcp", clientSecretEnv: "TOKEN_EXCHANGE_SECRET" },
    invalid: { ...tokenExchange, clientSecret: "s3cret", clientSecretEnv: "TOKEN_EXCHANGE_SECRET" },
    path: "/clientSecretEnv",
    level: "cel",
  },
  {
    name: "token exchange needs a token URL",
    target: "TokenExchangeStrategy",
    valid: tokenExchange,
    invalid: { audience: "github" },
    path: "/tokenUrl",
    level: "schema",
  },

  // Aggregation
  {
    name: "conflictResolution is prefix, priority or manual",
    target: "AggregationConfig",
    valid: { conflictResolution: "manual" },
    invalid: { conflictResolution: "first" },
    path: "/conflictResolution",
    level: "schema",
  },
  {
    name: "priority conflict resolution needs priorityOrder",
    target: "AggregationConfig",
    valid: {
      conflictResolution: "priority",
      conflictResolutionConfig: { priorityOrder: ["github"] },
    },
    invalid: {
      conflictResolution: "priority",
      conflictResolutionConfig: { prefixFormat: "{workload}." },
    },
    path: "/conflictResolutionConfig",
    level: "cel",
  },
  {
    name: "each workload appears once in tools",
    target: "AggregationConfig",
    valid: { tools: [{ workload: "github", filter: ["get_issue"] }, { workload: "context7" }] },
    invalid: { tools: [{ workload: "github", filter: ["get_issue"] }, { workload: "github" }] },
    path: "/tools",
    level: "cel",
  },
  {
    name: "workload tool config names its workload",
    target: "WorkloadToolConfig",
    valid: { workload: "github", excludeAll: true },
    invalid: { excludeAll: true },
    path: "/workload",
    level: "schema",
  },
  {
    name: "toolConfigRef needs a name",
    target: "WorkloadToolConfig",
    valid: { workload: "github", toolConfigRef: { name: "github-tools" } },
    invalid: { workload: "github", toolConfigRef: {} },
    path: "/toolConfigRef/name",
    level: "schema",
  },
  {
    name: "annotation overrides are booleans",
    target: "WorkloadToolConfig",
    valid: {
      workload: "github",
      overrides: {
        create_issue: { name: "gh_create_issue", annotations: { destructiveHint: false } },
      },
    },
    invalid: {
      workload: "github",
      overrides: { create_issue: { annotations: { destructiveHint: "no" } } },
    },
    path: "/overrides/create_issue/annotations/destructiveHint",
    level: "schema",
  },

  // Composite tools
  {
    name: "composite tools need steps",
    target: "CompositeToolConfig",
    valid: workflow([toolStep("a")]),
    invalid: { name: "wf" },
    path: "/steps",
    level: "schema",
  },
  {
    name: "composite tools need at least one step",
    target: "CompositeToolConfig",
    valid: workflow([toolStep("a")]),
    invalid: workflow([]),
    path: "/steps",
    level: "schema",
  },
  {
    name: "composite tool names are tool names",
    target: "CompositeToolConfig",
    valid: workflow([toolStep("a")], { name: "research_issue" }),
    invalid: workflow([toolStep("a")], { name: "research issue" }),
    path: "/name",
    level: "schema",
  },
  {
    name: "step ids are unique",
    target: "CompositeToolConfig",
    valid: workflow([toolStep("a"), toolStep("b")]),
    invalid: workflow([toolStep("a"), toolStep("a")]),
    path: "/steps",
    level: "cel",
  },
  {
    name: "dependsOn names existing steps",
    target: "CompositeToolConfig",
    valid: workflow([toolStep("a"), toolStep("b", { dependsOn: ["a"] })]),
    invalid: workflow([toolStep("a"), toolStep("b", { dependsOn: ["c"] })]),
    path: "/steps",
    level: "cel",
  },
  {
    name: "a step does not depend on itself",
    target: "CompositeToolConfig",
    valid: workflow([toolStep("a"), toolStep("b", { dependsOn: ["a"] })]),
    invalid: workflow([toolStep("a"), toolStep("b", { dependsOn: ["a", "b"] })]),
    path: "/steps",
    level: "cel",
  },
  {
    name: "workflow timeout is a duration",
    target: "CompositeToolConfig",
    valid: workflow([toolStep("a")], { timeout: "1h30m" }),
    invalid: workflow([toolStep("a")], { timeout: "90 minutes" }),
    path: "/timeout",
    level: "schema",
  },
  {
    name: "parameters are an object schema",
    target: "CompositeToolConfig",
    valid: workflow([toolStep("a")], {
      parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
    }),
    invalid: workflow([toolStep("a")], {
      parameters: { type: "array", items: { type: "string" } },
    }),
    path: "/parameters/type",
    level: "schema",
  },
  {
    name: "parameters declare their type",
    target: "CompositeToolConfig",
    valid: workflow([toolStep("a")], { parameters: { type: "object" } }),
    invalid: workflow([toolStep("a")], { parameters: { properties: {} } }),
    path: "/parameters/type",
    level: "schema",
  },

  // Steps
  {
    name: "steps need an id",
    target: "WorkflowStepConfig",
    valid: toolStep("a"),
    invalid: { tool: "github.get_issue" },
    path: "/id",
    level: "schema",
  },
  {
    name: "step type is tool, elicitation or forEach",
    target: "WorkflowStepConfig",
    valid: toolStep("a", { type: "tool" }),
    invalid: toolStep("a", { type: "tool_call" }),
    path: "/type",
    level: "schema",
  },
  {
    name: "tool steps (the default type) need tool",
    target: "WorkflowStepConfig",
    valid: { id: "a", tool: "fetch" },
    invalid: { id: "a", arguments: { url: "https://example.com" } },
    path: "/tool",
    level: "cel",
  },
  {
    name: "explicit tool steps need tool",
    target: "WorkflowStepConfig",
    valid: { id: "a", type: "tool", tool: "fetch" },
    invalid: { id: "a", type: "tool" },
    path: "/tool",
    level: "cel",
  },
  {
    name: "tool only on tool steps",
    target: "WorkflowStepConfig",
    valid: { id: "a", type: "elicitation", message: "Proceed?" },
    invalid: { id: "a", type: "elicitation", message: "Proceed?", tool: "fetch" },
    path: "/tool",
    level: "cel",
  },
  {
    name: "elicitation steps need message",
    target: "WorkflowStepConfig",
    valid: {
      id: "a",
      type: "elicitation",
      message: "Proceed?",
      onDecline: { action: "skip_remaining" },
    },
    invalid: { id: "a", type: "elicitation", onDecline: { action: "skip_remaining" } },
    path: "/message",
    level: "cel",
  },
  {
    name: "elicitation fields only on elicitation steps",
    target: "WorkflowStepConfig",
    valid: toolStep("a"),
    invalid: toolStep("a", { onCancel: { action: "abort" } }),
    path: "/type",
    level: "cel",
  },
  {
    name: "elicitation response action is skip_remaining, abort or continue",
    target: "WorkflowStepConfig",
    valid: { id: "a", type: "elicitation", message: "Proceed?", onCancel: { action: "continue" } },
    invalid: { id: "a", type: "elicitation", message: "Proceed?", onCancel: { action: "retry" } },
    path: "/onCancel/action",
    level: "schema",
  },
  {
    name: "forEach steps need collection",
    target: "WorkflowStepConfig",
    valid: {
      id: "each",
      type: "forEach",
      collection: "{{.params.repos}}",
      step: { tool: "github.list_pull_requests" },
    },
    invalid: { id: "each", type: "forEach", step: { tool: "github.list_pull_requests" } },
    path: "/collection",
    level: "cel",
  },
  {
    name: "forEach steps need step",
    target: "WorkflowStepConfig",
    valid: {
      id: "each",
      type: "forEach",
      collection: "{{.params.repos}}",
      step: { tool: "github.list_pull_requests" },
    },
    invalid: { id: "each", type: "forEach", collection: "{{.params.repos}}" },
    path: "/step",
    level: "cel",
  },
  {
    name: "forEach inner steps are tool steps",
    target: "WorkflowStepConfig",
    valid: {
      id: "each",
      type: "forEach",
      collection: "{{.params.repos}}",
      step: { type: "tool", tool: "github.list_pull_requests" },
    },
    invalid: {
      id: "each",
      type: "forEach",
      collection: "{{.params.repos}}",
      step: { type: "elicitation", tool: "github.list_pull_requests" },
    },
    path: "/step/type",
    level: "cel",
  },
  {
    name: "forEach inner steps need tool",
    target: "WorkflowStepConfig",
    valid: {
      id: "each",
      type: "forEach",
      collection: "{{.params.repos}}",
      step: { tool: "fetch" },
    },
    invalid: {
      id: "each",
      type: "forEach",
      collection: "{{.params.repos}}",
      step: { arguments: {} },
    },
    path: "/step/tool",
    level: "cel",
  },
  {
    name: "forEach fields only on forEach steps",
    target: "WorkflowStepConfig",
    valid: toolStep("a"),
    invalid: toolStep("a", { maxParallel: 2 }),
    path: "/type",
    level: "cel",
  },
  {
    name: "maxIterations is capped at 1000",
    target: "WorkflowStepConfig",
    valid: {
      id: "e",
      type: "forEach",
      collection: "{{.params.x}}",
      maxIterations: 1000,
      step: { tool: "t" },
    },
    invalid: {
      id: "e",
      type: "forEach",
      collection: "{{.params.x}}",
      maxIterations: 1001,
      step: { tool: "t" },
    },
    path: "/maxIterations",
    level: "schema",
  },
  {
    name: "maxIterations is at least 1",
    target: "WorkflowStepConfig",
    valid: {
      id: "e",
      type: "forEach",
      collection: "{{.params.x}}",
      maxIterations: 1,
      step: { tool: "t" },
    },
    invalid: {
      id: "e",
      type: "forEach",
      collection: "{{.params.x}}",
      maxIterations: 0,
      step: { tool: "t" },
    },
    path: "/maxIterations",
    level: "schema",
  },
  {
    name: "maxParallel is at least 1",
    target: "WorkflowStepConfig",
    valid: {
      id: "e",
      type: "forEach",
      collection: "{{.params.x}}",
      maxParallel: 1,
      step: { tool: "t" },
    },
    invalid: {
      id: "e",
      type: "forEach",
      collection: "{{.params.x}}",
      maxParallel: 0,
      step: { tool: "t" },
    },
    path: "/maxParallel",
    level: "schema",
  },
  {
    name: "step timeout is a duration",
    target: "WorkflowStepConfig",
    valid: toolStep("a", { timeout: "45s" }),
    invalid: toolStep("a", { timeout: "45" }),
    path: "/timeout",
    level: "schema",
  },
  {
    name: "retry fields only with action retry (retryCount)",
    target: "WorkflowStepConfig",
    valid: toolStep("a", { onError: { action: "retry", retryCount: 3, retryDelay: "2s" } }),
    invalid: toolStep("a", { onError: { action: "continue", retryCount: 3 } }),
    path: "/onError/action",
    level: "cel",
  },
  {
    name: "retry fields only with action retry (retryDelay, default action)",
    target: "StepErrorHandling",
    valid: { action: "retry", retryDelay: "5s" },
    invalid: { retryDelay: "5s" },
    path: "/action",
    level: "cel",
  },
  {
    name: "onError action is abort, continue or retry",
    target: "StepErrorHandling",
    valid: { action: "continue" },
    invalid: { action: "skip" },
    path: "/action",
    level: "schema",
  },

  // Output
  {
    name: "output needs properties",
    target: "OutputConfig",
    valid: { properties: { url: { type: "string", value: "{{.steps.a.output.url}}" } } },
    invalid: { required: [] },
    path: "/properties",
    level: "schema",
  },
  {
    name: "output required names output properties",
    target: "OutputConfig",
    valid: { properties: { url: { type: "string", value: "{{.params.u}}" } }, required: ["url"] },
    invalid: { properties: { url: { type: "string", value: "{{.params.u}}" } }, required: ["uri"] },
    path: "/required",
    level: "cel",
  },
  {
    name: "output property type is a JSON type",
    target: "OutputProperty",
    valid: { type: "number", value: "{{.steps.a.output.score}}" },
    invalid: { type: "float", value: "{{.steps.a.output.score}}" },
    path: "/type",
    level: "schema",
  },
  {
    name: "value is required for non-object types",
    target: "OutputProperty",
    valid: { type: "string", value: "{{.steps.a.output.title}}", default: "" },
    invalid: { type: "string", default: "" },
    path: "/value",
    level: "cel",
  },
  {
    name: "an object property has value or properties",
    target: "OutputProperty",
    valid: { type: "object", value: "{{.steps.a.output}}" },
    invalid: { type: "object", description: "the issue" },
    path: "/value",
    level: "cel",
  },
  {
    name: "an object property has value or properties, not both",
    target: "OutputProperty",
    valid: {
      type: "object",
      properties: { n: { type: "integer", value: "{{.steps.a.output.n}}" } },
    },
    invalid: {
      type: "object",
      value: "{{.steps.a.output}}",
      properties: { n: { type: "integer", value: "{{.steps.a.output.n}}" } },
    },
    path: "/properties",
    level: "cel",
  },
  {
    name: "properties only for object types",
    target: "OutputProperty",
    valid: { type: "array", value: "{{.steps.a.output.items}}" },
    invalid: {
      type: "array",
      value: "{{.steps.a.output.items}}",
      properties: { n: { type: "integer", value: "1" } },
    },
    path: "/properties",
    level: "cel",
  },
  {
    name: "nested output properties follow the same rules",
    target: "OutputProperty",
    valid: {
      type: "object",
      properties: { n: { type: "integer", value: "{{.steps.a.output.n}}" } },
    },
    invalid: { type: "object", properties: { n: { type: "integer" } } },
    path: "/properties/n/value",
    level: "cel",
  },

  // Operations
  {
    name: "logLevel may only be debug",
    target: "OperationalConfig",
    valid: { logLevel: "debug" },
    invalid: { logLevel: "info" },
    path: "/logLevel",
    level: "schema",
  },
  {
    name: "per-workload timeouts are durations",
    target: "OperationalConfig",
    valid: { timeouts: { default: "30s", perWorkload: { github: "1m" } } },
    invalid: { timeouts: { perWorkload: { github: 60 } } },
    path: "/timeouts/perWorkload/github",
    level: "schema",
  },
  {
    name: "healthCheckTimeout is below healthCheckInterval",
    target: "FailureHandlingConfig",
    valid: { healthCheckInterval: "10s", healthCheckTimeout: "5s" },
    invalid: { healthCheckInterval: "10s", healthCheckTimeout: "10s" },
    path: "/healthCheckTimeout",
    level: "cel",
  },
  {
    name: "healthCheckTimeout is below the default interval of 30s",
    target: "FailureHandlingConfig",
    valid: { healthCheckTimeout: "29s" },
    invalid: { healthCheckTimeout: "1m" },
    path: "/healthCheckTimeout",
    level: "cel",
  },
  {
    name: "unhealthyThreshold is at least 1",
    target: "FailureHandlingConfig",
    valid: { unhealthyThreshold: 1 },
    invalid: { unhealthyThreshold: 0 },
    path: "/unhealthyThreshold",
    level: "schema",
  },
  {
    name: "partialFailureMode is fail or best_effort",
    target: "FailureHandlingConfig",
    valid: { partialFailureMode: "best_effort" },
    invalid: { partialFailureMode: "partial" },
    path: "/partialFailureMode",
    level: "schema",
  },
  {
    name: "circuit breaker failureThreshold is at least 1",
    target: "CircuitBreakerConfig",
    valid: { enabled: true, failureThreshold: 1 },
    invalid: { enabled: true, failureThreshold: 0 },
    path: "/failureThreshold",
    level: "schema",
  },
  {
    name: "circuit breaker timeout is at least 1s",
    target: "CircuitBreakerConfig",
    valid: { enabled: true, timeout: "1s" },
    invalid: { enabled: true, timeout: "999ms" },
    path: "/timeout",
    level: "cel",
  },

  // Optimizer
  {
    name: "maxToolsToReturn is at least 1",
    target: "OptimizerConfig",
    valid: { maxToolsToReturn: 1 },
    invalid: { maxToolsToReturn: 0 },
    path: "/maxToolsToReturn",
    level: "schema",
  },
  {
    name: "maxToolsToReturn is at most 50",
    target: "OptimizerConfig",
    valid: { maxToolsToReturn: 50 },
    invalid: { maxToolsToReturn: 51 },
    path: "/maxToolsToReturn",
    level: "schema",
  },
  {
    name: "hybridSearchSemanticRatio is a decimal from 0 to 1",
    target: "OptimizerConfig",
    valid: { hybridSearchSemanticRatio: "1.0" },
    invalid: { hybridSearchSemanticRatio: "1.5" },
    path: "/hybridSearchSemanticRatio",
    level: "schema",
  },
  {
    name: "semanticDistanceThreshold is a decimal from 0 to 2",
    target: "OptimizerConfig",
    valid: { semanticDistanceThreshold: "2.0" },
    invalid: { semanticDistanceThreshold: "2.5" },
    path: "/semanticDistanceThreshold",
    level: "schema",
  },
  {
    name: "embeddingService is an http(s) URL",
    target: "OptimizerConfig",
    valid: { embeddingService: "http://embeddings.default.svc.cluster.local:8080" },
    invalid: { embeddingService: "embeddings:8080" },
    path: "/embeddingService",
    level: "schema",
  },
  {
    name: "embeddingHeaders only with embeddingProvider openai",
    target: "OptimizerConfig",
    valid: { embeddingProvider: "openai", embeddingHeaders: { "X-Team": "a" } },
    invalid: { embeddingProvider: "tei", embeddingHeaders: { "X-Team": "a" } },
    path: "/embeddingHeaders",
    level: "cel",
  },
  {
    name: "embeddingHeaders are header names, neither Authorization nor Content-Type",
    target: "OptimizerConfig",
    valid: { embeddingProvider: "openai", embeddingHeaders: { "X-Cache-Key": "a" } },
    invalid: { embeddingProvider: "openai", embeddingHeaders: { authorization: "Bearer x" } },
    path: "/embeddingHeaders",
    level: "cel",
  },
  {
    name: "embeddingProvider is tei or openai",
    target: "OptimizerConfig",
    valid: { embeddingProvider: "tei" },
    invalid: { embeddingProvider: "cohere" },
    path: "/embeddingProvider",
    level: "schema",
  },

  // Session storage (configuration form)
  {
    name: "redis session storage needs an address",
    target: "SessionStorageConfig",
    valid: { provider: "redis", address: "redis:6379", db: 1, keyPrefix: "vmcp:" },
    invalid: { provider: "redis", db: 1 },
    path: "/address",
    level: "cel",
  },
  {
    name: "session storage needs a provider",
    target: "SessionStorageConfig",
    valid: { provider: "memory" },
    invalid: { address: "redis:6379" },
    path: "/provider",
    level: "schema",
  },
  {
    name: "session storage db is not negative",
    target: "SessionStorageConfig",
    valid: { provider: "redis", address: "redis:6379", db: 0 },
    invalid: { provider: "redis", address: "redis:6379", db: -1 },
    path: "/db",
    level: "schema",
  },

  // VirtualMCPServer
  {
    name: "VirtualMCPServer needs incomingAuth",
    target: "VirtualMCPServer",
    valid: vmcp(minimalServer),
    invalid: vmcp({ groupRef: "engineering" }),
    path: "/spec/incomingAuth",
    level: "schema",
  },
  {
    name: "VirtualMCPServer needs a group",
    target: "VirtualMCPServer",
    valid: vmcp({ incomingAuth: { type: "anonymous" }, config: { groupRef: "engineering" } }),
    invalid: vmcp({ incomingAuth: { type: "anonymous" }, config: {} }),
    path: "/spec/groupRef",
    level: "cel",
  },
  {
    name: "groupRef is a name or {name}",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, groupRef: { name: "engineering" } }),
    invalid: vmcp({ ...minimalServer, groupRef: 7 }),
    path: "/spec/groupRef",
    level: "schema",
  },
  {
    name: "incoming auth type is anonymous or oidc",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, incomingAuth: { type: "anonymous" } }),
    invalid: vmcp({ ...minimalServer, incomingAuth: { type: "local" } }),
    path: "/spec/incomingAuth/type",
    level: "schema",
  },
  {
    name: "oidcConfig and oidcConfigRef are mutually exclusive",
    target: "VirtualMCPServer",
    valid: vmcp({
      ...minimalServer,
      incomingAuth: { type: "oidc", oidcConfigRef: { name: "corp-oidc", audience: "gateway" } },
    }),
    invalid: vmcp({
      ...minimalServer,
      incomingAuth: {
        type: "oidc",
        oidcConfig: { type: "kubernetes" },
        oidcConfigRef: { name: "corp-oidc", audience: "gateway" },
      },
    }),
    path: "/spec/incomingAuth/oidcConfigRef",
    level: "cel",
  },
  {
    name: "type oidc needs an OIDC configuration",
    target: "VirtualMCPServer",
    valid: vmcp({
      ...minimalServer,
      incomingAuth: { type: "oidc", oidcConfig: { type: "kubernetes" } },
    }),
    invalid: vmcp({ ...minimalServer, incomingAuth: { type: "oidc" } }),
    path: "/spec/incomingAuth/oidcConfigRef",
    level: "cel",
  },
  {
    name: "OIDC configuration only with type oidc",
    target: "VirtualMCPServer",
    valid: vmcp(minimalServer),
    invalid: vmcp({
      ...minimalServer,
      incomingAuth: {
        type: "anonymous",
        oidcConfigRef: { name: "corp-oidc", audience: "gateway" },
      },
    }),
    path: "/spec/incomingAuth/type",
    level: "cel",
  },
  {
    name: "oidcConfigRef needs an audience",
    target: "VirtualMCPServer",
    valid: vmcp({
      ...minimalServer,
      incomingAuth: { type: "oidc", oidcConfigRef: { name: "corp-oidc", audience: "gateway" } },
    }),
    invalid: vmcp({
      ...minimalServer,
      incomingAuth: { type: "oidc", oidcConfigRef: { name: "corp-oidc" } },
    }),
    path: "/spec/incomingAuth/oidcConfigRef/audience",
    level: "schema",
  },
  {
    name: "outgoing auth source is discovered or inline",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, outgoingAuth: { source: "inline" } }),
    invalid: vmcp({ ...minimalServer, outgoingAuth: { source: "mixed" } }),
    path: "/spec/outgoingAuth/source",
    level: "schema",
  },
  {
    name: "external_auth_config_ref backends name the MCPExternalAuthConfig",
    target: "VirtualMCPServer",
    valid: vmcp({
      ...minimalServer,
      outgoingAuth: {
        source: "inline",
        backends: {
          github: {
            type: "external_auth_config_ref",
            externalAuthConfigRef: { name: "github-token-exchange" },
          },
        },
      },
    }),
    invalid: vmcp({
      ...minimalServer,
      outgoingAuth: {
        source: "inline",
        backends: { github: { type: "external_auth_config_ref" } },
      },
    }),
    path: "/spec/outgoingAuth/backends/github/externalAuthConfigRef",
    level: "cel",
  },
  {
    name: "externalAuthConfigRef only with type external_auth_config_ref",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, outgoingAuth: { default: { type: "discovered" } } }),
    invalid: vmcp({
      ...minimalServer,
      outgoingAuth: {
        default: { type: "discovered", externalAuthConfigRef: { name: "github-token-exchange" } },
      },
    }),
    path: "/spec/outgoingAuth/default/externalAuthConfigRef",
    level: "cel",
  },
  {
    name: "the later spelling externalAuthConfigRef names the MCPExternalAuthConfig too",
    target: "VirtualMCPServer",
    valid: vmcp({
      ...minimalServer,
      outgoingAuth: {
        default: { type: "externalAuthConfigRef", externalAuthConfigRef: { name: "github" } },
      },
    }),
    invalid: vmcp({
      ...minimalServer,
      outgoingAuth: { default: { type: "externalAuthConfigRef" } },
    }),
    path: "/spec/outgoingAuth/default/externalAuthConfigRef",
    level: "cel",
  },
  {
    name: "config.rateLimiting needs Redis session storage",
    target: "VirtualMCPServer",
    valid: vmcp({
      ...minimalServer,
      sessionStorage: { provider: "redis", address: "redis:6379" },
      config: { rateLimiting: { shared: { maxTokens: 5, refillPeriod: "1m" } } },
    }),
    invalid: vmcp({
      ...minimalServer,
      config: { rateLimiting: { shared: { maxTokens: 5, refillPeriod: "1m" } } },
    }),
    path: "/spec/config/rateLimiting",
    level: "cel",
  },
  {
    name: "per-user rate limits need OIDC clients",
    target: "VirtualMCPServer",
    valid: vmcp({
      ...minimalServer,
      incomingAuth: { type: "oidc", oidcConfigRef: { name: "corp", audience: "gateway" } },
      sessionStorage: { provider: "redis", address: "redis:6379" },
      config: { rateLimiting: { perUser: { maxTokens: 5, refillPeriod: "1m" } } },
    }),
    invalid: vmcp({
      ...minimalServer,
      sessionStorage: { provider: "redis", address: "redis:6379" },
      config: { rateLimiting: { perUser: { maxTokens: 5, refillPeriod: "1m" } } },
    }),
    path: "/spec/config/rateLimiting",
    level: "cel",
  },
  {
    name: "an EmbeddingServer (TEI) is not an openai embedding provider",
    target: "VirtualMCPServer",
    valid: vmcp({
      ...minimalServer,
      embeddingServerRef: { name: "tei" },
      config: { optimizer: { embeddingProvider: "tei" } },
    }),
    invalid: vmcp({
      ...minimalServer,
      embeddingServerRef: { name: "tei" },
      config: { optimizer: { embeddingProvider: "openai", embeddingModel: "m" } },
    }),
    path: "/spec/embeddingServerRef",
    level: "cel",
  },
  {
    name: "authzConfig and authzConfigRef are mutually exclusive",
    target: "VirtualMCPServer",
    valid: vmcp({
      ...minimalServer,
      incomingAuth: { type: "anonymous", authzConfigRef: { name: "shared" } },
    }),
    invalid: vmcp({
      ...minimalServer,
      incomingAuth: {
        type: "anonymous",
        authzConfigRef: { name: "shared" },
        authzConfig: {
          type: "inline",
          inline: { policies: ["permit(principal, action, resource);"] },
        },
      },
    }),
    path: "/spec/incomingAuth/authzConfigRef",
    level: "cel",
  },
  {
    name: "backend auth type is discovered or external_auth_config_ref",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, outgoingAuth: { default: { type: "discovered" } } }),
    invalid: vmcp({ ...minimalServer, outgoingAuth: { default: { type: "service_account" } } }),
    path: "/spec/outgoingAuth/default/type",
    level: "schema",
  },
  {
    name: "serviceType is ClusterIP, NodePort or LoadBalancer",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, serviceType: "LoadBalancer" }),
    invalid: vmcp({ ...minimalServer, serviceType: "ExternalName" }),
    path: "/spec/serviceType",
    level: "schema",
  },
  {
    name: "replicas is not negative",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, replicas: 0 }),
    invalid: vmcp({ ...minimalServer, replicas: -1 }),
    path: "/spec/replicas",
    level: "schema",
  },
  {
    name: "embeddingServerRef needs a name",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, embeddingServerRef: { name: "embeddings" } }),
    invalid: vmcp({ ...minimalServer, embeddingServerRef: {} }),
    path: "/spec/embeddingServerRef/name",
    level: "schema",
  },
  {
    name: "telemetryConfigRef and config.telemetry are mutually exclusive",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, telemetryConfigRef: { name: "otel-collector" } }),
    invalid: vmcp({
      ...minimalServer,
      telemetryConfigRef: { name: "otel-collector" },
      config: { telemetry: { tracingEnabled: true } },
    }),
    path: "/spec/telemetryConfigRef",
    level: "cel",
  },
  {
    name: "sessionStorage and config.sessionStorage are mutually exclusive",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, sessionStorage: { provider: "redis", address: "redis:6379" } }),
    invalid: vmcp({
      ...minimalServer,
      sessionStorage: { provider: "redis", address: "redis:6379" },
      config: { sessionStorage: { provider: "memory" } },
    }),
    path: "/spec/sessionStorage",
    level: "cel",
  },
  {
    name: "spec-level redis session storage needs an address",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, sessionStorage: { provider: "memory" } }),
    invalid: vmcp({ ...minimalServer, sessionStorage: { provider: "redis" } }),
    path: "/spec/sessionStorage/address",
    level: "cel",
  },
  {
    name: "config rules apply inside spec.config",
    target: "VirtualMCPServer",
    valid: vmcp({ ...minimalServer, config: { optimizer: { maxToolsToReturn: 8 } } }),
    invalid: vmcp({ ...minimalServer, config: { optimizer: { maxToolsToReturn: 80 } } }),
    path: "/spec/config/optimizer/maxToolsToReturn",
    level: "schema",
  },
  {
    name: "status phase is Pending, Ready, Degraded or Failed",
    target: "VirtualMCPServer",
    valid: { ...vmcp(minimalServer), status: { phase: "Degraded", backendCount: 2 } },
    invalid: { ...vmcp(minimalServer), status: { phase: "Running" } },
    path: "/status/phase",
    level: "schema",
  },
  {
    name: "discovered backends need a name",
    target: "VirtualMCPServer",
    valid: {
      ...vmcp(minimalServer),
      status: { discoveredBackends: [{ name: "github", status: "ready" }] },
    },
    invalid: { ...vmcp(minimalServer), status: { discoveredBackends: [{ status: "ready" }] } },
    path: "/status/discoveredBackends/0/name",
    level: "schema",
  },

  // VirtualMCPCompositeToolDefinition
  {
    name: "a definition's spec is a composite tool",
    target: "VirtualMCPCompositeToolDefinition",
    valid: ctd(workflow([toolStep("a")])),
    invalid: ctd({ steps: [toolStep("a")] }),
    path: "/spec/name",
    level: "schema",
  },
  {
    name: "step rules apply in a definition",
    target: "VirtualMCPCompositeToolDefinition",
    valid: ctd(workflow([toolStep("a"), toolStep("b", { dependsOn: ["a"] })])),
    invalid: ctd(workflow([toolStep("a"), toolStep("b", { dependsOn: ["x"] })])),
    path: "/spec/steps",
    level: "cel",
  },
  {
    name: "definition status phase is Pending, Valid or Invalid",
    target: "VirtualMCPCompositeToolDefinition",
    valid: {
      ...ctd(workflow([toolStep("a")])),
      status: { phase: "Invalid", validationErrors: ["x"] },
    },
    invalid: { ...ctd(workflow([toolStep("a")])), status: { phase: "Ready" } },
    path: "/status/phase",
    level: "schema",
  },
];

describe("virtual server schemas: one valid and one invalid document per rule", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const target = targetId(c.target);
    expect(issues(target, c.valid)).toEqual([]);
    const found = issues(target, c.invalid);
    expect(found, JSON.stringify(found)).toContainEqual(
      expect.objectContaining({ path: c.path, level: c.level }),
    );
  });
});

describe("CEL rules of the virtual server schemas", () => {
  /** Every x-kubernetes-validations rule of our files, with where it sits. */
  function rules(): { file: string; rule: string; message: string }[] {
    const out: { file: string; rule: string; message: string }[] = [];
    const visit = (file: string, node: unknown): void => {
      if (Array.isArray(node)) {
        for (const n of node) visit(file, n);
        return;
      }
      if (node === null || typeof node !== "object") return;
      for (const [key, value] of Object.entries(node as SchemaNode)) {
        if (key === "x-kubernetes-validations" && Array.isArray(value)) {
          for (const r of value as { rule: string; message: string }[]) {
            out.push({ file, rule: r.rule, message: r.message });
          }
        } else visit(file, value);
      }
    };
    for (const file of FILES) {
      visit(file, parse(readFileSync(join(schemasDir(), file), "utf8")) as unknown);
    }
    return out;
  }

  it("each carries a message and is exercised by a failing case", () => {
    const all = rules();
    expect(all.length).toBeGreaterThan(40);
    const messages = new Set<string>();
    for (const c of CASES) {
      for (const issue of issues(targetId(c.target), c.invalid)) {
        if (issue.level === "cel") messages.add(issue.message);
      }
    }
    for (const r of all) {
      expect(r.message, r.rule).toMatch(/\S/);
      expect(messages.has(r.message), `no case breaks: ${r.rule}`).toBe(true);
    }
  });
});

describe("defaults of the virtual server schemas", () => {
  function defaults(): { id: string; value: unknown }[] {
    const out: { id: string; value: unknown }[] = [];
    const escape = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");
    /** Visits a schema node; maps of schemas (properties, $defs) are walked, not checked. */
    const visit = (fileId: string, pointer: string, node: unknown): void => {
      if (node === null || typeof node !== "object" || Array.isArray(node)) return;
      const obj = node as SchemaNode;
      if ("default" in obj) out.push({ id: `${fileId}#${pointer}`, value: obj.default });
      for (const key of ["properties", "$defs"]) {
        const map = obj[key];
        if (map !== null && typeof map === "object") {
          for (const [name, sub] of Object.entries(map)) {
            visit(fileId, `${pointer}/${key}/${escape(name)}`, sub);
          }
        }
      }
      for (const key of ["items", "additionalProperties"]) {
        visit(fileId, `${pointer}/${key}`, obj[key]);
      }
    };
    for (const file of FILES) {
      visit(
        SCHEMA_BASE + file,
        "",
        parse(readFileSync(join(schemasDir(), file), "utf8")) as unknown,
      );
    }
    return out;
  }

  const all = defaults();

  it("are found (the numeric limits have defaults)", () => {
    expect(all.length).toBeGreaterThanOrEqual(25);
    expect(all.map((d) => d.id)).toEqual(
      expect.arrayContaining([
        def("OptimizerConfig") + "/properties/maxToolsToReturn",
        def("CircuitBreakerConfig") + "/properties/failureThreshold",
        def("CircuitBreakerConfig") + "/properties/timeout",
        def("FailureHandlingConfig") + "/properties/healthCheckTimeout",
      ]),
    );
  });

  it.each(all.map((d) => [d.id.replace(SCHEMA_BASE, ""), d] as const))(
    "%s is valid against its own schema",
    (_id, d) => {
      expect(defaultSchemaSet().validateSchema(d.id, d.value)).toEqual([]);
    },
  );

  it("have the values of the limits table", () => {
    const byPath = new Map(
      all.map((d) => [d.id.replace(`${VMCP_CONFIG_SCHEMA_ID}#/$defs/`, ""), d.value]),
    );
    expect(byPath.get("OptimizerConfig/properties/maxToolsToReturn")).toBe(8);
    expect(byPath.get("OptimizerConfig/properties/embeddingServiceTimeout")).toBe("30s");
    // forEach-only fields: a schema default would be filled in on every step type before the
    // rule that refuses them elsewhere runs, so their defaults (100, 10, item) are documented.
    for (const field of ["maxIterations", "maxParallel", "itemVar"]) {
      expect(byPath.has(`WorkflowStepConfig/properties/${field}`), field).toBe(false);
    }
    expect(byPath.get("CircuitBreakerConfig/properties/failureThreshold")).toBe(5);
    expect(byPath.get("CircuitBreakerConfig/properties/timeout")).toBe("60s");
    expect(byPath.get("FailureHandlingConfig/properties/healthCheckInterval")).toBe("30s");
    expect(byPath.get("FailureHandlingConfig/properties/unhealthyThreshold")).toBe(3);
    expect(byPath.get("FailureHandlingConfig/properties/healthCheckTimeout")).toBe("10s");
    expect(byPath.get("TimeoutConfig/properties/default")).toBe("30s");
  });

  it("satisfy the rules when every default is filled in", () => {
    const config = {
      groupRef: "engineering",
      aggregation: {
        conflictResolution: "prefix",
        conflictResolutionConfig: { prefixFormat: "{workload}_" },
      },
      operational: {
        timeouts: { default: "30s" },
        failureHandling: {
          healthCheckInterval: "30s",
          unhealthyThreshold: 3,
          healthCheckTimeout: "10s",
          statusReportingInterval: "30s",
          partialFailureMode: "fail",
          circuitBreaker: { enabled: false, failureThreshold: 5, timeout: "60s" },
        },
      },
      optimizer: {
        embeddingServiceTimeout: "30s",
        maxToolsToReturn: 8,
        hybridSearchSemanticRatio: "0.5",
        semanticDistanceThreshold: "1.0",
      },
      compositeTools: [
        {
          name: "wf",
          steps: [
            { id: "a", type: "tool", tool: "t", onError: { action: "abort" } },
            {
              id: "b",
              type: "elicitation",
              message: "ok?",
              onDecline: { action: "abort" },
              onCancel: { action: "abort" },
            },
            {
              id: "c",
              type: "forEach",
              collection: "{{.params.x}}",
              itemVar: "item",
              maxParallel: 10,
              maxIterations: 100,
              step: { type: "tool", tool: "t" },
            },
          ],
        },
      ],
      sessionStorage: { provider: "memory", db: 0 },
    };
    expect(issues(VMCP_CONFIG_SCHEMA_ID, config)).toEqual([]);
  });
});

describe("examples", () => {
  const docs = loadYamlDocs(EXAMPLES).filter((d) => d.file.startsWith("virtualmcp"));
  const all = loadYamlDocs(EXAMPLES);
  const names = (kind: string): string[] =>
    all.filter((d) => d.doc.kind === kind).map((d) => (d.doc.metadata as Doc).name as string);

  it("cover several VirtualMCPServers and the three workflow shapes", () => {
    const kinds = docs.map((d) => d.doc.kind);
    expect(kinds.filter((k) => k === "VirtualMCPServer").length).toBeGreaterThanOrEqual(3);
    const steps = docs
      .filter((d) => d.doc.kind === "VirtualMCPCompositeToolDefinition")
      .flatMap((d) => (d.doc.spec as { steps: Doc[] }).steps.map((s) => s.type ?? "tool"));
    expect(new Set(steps)).toEqual(new Set(["tool", "forEach", "elicitation"]));
  });

  it.each(docs.map((d) => [`${d.file}#${d.index}`, d] as const))(
    "%s validates without any issue",
    (_name, d) => {
      expect(d.doc.apiVersion).toBe(API_VERSION);
      expect((d.doc.metadata as Doc).namespace).toBeUndefined();
      expect(issues(d.doc.kind as string, d.doc)).toEqual([]);
    },
  );

  it("reference resources that exist among the examples", () => {
    for (const d of docs.filter((x) => x.doc.kind === "VirtualMCPServer")) {
      const spec = d.doc.spec as Doc & {
        config?: { compositeToolRefs?: { name: string }[] };
        incomingAuth: { oidcConfigRef?: { name: string } };
        outgoingAuth?: { backends?: Record<string, { externalAuthConfigRef?: { name: string } }> };
        embeddingServerRef?: { name: string };
        telemetryConfigRef?: { name: string };
      };
      expect(names("MCPGroup")).toContain(spec.groupRef);
      for (const ref of spec.config?.compositeToolRefs ?? []) {
        expect(names("VirtualMCPCompositeToolDefinition")).toContain(ref.name);
      }
      if (spec.incomingAuth.oidcConfigRef) {
        expect(names("MCPOIDCConfig")).toContain(spec.incomingAuth.oidcConfigRef.name);
      }
      for (const b of Object.values(spec.outgoingAuth?.backends ?? {})) {
        if (b.externalAuthConfigRef) {
          expect(names("MCPExternalAuthConfig")).toContain(b.externalAuthConfigRef.name);
        }
      }
      if (spec.embeddingServerRef)
        expect(names("EmbeddingServer")).toContain(spec.embeddingServerRef.name);
      if (spec.telemetryConfigRef)
        expect(names("MCPTelemetryConfig")).toContain(spec.telemetryConfigRef.name);
    }
  });

  it("give each virtual server an OIDC audience no other example uses", () => {
    type WithAudience = {
      oidcConfigRef?: { audience?: string };
      incomingAuth?: { oidcConfigRef?: { audience?: string } };
    };
    const audienceOf = (doc: Doc): string | undefined => {
      const spec = doc.spec as WithAudience | undefined;
      return spec?.oidcConfigRef?.audience ?? spec?.incomingAuth?.oidcConfigRef?.audience;
    };
    const everyAudience = all.map((d) => audienceOf(d.doc)).filter((a) => a !== undefined);
    const ours = docs.map((d) => audienceOf(d.doc)).filter((a) => a !== undefined);
    expect(ours.length).toBeGreaterThanOrEqual(1);
    for (const audience of ours) {
      expect(everyAudience.filter((a) => a === audience)).toHaveLength(1);
    }
  });
});

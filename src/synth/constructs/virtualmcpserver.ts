import { stringify } from "yaml";
import type * as T from "../../../generated/types.js";
import { API_GROUP } from "../../schema/kinds.js";
import type { KindRenderer } from "../context.js";
import { contentHash } from "../hash.js";
import { configMapLabels, selectorLabels, workloadLabels } from "../labels.js";
import { restrictedContainer, restrictedPod } from "../security.js";
import { RUNCONFIG_CHECKSUM } from "../runner.js";
import { CONTENT_CHECKSUM } from "./runner-workload.js";
import { groupName, type Resource, type ResourceSet } from "../model.js";
import { dnsLabel, dnsSubdomain } from "../names.js";
import { emit, emitRbac, READ_VERBS } from "./common.js";
import { embeddingServerName } from "./embeddingserver.js";

/** What a virtual server's Role lets it read of our kinds (it discovers its backends). */
export const VMCP_READS = [
  "mcpgroups",
  "mcpservers",
  "mcpremoteproxies",
  "mcpserverentries",
  "mcpexternalauthconfigs",
  "mcptoolconfigs",
  "virtualmcpcompositetooldefinitions",
  "virtualmcpservers",
] as const;
import {
  applyResourceOverrides,
  type Container,
  mergePodTemplate,
  type PodTemplate,
} from "../pod.js";

/** Port of the virtual server's HTTP listener, named `http` on the container and Service. */
export const VMCP_PORT = 4483;
/** Where the rendered configuration (and the CA bundles of entry backends) are mounted. */
export const VMCP_CONFIG_DIR = "/etc/vmcp-config";
export const VMCP_CONTAINER = "vmcp";
/** Pod template annotation holding the sha256 of the rendered configuration: a change rolls the pods. */
export const CONFIG_CHECKSUM_ANNOTATION = "mcpfleet.dev/config-checksum";
/** The reference operator's default resources of the vmcp container. */
const VMCP_RESOURCES: NonNullable<Container["resources"]> = {
  requests: { cpu: "100m", memory: "128Mi" },
  limits: { cpu: "500m", memory: "512Mi" },
};
/** Prefix of the environment variables synth names for the virtual server (`VMCP_OIDC_CLIENT_SECRET`). */
export const VMCP_ENV_PREFIX = "VMCP";
/** Key of the HMAC secret in the Secret `<name>-hmac-secret`; see docs/synth-workloads.md. */
export const VMCP_HMAC_SECRET_KEY = "hmac-secret";
const APP = "virtualmcpserver";

export const vmcpDeploymentName = (name: string): string => dnsSubdomain(name);
export const vmcpServiceName = (name: string): string => dnsLabel(`vmcp-${name}`);
export const vmcpConfigMapName = (name: string): string => dnsSubdomain(`${name}-vmcp-config`);
export const vmcpRbacName = (name: string): string => dnsSubdomain(`${name}-vmcp`);
export const vmcpHmacSecretName = (name: string): string => dnsSubdomain(`${name}-hmac-secret`);

/** In-cluster URL of a virtual server (status `url`). */
export function vmcpUrl(name: string, namespace: string): string {
  return `http://${vmcpServiceName(name)}.${namespace}.svc.cluster.local:${VMCP_PORT}`;
}

/** In-cluster base URL of an EmbeddingServer's Service. */
export function embeddingServerUrl(es: Resource<"EmbeddingServer">): string {
  const port = es.spec?.port ?? 8080;
  return `http://${embeddingServerName(es.metadata.name)}.${es.metadata.namespace}.svc.cluster.local:${port}`;
}

type Transport = "sse" | "streamable-http";

/** One member of the virtual server's group, as the virtual server reaches it. */
export interface ResolvedBackend {
  name: string;
  kind: "MCPServer" | "MCPRemoteProxy" | "MCPServerEntry";
  url: string;
  transport: Transport;
  /** The MCPExternalAuthConfig the workload itself names (used by `discovered` auth). */
  externalAuthConfigRef?: string;
  /** CA bundle of an entry backend, from a ConfigMap key. */
  caBundle?: { configMap: string; key: string };
}

function proxyPath(transport: Transport, name: string): string {
  return transport === "sse" ? `/sse#${name}` : "/mcp";
}

/**
 * The members of the virtual server's group, sorted by name: MCPServers and MCPRemoteProxies by
 * the URL of their proxy Service, MCPServerEntries by their remote URL. Also used by status.
 */
export function resolveBackends(
  set: ResourceSet,
  namespace: string,
  group: string,
): ResolvedBackend[] {
  const out: ResolvedBackend[] = [];
  for (const s of set.list("MCPServer", namespace)) {
    if (groupName(s.spec.groupRef) !== group) continue;
    const transport: Transport =
      s.spec.transport === "sse" || s.spec.transport === "streamable-http"
        ? s.spec.transport
        : (s.spec.proxyMode ?? "streamable-http");
    const port = s.spec.proxyPort ?? 8080;
    const host = `${dnsLabel(`mcp-${s.metadata.name}-proxy`)}.${namespace}.svc.cluster.local`;
    out.push({
      name: s.metadata.name,
      kind: "MCPServer",
      url: `http://${host}:${port}${proxyPath(transport, s.metadata.name)}`,
      transport,
      ...(s.spec.externalAuthConfigRef
        ? { externalAuthConfigRef: s.spec.externalAuthConfigRef.name }
        : {}),
    });
  }
  for (const p of set.list("MCPRemoteProxy", namespace)) {
    if (groupName(p.spec.groupRef) !== group) continue;
    const transport: Transport = p.spec.transport ?? "streamable-http";
    const port = p.spec.proxyPort ?? 8080;
    const host = `${dnsLabel(`mcp-${p.metadata.name}-remote-proxy`)}.${namespace}.svc.cluster.local`;
    out.push({
      name: p.metadata.name,
      kind: "MCPRemoteProxy",
      url: `http://${host}:${port}${proxyPath(transport, p.metadata.name)}`,
      transport,
      ...(p.spec.externalAuthConfigRef
        ? { externalAuthConfigRef: p.spec.externalAuthConfigRef.name }
        : {}),
    });
  }
  for (const e of set.list("MCPServerEntry", namespace)) {
    if (groupName(e.spec.groupRef) !== group) continue;
    const url = e.spec.remoteURL ?? e.spec.remoteUrl;
    if (url === undefined) continue;
    const ca = e.spec.caBundleRef?.configMapRef;
    out.push({
      name: e.metadata.name,
      kind: "MCPServerEntry",
      url,
      transport: e.spec.transport,
      ...(e.spec.externalAuthConfigRef
        ? { externalAuthConfigRef: e.spec.externalAuthConfigRef.name }
        : {}),
      ...(ca ? { caBundle: { configMap: ca.name, key: ca.key ?? "ca.crt" } } : {}),
    });
  }
  return out.sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.kind.localeCompare(b.kind),
  );
}

/** The group a virtual server aggregates: `spec.groupRef`, else the older `spec.config.groupRef`. */
export function vmcpGroup(resource: Resource<"VirtualMCPServer">): string | undefined {
  return groupName(resource.spec.groupRef) ?? resource.spec.config?.groupRef;
}

/** A container env var: a literal, or a key of a Secret, or a field of the pod. */
export interface ContainerEnv {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    fieldRef?: { apiVersion: string; fieldPath: string };
  };
}

/** Collects env vars read from Secrets, one per distinct purpose, never their values. */
class SecretEnv {
  readonly vars: ContainerEnv[] = [];
  private readonly byName = new Map<string, string>();

  /** Env var `name` from a Secret key; returns the name actually used. */
  secret(name: string, ref: T.SecretKeyRef): string {
    return this.add({ name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } });
  }

  /** A literal env var (may use `$(OTHER)` of vars added before it). */
  literal(name: string, value: string): string {
    return this.add({ name, value });
  }

  private add(env: ContainerEnv): string {
    const signature = JSON.stringify(env.valueFrom ?? env.value);
    let name = env.name;
    for (let i = 2; ; i++) {
      const seen = this.byName.get(name);
      if (seen === undefined) break;
      if (seen === signature) return name;
      name = `${env.name}_${i}`;
    }
    this.byName.set(name, signature);
    this.vars.push({ ...env, name });
    return name;
  }
}

/** Upper-case env var fragment of a resource name: `github-token` → `GITHUB_TOKEN`. */
export function envFragment(name: string): string {
  return name
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase();
}

const TOKEN_TYPE_URN = "urn:ietf:params:oauth:token-type:";
function subjectTokenType(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return ["access_token", "id_token", "jwt"].includes(value) ? `${TOKEN_TYPE_URN}${value}` : value;
}

/** A value with the undefined fields dropped (so the YAML holds only what is set). */
function compact<V extends object>(value: V): V {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as V;
}

/**
 * The backend strategy of an MCPExternalAuthConfig, secrets as env var names. Returns
 * undefined (with a warning) for types the virtual server cannot apply toward a backend.
 */
function backendStrategy(
  auth: Resource<"MCPExternalAuthConfig">,
  env: SecretEnv,
  warnings: string[],
): T.BackendAuthStrategy | undefined {
  const spec = auth.spec;
  const base = `${VMCP_ENV_PREFIX}_AUTH_${envFragment(auth.metadata.name)}`;
  switch (spec.type) {
    case "unauthenticated":
      return { type: "unauthenticated" };
    case "upstreamInject":
      if (spec.upstreamInject === undefined) break;
      return {
        type: "upstream_inject",
        upstreamInject: { providerName: spec.upstreamInject.providerName },
      };
    case "headerInjection": {
      const h = spec.headerInjection;
      if (h === undefined) break;
      const headerValueEnv = env.secret(`${base}_HEADER_VALUE`, h.valueSecretRef);
      return {
        type: "header_injection",
        headerInjection: { headerName: h.headerName, headerValueEnv },
      };
    }
    case "bearerToken": {
      const b = spec.bearerToken;
      if (b === undefined) break;
      // The Secret holds the bare token; Kubernetes expands $(VAR) of earlier env vars.
      const token = env.secret(`${base}_BEARER_TOKEN`, b.tokenSecretRef);
      const headerValueEnv = env.literal(`${base}_AUTHORIZATION`, `Bearer $(${token})`);
      return {
        type: "header_injection",
        headerInjection: { headerName: "Authorization", headerValueEnv },
      };
    }
    case "tokenExchange": {
      const x = spec.tokenExchange;
      if (x === undefined) break;
      if (x.externalTokenHeaderName !== undefined) {
        warnings.push(
          `MCPExternalAuthConfig ${auth.metadata.name}: externalTokenHeaderName is not applied by the virtual server; the exchanged token replaces Authorization`,
        );
      }
      return {
        type: "token_exchange",
        tokenExchange: compact({
          tokenUrl: x.tokenUrl,
          clientId: x.clientId,
          clientSecretEnv: x.clientSecretRef
            ? env.secret(`${base}_CLIENT_SECRET`, x.clientSecretRef)
            : undefined,
          audience: x.audience,
          scopes: x.scopes,
          subjectTokenType: subjectTokenType(x.subjectTokenType),
          subjectProviderName: x.subjectProviderName,
        }),
      };
    }
    default:
      break;
  }
  warnings.push(
    `MCPExternalAuthConfig ${auth.metadata.name}: type ${spec.type} cannot authenticate a virtual server's backend; requests to it are sent without credentials`,
  );
  return undefined;
}

/** A volume item projected into the config directory: a ConfigMap key at a relative path. */
export interface ProjectedFile {
  configMap: string;
  key: string;
  path: string;
}

/** The result of building a virtual server's configuration from the resource and its references. */
export interface VmcpBuild {
  /** The virtual-server `Config` written to `config.yaml`. */
  config: T.VirtualMCPConfig;
  /** Env vars of the `vmcp` container: Secret references, never values. */
  env: ContainerEnv[];
  /** Files projected next to config.yaml (CA bundles). */
  files: ProjectedFile[];
  /** Backends found in the group (sorted), as status reports them. */
  backends: ResolvedBackend[];
  /** Problems that do not stop rendering. */
  warnings: string[];
  /** Set when the server cannot be rendered safely (missing group, unresolvable client auth). */
  fatal?: string;
}

function oidcFromProvider(
  provider: T.InlineOIDCProviderConfig,
  audience: string | undefined,
  scopes: string[] | undefined,
  env: SecretEnv,
): T.OIDCConfig {
  return compact({
    issuer: provider.issuer,
    clientId: provider.clientId,
    clientSecretEnv: provider.clientSecretRef
      ? env.secret(`${VMCP_ENV_PREFIX}_OIDC_CLIENT_SECRET`, provider.clientSecretRef)
      : undefined,
    audience,
    jwksUrl: provider.jwksUrl,
    introspectionUrl: provider.introspectionUrl,
    scopes,
    protectedResourceAllowPrivateIp: provider.protectedResourceAllowPrivateIP,
    jwksAllowPrivateIp: provider.jwksAllowPrivateIP,
    insecureAllowHttp: provider.insecureAllowHTTP,
  });
}

const CLUSTER_ISSUER = "https://kubernetes.default.svc";

function oidcFromServiceAccount(
  sa: T.KubernetesServiceAccountOIDCConfig | T.KubernetesOIDCConfig,
  audience: string | undefined,
  scopes: string[] | undefined,
): T.OIDCConfig {
  return compact({
    issuer: sa.issuer ?? CLUSTER_ISSUER,
    audience,
    jwksUrl: sa.jwksUrl,
    introspectionUrl: sa.introspectionUrl,
    scopes,
    // The cluster's issuer answers on a private address.
    jwksAllowPrivateIp: sa.useClusterAuth === false ? undefined : true,
  });
}

function incomingAuth(
  resource: Resource<"VirtualMCPServer">,
  set: ResourceSet,
  env: SecretEnv,
): { auth: T.IncomingAuthConfig } | { fatal: string } {
  const ns = resource.metadata.namespace;
  const spec = resource.spec.incomingAuth;
  let authz: T.VmcpAuthzConfig | undefined;
  if (spec.authzConfig !== undefined) {
    const a = spec.authzConfig;
    if ((a.type ?? "configMap") !== "inline" || a.inline === undefined) {
      return {
        fatal: `authzConfig type configMap cannot be rendered into the virtual server's configuration; write the policies inline`,
      };
    }
    authz = { type: "cedar", policies: a.inline.policies };
  }
  if (spec.type === "anonymous") return { auth: compact({ type: "anonymous", authz }) };
  let oidc: T.OIDCConfig | undefined;
  if (spec.oidcConfigRef !== undefined) {
    const ref = spec.oidcConfigRef;
    const cfg = set.get("MCPOIDCConfig", ns, ref.name);
    if (cfg === undefined) return { fatal: `MCPOIDCConfig ${ref.name} not found` };
    if (cfg.spec.type === "inline" && cfg.spec.inline !== undefined) {
      oidc = oidcFromProvider(cfg.spec.inline, ref.audience, ref.scopes, env);
    } else {
      oidc = oidcFromServiceAccount(
        cfg.spec.kubernetesServiceAccount ?? {},
        ref.audience,
        ref.scopes,
      );
    }
    if (ref.resourceUrl !== undefined) oidc = { ...oidc, resource: ref.resourceUrl };
  } else if (spec.oidcConfig !== undefined) {
    const o = spec.oidcConfig;
    const type = o.type ?? "kubernetes";
    if (type === "inline" && o.inline !== undefined) {
      oidc = oidcFromProvider(o.inline, o.inline.audience, o.inline.scopes, env);
    } else if (type === "kubernetes") {
      const k = o.kubernetes ?? {};
      oidc = oidcFromServiceAccount(k, k.audience ?? "toolhive", undefined);
    } else {
      return {
        fatal: `incomingAuth.oidcConfig type ${type} cannot be rendered; use oidcConfigRef`,
      };
    }
    if (o.resourceUrl !== undefined) oidc = { ...oidc, resource: o.resourceUrl };
  }
  if (oidc === undefined) return { fatal: "incomingAuth type oidc without an OIDC configuration" };
  return { auth: compact({ type: "oidc", oidc, authz }) };
}

function telemetryFromRef(
  resource: Resource<"VirtualMCPServer">,
  tc: Resource<"MCPTelemetryConfig">,
  serviceName: string | undefined,
  env: SecretEnv,
  files: ProjectedFile[],
): T.EmbeddedTelemetryConfig {
  const o = tc.spec?.openTelemetry ?? {};
  const on = o.enabled === true;
  const sensitive = o.sensitiveHeaders ?? [];
  if (on && sensitive.length > 0) {
    // The OTLP exporter also reads headers from OTEL_EXPORTER_OTLP_HEADERS; the values come
    // from Secrets through $(VAR) expansion, so they never reach the ConfigMap.
    const parts = sensitive.map((h, i) => {
      const v = env.secret(`${VMCP_ENV_PREFIX}_OTEL_HEADER_${i}`, h.secretKeyRef);
      return `${h.name}=$(${v})`;
    });
    env.literal("OTEL_EXPORTER_OTLP_HEADERS", parts.join(","));
  }
  let caCertPath: string | undefined;
  const ca = o.caBundleRef?.configMapRef;
  if (on && ca !== undefined) {
    const path = "telemetry-ca/ca.crt";
    files.push({ configMap: ca.name, key: ca.key ?? "ca.crt", path });
    caCertPath = `${VMCP_CONFIG_DIR}/${path}`;
  }
  return compact({
    endpoint: on ? o.endpoint : undefined,
    serviceName: serviceName ?? resource.metadata.name,
    insecure: on ? o.insecure : undefined,
    headers: on ? o.headers : undefined,
    tracingEnabled: on ? o.tracing?.enabled === true : false,
    metricsEnabled: on ? o.metrics?.enabled === true : false,
    samplingRate: on ? o.tracing?.samplingRate : undefined,
    customAttributes: on ? o.resourceAttributes : undefined,
    useLegacyAttributes: o.useLegacyAttributes,
    enablePrometheusMetricsPath: tc.spec?.prometheus?.enabled,
    caCertPath,
  });
}

/**
 * Builds the virtual server's configuration: the embedded `spec.config`, with the group,
 * backends, authentication, composite tools, tool configs, telemetry, optimizer and session
 * storage resolved from the other resources. Secrets become env var names.
 */
export function buildVmcpConfig(
  resource: Resource<"VirtualMCPServer">,
  set: ResourceSet,
): VmcpBuild {
  const ns = resource.metadata.namespace;
  const name = resource.metadata.name;
  const spec = resource.spec;
  const embedded: T.EmbeddedConfig = spec.config ?? {};
  const env = new SecretEnv();
  const files: ProjectedFile[] = [];
  const warnings: string[] = [];
  const group = vmcpGroup(resource);
  const fail = (fatal: string): VmcpBuild => ({
    config: {},
    env: [],
    files: [],
    backends: [],
    warnings,
    fatal,
  });
  if (group === undefined || set.get("MCPGroup", ns, group) === undefined) {
    return fail(`MCPGroup ${group ?? "(none)"} not found`);
  }
  const incoming = incomingAuth(resource, set, env);
  if ("fatal" in incoming) return fail(incoming.fatal);

  // Backends: the group's members, then static backends written in spec.config (which win).
  const backends = resolveBackends(set, ns, group);
  const staticBackends = new Map<string, T.StaticBackend>();
  for (const b of backends) {
    const sb: T.StaticBackend = { name: b.name, url: b.url, transport: b.transport };
    if (b.kind === "MCPServerEntry") {
      sb.type = "entry";
      if (b.caBundle !== undefined) {
        const path = `ca-bundles/${b.name}/ca.crt`;
        files.push({ configMap: b.caBundle.configMap, key: b.caBundle.key, path });
        sb.caBundlePath = `${VMCP_CONFIG_DIR}/${path}`;
      }
    }
    staticBackends.set(b.name, sb);
  }
  for (const b of embedded.backends ?? []) staticBackends.set(b.name, b);
  const backendList = [...staticBackends.values()].sort((a, b) => (a.name < b.name ? -1 : 1));

  // Outgoing auth: resolved per backend, so the file is self-contained (source inline).
  const out = spec.outgoingAuth ?? {};
  const strategies: Record<string, T.BackendAuthStrategy> = {};
  const members = new Map(backends.map((b) => [b.name, b]));
  for (const b of backendList) {
    const choice: T.BackendAuthConfig = out.backends?.[b.name] ??
      out.default ?? { type: "discovered" };
    // Any type but discovered names its configuration (`externalAuthConfigRef` is the
    // reference operator's later spelling of `external_auth_config_ref`).
    const authName =
      choice.type !== "discovered"
        ? choice.externalAuthConfigRef?.name
        : members.get(b.name)?.externalAuthConfigRef;
    if (authName === undefined) continue;
    const auth = set.get("MCPExternalAuthConfig", ns, authName);
    if (auth === undefined) {
      warnings.push(`MCPExternalAuthConfig ${authName} (backend ${b.name}) not found`);
      continue;
    }
    const strategy = backendStrategy(auth, env, warnings);
    if (strategy !== undefined) strategies[b.name] = strategy;
  }
  const outgoingAuth: T.OutgoingAuthConfig = { source: "inline" };
  if (Object.keys(strategies).length > 0) outgoingAuth.backends = strategies;

  // Aggregation: per-workload toolConfigRefs replaced by the MCPToolConfig's filter and overrides.
  let aggregation = embedded.aggregation;
  // vmcp requires a prefix format with the prefix strategy; the reference operator's default.
  if (
    aggregation?.conflictResolution === "prefix" &&
    aggregation.conflictResolutionConfig === undefined
  )
    aggregation = { ...aggregation, conflictResolutionConfig: { prefixFormat: "{workload}_" } };
  if (aggregation?.tools !== undefined) {
    aggregation = {
      ...aggregation,
      tools: aggregation.tools.map((t) => {
        if (t.toolConfigRef === undefined) return t;
        const tc = set.get("MCPToolConfig", ns, t.toolConfigRef.name);
        if (tc === undefined) {
          warnings.push(`MCPToolConfig ${t.toolConfigRef.name} not found`);
          return t;
        }
        const { toolConfigRef: _ref, filter: _f, overrides: _o, ...rest } = t;
        const overrides = Object.fromEntries(
          Object.entries(tc.spec?.toolsOverride ?? {}).map(([k, v]) => [k, compact({ ...v })]),
        );
        return compact({
          ...rest,
          filter: tc.spec?.toolsFilter,
          overrides: Object.keys(overrides).length > 0 ? overrides : undefined,
        });
      }),
    };
  }

  // Composite tools: inline ones, then the referenced definitions (an inline tool of the same name wins).
  const composite: T.CompositeToolConfig[] = [...(embedded.compositeTools ?? [])];
  const unresolvedRefs: T.CompositeToolRef[] = [];
  for (const ref of embedded.compositeToolRefs ?? []) {
    const def = set.get("VirtualMCPCompositeToolDefinition", ns, ref.name);
    if (def === undefined) {
      warnings.push(`VirtualMCPCompositeToolDefinition ${ref.name} not found`);
      unresolvedRefs.push(ref);
      continue;
    }
    if (composite.some((c) => c.name === def.spec.name)) {
      warnings.push(
        `composite tool ${def.spec.name} of VirtualMCPCompositeToolDefinition ${ref.name} is shadowed by an inline tool of the same name`,
      );
      continue;
    }
    composite.push(def.spec);
  }

  // Telemetry: inline, or from the referenced MCPTelemetryConfig.
  let telemetry = embedded.telemetry;
  if (spec.telemetryConfigRef !== undefined) {
    const tc = set.get("MCPTelemetryConfig", ns, spec.telemetryConfigRef.name);
    if (tc === undefined)
      warnings.push(`MCPTelemetryConfig ${spec.telemetryConfigRef.name} not found`);
    else
      telemetry = telemetryFromRef(resource, tc, spec.telemetryConfigRef.serviceName, env, files);
  }

  // Optimizer: pointed at the referenced EmbeddingServer.
  let optimizer = embedded.optimizer;
  if (spec.embeddingServerRef !== undefined) {
    const es = set.get("EmbeddingServer", ns, spec.embeddingServerRef.name);
    if (es === undefined) {
      warnings.push(`EmbeddingServer ${spec.embeddingServerRef.name} not found`);
    } else {
      if (optimizer?.embeddingService !== undefined) {
        warnings.push(
          `config.optimizer.embeddingService is replaced by the URL of EmbeddingServer ${es.metadata.name}`,
        );
      }
      optimizer = { ...optimizer, embeddingService: embeddingServerUrl(es) };
    }
  }

  // Session storage: the resource form carries the Redis password as a Secret reference.
  let sessionStorage = embedded.sessionStorage;
  if (spec.sessionStorage !== undefined) {
    const { passwordRef, ...rest } = spec.sessionStorage;
    sessionStorage = rest;
    // vmcp reads the password from this variable only (as the proxy runner does).
    if (passwordRef !== undefined) env.secret("THV_SESSION_REDIS_PASSWORD", passwordRef);
  }

  const config: T.VirtualMCPConfig = compact({
    ...embedded,
    name: embedded.name ?? name,
    groupRef: group,
    backends: backendList,
    incomingAuth: incoming.auth,
    outgoingAuth,
    aggregation,
    compositeTools: composite.length > 0 ? composite : undefined,
    compositeToolRefs: unresolvedRefs.length > 0 ? unresolvedRefs : undefined,
    telemetry,
    optimizer,
    sessionStorage,
  });
  return { config, env: env.vars, files, backends, warnings };
}

/** The config file text: YAML with sorted keys, so equal configurations give equal bytes. */
export function vmcpConfigYaml(config: T.VirtualMCPConfig): string {
  const file =
    config.rateLimiting === undefined
      ? config
      : { ...config, rateLimiting: rateLimitingFileForm(config.rateLimiting) };
  return stringify(file, { lineWidth: 0, sortMapEntries: true, aliasDuplicateObjects: false });
}

/**
 * vmcp reads a bucket's refillPeriod as a Kubernetes Duration decoded field by field from YAML
 * (`{duration: 1m}`); the string form the resource writes fails its loader.
 */
function rateLimitingFileForm(limits: T.RateLimitConfig): unknown {
  const bucket = (b: T.RateLimitBucket | undefined) =>
    b === undefined ? undefined : { ...b, refillPeriod: { duration: b.refillPeriod } };
  return compact({
    ...limits,
    shared: bucket(limits.shared),
    perUser: bucket(limits.perUser),
    tools: limits.tools?.map((t) =>
      compact({ ...t, shared: bucket(t.shared), perUser: bucket(t.perUser) }),
    ),
  });
}

/**
 * Renders a VirtualMCPServer: ConfigMap `<n>-vmcp-config`, Deployment `<n>` (container `vmcp`),
 * Service `vmcp-<n>`, ServiceAccount (unless one is named), Role and RoleBinding `<n>-vmcp`.
 * The HMAC Secret `<n>-hmac-secret` is referenced, never rendered (docs/synth-workloads.md).
 */
export const renderVirtualMCPServer: KindRenderer<"VirtualMCPServer"> = (
  scope,
  resource,
  context,
) => {
  const build = buildVmcpConfig(resource, context.resources);
  if (build.fatal !== undefined) return;
  const name = resource.metadata.name;
  const spec = resource.spec;
  const labels = workloadLabels(APP, name);
  const selector = selectorLabels(APP, name);
  const configYaml = vmcpConfigYaml(build.config);
  const configMapName = vmcpConfigMapName(name);
  const serviceAccount =
    spec.serviceAccount !== undefined && spec.serviceAccount !== ""
      ? spec.serviceAccount
      : vmcpRbacName(name);

  emit(scope, resource, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: configMapName,
      labels: { ...labels, ...configMapLabels("vmcp-config", "virtual-mcp-server", name) },
      annotations: { [CONTENT_CHECKSUM]: contentHash(configYaml) },
    },
    data: { "config.yaml": configYaml },
  });

  const pullSecrets = (spec.resourceOverrides?.proxyDeployment?.imagePullSecrets ?? [])
    .filter((s): s is { name: string } => s.name !== undefined)
    .map((s) => ({ name: s.name }));
  emitRbac(
    scope,
    resource,
    vmcpRbacName(name),
    labels,
    [
      {
        apiGroups: [API_GROUP],
        resources: [...VMCP_READS],
        verbs: READ_VERBS,
      },
      {
        apiGroups: [API_GROUP],
        resources: ["virtualmcpservers/status"],
        verbs: ["get", "update", "patch"],
      },
      { apiGroups: [""], resources: ["services", "configmaps"], verbs: READ_VERBS },
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    ],
    {
      ...(serviceAccount !== vmcpRbacName(name) ? { serviceAccount } : {}),
      ...(pullSecrets.length > 0 ? { imagePullSecrets: pullSecrets } : {}),
    },
  );

  const env: ContainerEnv[] = [
    { name: "VMCP_NAME", value: name },
    { name: "VMCP_NAMESPACE", value: resource.metadata.namespace },
    {
      name: "POD_NAMESPACE",
      valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
    },
    {
      name: `${VMCP_ENV_PREFIX}_SESSION_HMAC_SECRET`,
      valueFrom: { secretKeyRef: { name: vmcpHmacSecretName(name), key: VMCP_HMAC_SECRET_KEY } },
    },
    ...build.env,
  ];
  // A plain ConfigMap volume, as the reference operator mounts it, unless CA bundles must sit
  // beside config.yaml (a ConfigMap volume cannot hold other mounts inside it).
  const volume =
    build.files.length === 0
      ? { name: "vmcp-config", configMap: { name: configMapName } }
      : {
          name: "vmcp-config",
          projected: {
            sources: [
              {
                configMap: {
                  name: configMapName,
                  items: [{ key: "config.yaml", path: "config.yaml" }],
                },
              },
              ...build.files.map((f) => ({
                configMap: { name: f.configMap, items: [{ key: f.key, path: f.path }] },
              })),
            ],
          },
        };
  const container: Container = {
    name: VMCP_CONTAINER,
    image: context.options.vmcpImage,
    imagePullPolicy: "IfNotPresent",
    args: [
      "serve",
      `--config=${VMCP_CONFIG_DIR}/config.yaml`,
      "--host=0.0.0.0",
      `--port=${VMCP_PORT}`,
    ],
    ports: [{ name: "http", containerPort: VMCP_PORT, protocol: "TCP" }],
    env,
    resources: (spec.resources as Container["resources"] | undefined) ?? VMCP_RESOURCES,
    volumeMounts: [{ name: "vmcp-config", mountPath: VMCP_CONFIG_DIR, readOnly: true }],
    livenessProbe: {
      httpGet: { path: "/health", port: "http" },
      initialDelaySeconds: 30,
      periodSeconds: 10,
      timeoutSeconds: 5,
      failureThreshold: 3,
    },
    readinessProbe: {
      httpGet: { path: "/readyz", port: "http" },
      initialDelaySeconds: 15,
      periodSeconds: 5,
      timeoutSeconds: 3,
      failureThreshold: 3,
    },
    securityContext: restrictedContainer(),
  };
  const base: PodTemplate = {
    metadata: {
      labels,
      annotations: {
        [CONFIG_CHECKSUM_ANNOTATION]: contentHash(configYaml),
        [RUNCONFIG_CHECKSUM]: contentHash(configYaml),
      },
    },
    spec: {
      serviceAccountName: serviceAccount,
      terminationGracePeriodSeconds: 30,
      securityContext: restrictedPod(),
      containers: [container],
      volumes: [volume],
    },
  };
  const podTemplate = mergePodTemplate(base, spec.podTemplateSpec, VMCP_CONTAINER);
  const deploymentMeta: { labels?: Record<string, string>; annotations?: Record<string, string> } =
    {
      labels: { ...labels },
    };
  const serviceMeta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {
    labels: { ...labels },
  };
  applyResourceOverrides(
    {
      deployment: deploymentMeta,
      podTemplate,
      service: serviceMeta,
      proxyContainer: VMCP_CONTAINER,
    },
    spec.resourceOverrides,
  );
  emit(scope, resource, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: vmcpDeploymentName(name), ...deploymentMeta },
    spec: {
      ...(spec.replicas !== undefined ? { replicas: spec.replicas } : {}),
      selector: { matchLabels: selector },
      template: podTemplate,
    },
  });
  emit(scope, resource, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: vmcpServiceName(name), ...serviceMeta },
    spec: {
      type: spec.serviceType ?? "ClusterIP",
      selector,
      // Sessions live in one replica's memory unless Redis holds them.
      sessionAffinity: "ClientIP",
      ports: [{ name: "http", port: VMCP_PORT, targetPort: VMCP_PORT, protocol: "TCP" }],
    },
  });
};

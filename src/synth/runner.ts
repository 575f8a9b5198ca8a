// The proxy runner's configuration (`runconfig.json`), shared by MCPServer and MCPRemoteProxy.
// Every referenced configuration (MCPToolConfig, MCPOIDCConfig, MCPTelemetryConfig,
// MCPExternalAuthConfig) is resolved into it, so a change to one changes the run-config and its
// checksum on the pod template, and the pods roll. Secret values never appear: a secret becomes
// an environment variable from a secretKeyRef (the config names the variable) or a file mounted
// from the Secret (the config names the path).
import type * as T from "../../generated/types.js";
import { type Resource, type ResourceSet, groupName } from "./model.js";
import { type AuthServerContext, embeddedAuthServer } from "./authserver.js";
import type { PodExtras } from "./pod-extras.js";

/** The directory the run-config ConfigMap is mounted at in the runner container. */
export const RUNCONFIG_DIR = "/etc/runconfig";
export const RUNCONFIG_KEY = "runconfig.json";
export const RUNCONFIG_SCHEMA_VERSION = "v0.1.0";
/** Pod template annotation holding the sha256 of the run-config: a config change rolls pods. */
export const RUNCONFIG_CHECKSUM = "toolhive.stacklok.dev/runconfig-checksum";
/** The port the proxy runner listens on unless spec.proxyPort says otherwise. */
export const DEFAULT_PROXY_PORT = 8080;

/** Where a resource's references are looked up: its namespace in the synthesis set. */
export interface Lookup {
  set: ResourceSet;
  namespace: string;
}

function caBundlePath(extras: PodExtras, ca: T.CABundleSource | undefined): string | undefined {
  const ref = ca?.configMapRef;
  if (ref === undefined) return undefined;
  return extras.configMapFile(ref.name, ref.key ?? "ca.crt");
}

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * The inbound OIDC settings of a workload, from `oidcConfigRef` or the deprecated `oidcConfig`,
 * in the runner's token validator shape (its fields carry no JSON names, so Go matches ours
 * case-insensitively: `jwksUrl` is JWKSURL). The client secret is not in the file: the runner
 * reads TOOLHIVE_OIDC_CLIENT_SECRET. An OIDC configuration kept in a ConfigMap cannot be read
 * at synthesis and gives undefined (status and docs say so).
 */
export function resolveOidc(
  spec: { oidcConfig?: T.OIDCConfigRef; oidcConfigRef?: T.MCPOIDCConfigReference },
  lookup: Lookup,
  extras: PodExtras,
  resourceUrl: string,
): Record<string, unknown> | undefined {
  const ref = spec.oidcConfigRef;
  if (ref !== undefined) {
    const shared = lookup.set.get("MCPOIDCConfig", lookup.namespace, ref.name);
    if (shared === undefined) return undefined;
    const scopes = ref.scopes ?? ["openid"];
    if (shared.spec.type === "kubernetesServiceAccount") {
      const k = shared.spec.kubernetesServiceAccount ?? {};
      return kubernetesOidc({ ...k, audience: ref.audience }, scopes, resourceUrl);
    }
    const i = shared.spec.inline;
    if (i === undefined) return undefined;
    return inlineOidc({ ...i, audience: ref.audience, scopes }, extras, resourceUrl);
  }
  const legacy = spec.oidcConfig;
  if (legacy === undefined) return undefined;
  const url = legacy.resourceUrl ?? resourceUrl;
  switch (legacy.type ?? "kubernetes") {
    case "kubernetes":
      return kubernetesOidc(legacy.kubernetes ?? {}, ["openid"], url);
    case "configMap":
      return undefined;
    case "inline":
      return legacy.inline === undefined ? undefined : inlineOidc(legacy.inline, extras, url);
  }
}

/** Tokens of the cluster's own issuer, checked with the pod's service account credentials. */
function kubernetesOidc(
  k: T.KubernetesOIDCConfig,
  scopes: string[],
  resourceUrl: string,
): Record<string, unknown> {
  const clusterAuth = k.useClusterAuth ?? true;
  return {
    issuer: k.issuer ?? "https://kubernetes.default.svc",
    audience: k.audience ?? "toolhive",
    jwksUrl: k.jwksUrl,
    introspectionUrl: k.introspectionUrl,
    caCertPath: clusterAuth ? `${SA_DIR}/ca.crt` : undefined,
    authTokenFile: clusterAuth ? `${SA_DIR}/token` : undefined,
    allowPrivateIP: true,
    scopes,
    resourceUrl,
  };
}

function inlineOidc(
  i: T.InlineOIDCConfig,
  extras: PodExtras,
  resourceUrl: string,
): Record<string, unknown> {
  if (i.clientSecretRef !== undefined)
    extras.secretEnv("TOOLHIVE_OIDC_CLIENT_SECRET", i.clientSecretRef);
  return {
    issuer: i.issuer,
    audience: i.audience,
    jwksUrl: i.jwksUrl,
    introspectionUrl: i.introspectionUrl,
    clientId: i.clientId,
    caCertPath: caBundlePath(extras, i.caBundleRef),
    authTokenFile: i.jwksAuthTokenPath,
    allowPrivateIP: i.jwksAllowPrivateIP ?? false,
    insecureAllowHTTP: i.insecureAllowHTTP ?? false,
    scopes: i.scopes ?? ["openid"],
    resourceUrl,
  };
}

/** Cedar policies: inline ones in the config, a ConfigMap's as a mounted file. */
export function resolveAuthz(
  authz: T.AuthzConfigRef | undefined,
  extras: PodExtras,
): { authz_config?: unknown; authz_config_path?: string } {
  if (authz === undefined) return {};
  if ((authz.type ?? "configMap") === "inline") {
    if (authz.inline === undefined) return {};
    return {
      authz_config: {
        version: "1.0",
        type: "cedarv1",
        cedar: { policies: authz.inline.policies, entitiesJson: authz.inline.entitiesJson ?? "[]" },
      },
    };
  }
  if (authz.configMap === undefined) return {};
  return {
    authz_config_path: extras.configMapFile(
      authz.configMap.name,
      authz.configMap.key ?? "authz.json",
    ),
  };
}

/** The audit section: present only when auditing is enabled. */
export function resolveAudit(
  audit: T.AuditConfig | undefined,
  component: string,
): T.EmbeddedAuditConfig | undefined {
  if (audit?.enabled !== true) return undefined;
  return { enabled: true, component, maxDataSize: 1024 };
}

function headerMap(headers: string[] | undefined): Record<string, string> | undefined {
  if (headers === undefined || headers.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const h of headers) {
    const eq = h.indexOf("=");
    if (eq > 0) out[h.slice(0, eq)] = h.slice(eq + 1);
  }
  return out;
}

/**
 * The telemetry section, from an MCPTelemetryConfig reference (sensitive headers become
 * environment variables, the CA bundle a mounted file) or the deprecated inline form.
 */
export function resolveTelemetry(
  spec: { telemetry?: T.TelemetryConfig; telemetryConfigRef?: T.MCPTelemetryConfigReference },
  name: string,
  lookup: Lookup,
  extras: PodExtras,
): Record<string, unknown> | undefined {
  const ref = spec.telemetryConfigRef;
  if (ref !== undefined) {
    const shared = lookup.set.get("MCPTelemetryConfig", lookup.namespace, ref.name);
    if (shared === undefined) return undefined;
    const ot = shared.spec?.openTelemetry ?? {};
    const on = ot.enabled === true;
    // The runner adds every TOOLHIVE_OTEL_HEADER_<NAME> variable to the exporter's headers.
    for (const h of ot.sensitiveHeaders ?? [])
      extras.secretEnv(`TOOLHIVE_OTEL_HEADER_${h.name}`, h.secretKeyRef);
    return {
      endpoint: on ? ot.endpoint : undefined,
      serviceName: ref.serviceName,
      tracingEnabled: on && ot.tracing?.enabled === true,
      metricsEnabled: on && ot.metrics?.enabled === true,
      samplingRate: ot.tracing?.samplingRate ?? "0.05",
      headers: ot.headers,
      insecure: ot.insecure ?? false,
      enablePrometheusMetricsPath: shared.spec?.prometheus?.enabled === true,
      customAttributes: ot.resourceAttributes,
      useLegacyAttributes: ot.useLegacyAttributes ?? true,
      caCertPath: caBundlePath(extras, ot.caBundleRef),
    };
  }
  const inline = spec.telemetry;
  if (inline === undefined) return undefined;
  const ot = inline.openTelemetry ?? {};
  const on = ot.enabled === true;
  return {
    endpoint: on ? ot.endpoint : undefined,
    serviceName: ot.serviceName ?? name,
    tracingEnabled: on && ot.tracing?.enabled === true,
    metricsEnabled: on && ot.metrics?.enabled === true,
    samplingRate: ot.tracing?.samplingRate ?? "0.05",
    headers: headerMap(ot.headers),
    insecure: ot.insecure ?? false,
    enablePrometheusMetricsPath: inline.prometheus?.enabled === true,
    useLegacyAttributes: ot.useLegacyAttributes ?? true,
  };
}

/** Filter and overrides of a referenced MCPToolConfig. */
export function resolveToolConfig(
  ref: T.ToolConfigRef | undefined,
  lookup: Lookup,
): { tools_filter?: string[]; tools_override?: unknown } {
  if (ref === undefined) return {};
  const tc = lookup.set.get("MCPToolConfig", lookup.namespace, ref.name);
  if (tc === undefined) return {};
  return { tools_filter: tc.spec?.toolsFilter, tools_override: tc.spec?.toolsOverride };
}

/** AWS STS credentials for the backend, in the runner's field names. */
function awsSts(a: T.AWSStsConfig): unknown {
  return {
    region: a.region,
    service: a.service,
    fallback_role_arn: a.fallbackRoleArn,
    role_mappings: a.roleMappings?.map((m) => ({
      claim: m.claim,
      matcher: m.matcher,
      role_arn: m.roleArn,
      priority: m.priority,
    })),
    role_claim: a.roleClaim,
    session_duration: a.sessionDuration,
    session_name_claim: a.sessionNameClaim,
  };
}

/** Subject token types the spec lets users write short, as the runner expects them. */
const TOKEN_TYPES: Record<string, string> = {
  access_token: "urn:ietf:params:oauth:token-type:access_token",
  id_token: "urn:ietf:params:oauth:token-type:id_token",
  jwt: "urn:ietf:params:oauth:token-type:jwt",
};

/**
 * Outgoing authentication from an MCPExternalAuthConfig, in the sections the runner reads:
 * `token_exchange_config` (client secret from TOOLHIVE_TOKEN_EXCHANGE_CLIENT_SECRET),
 * `remote_auth_config.bearer_token` and `header_forward.add_headers_from_secret` (secrets by
 * provider name), `aws_sts_config`, `upstream_swap_config`, `embedded_auth_server_config`.
 */
export function externalAuthSections(
  config: Resource<"MCPExternalAuthConfig">,
  extras: PodExtras,
  ctx: AuthServerContext,
): Record<string, unknown> {
  const s = config.spec;
  switch (s.type) {
    case "tokenExchange": {
      const te = s.tokenExchange;
      if (te === undefined) return {};
      if (te.clientSecretRef !== undefined)
        extras.secretEnv("TOOLHIVE_TOKEN_EXCHANGE_CLIENT_SECRET", te.clientSecretRef);
      const custom = te.externalTokenHeaderName !== undefined && te.externalTokenHeaderName !== "";
      return {
        token_exchange_config: {
          token_url: te.tokenUrl,
          client_id: te.clientId ?? "",
          client_secret: "",
          audience: te.audience ?? "",
          scopes: te.scopes,
          subject_token_type:
            te.subjectTokenType === undefined
              ? undefined
              : (TOKEN_TYPES[te.subjectTokenType] ?? te.subjectTokenType),
          header_strategy: custom ? "custom" : "replace",
          external_token_header_name: custom ? te.externalTokenHeaderName : undefined,
        },
      };
    }
    case "headerInjection":
      if (s.headerInjection === undefined) return {};
      return {
        header_forward: {
          add_headers_from_secret: {
            [s.headerInjection.headerName]: extras.providerSecret(s.headerInjection.valueSecretRef),
          },
        },
      };
    case "bearerToken":
      if (s.bearerToken === undefined) return {};
      return {
        remote_auth_config: {
          bearer_token: `${extras.providerSecret(s.bearerToken.tokenSecretRef)},target=bearer_token`,
        },
      };
    case "awsSts":
      return s.awsSts === undefined ? {} : { aws_sts_config: awsSts(s.awsSts) };
    case "upstreamInject":
      return { upstream_swap_config: s.upstreamInject };
    case "embeddedAuthServer":
      return s.embeddedAuthServer === undefined
        ? {}
        : { embedded_auth_server_config: embeddedAuthServer(s.embeddedAuthServer, extras, ctx) };
    case "unauthenticated":
      return {};
  }
  return {};
}

/** The outgoing auth and embedded authorization server sections of a workload. */
export function resolveAuth(
  spec: { externalAuthConfigRef?: T.ExternalAuthConfigRef; authServerRef?: T.AuthServerRef },
  lookup: Lookup,
  extras: PodExtras,
  ctx: AuthServerContext,
): Record<string, unknown> {
  const ext = lookup.set.get(
    "MCPExternalAuthConfig",
    lookup.namespace,
    spec.externalAuthConfigRef?.name,
  );
  const out: Record<string, unknown> =
    ext === undefined ? {} : externalAuthSections(ext, extras, ctx);
  const server = lookup.set.get(
    "MCPExternalAuthConfig",
    lookup.namespace,
    spec.authServerRef?.name,
  );
  if (server?.spec.embeddedAuthServer !== undefined)
    out.embedded_auth_server_config = embeddedAuthServer(
      server.spec.embeddedAuthServer,
      extras,
      ctx,
    );
  return out;
}

/**
 * Headers added toward the remote server: plaintext ones as written, Secret ones by provider
 * name (header → secret), merged with a header injection from the external auth config.
 */
export function resolveHeaderForward(
  hf: T.HeaderForwardConfig | undefined,
  extras: PodExtras,
  fromAuth?: unknown,
): unknown {
  const injected = (fromAuth as { add_headers_from_secret?: Record<string, string> } | undefined)
    ?.add_headers_from_secret;
  if (hf === undefined && injected === undefined) return undefined;
  const secrets: Record<string, string> = { ...injected };
  for (const h of hf?.addHeadersFromSecret ?? [])
    secrets[h.headerName] = extras.providerSecret(h.valueSecretRef);
  const plain = hf?.addPlaintextHeaders;
  return {
    add_plaintext_headers: plain !== undefined && Object.keys(plain).length > 0 ? plain : undefined,
    add_headers_from_secret: Object.keys(secrets).length > 0 ? secrets : undefined,
  };
}

/**
 * The runner's scaling section: backend replicas (only when set, so an autoscaler can own them)
 * and Redis session storage; the Redis password reaches it as THV_SESSION_REDIS_PASSWORD.
 */
export function resolveScaling(
  backendReplicas: number | undefined,
  s: T.SessionStorageConfig | undefined,
  extras: PodExtras,
): unknown {
  const redis = s?.provider === "redis" ? s : undefined;
  if (redis?.passwordRef !== undefined)
    extras.secretEnv("THV_SESSION_REDIS_PASSWORD", redis.passwordRef);
  if (backendReplicas === undefined && redis === undefined) return undefined;
  return {
    backend_replicas: backendReplicas,
    session_redis:
      redis === undefined
        ? undefined
        : { address: redis.address, db: redis.db ?? 0, key_prefix: redis.keyPrefix },
  };
}

/**
 * The run-config keys MCPServer and MCPRemoteProxy share: the workload's names and port, and
 * every configuration it references. `auth` is its outgoing auth, resolved by the caller before
 * anything of its own kind, so that the files each mounts keep their order in the pod;
 * `resourceUrl` is the proxy's URL, the resource inbound OIDC defaults to.
 */
export function proxyRunConfig(
  r: Resource<"MCPServer" | "MCPRemoteProxy">,
  lookup: Lookup,
  extras: PodExtras,
  auth: Record<string, unknown>,
  resourceUrl: string,
  headerForward: T.HeaderForwardConfig | undefined,
): Record<string, unknown> {
  const spec = r.spec;
  const name = r.metadata.name;
  return {
    schema_version: RUNCONFIG_SCHEMA_VERSION,
    name,
    // The runner names the workload it creates after these; the reference's builder fills them
    // in, and a run-config without them makes the runner create a StatefulSet with no name.
    container_name: name,
    base_name: name,
    host: "0.0.0.0",
    port: spec.proxyPort ?? DEFAULT_PROXY_PORT,
    oidc_config: resolveOidc(spec, lookup, extras, spec.oidcConfigRef?.resourceUrl ?? resourceUrl),
    ...resolveAuthz(spec.authzConfig, extras),
    audit_config: resolveAudit(spec.audit, name),
    telemetry_config: resolveTelemetry(spec, name, lookup, extras),
    ...resolveToolConfig(spec.toolConfigRef, lookup),
    ...auth,
    header_forward: resolveHeaderForward(headerForward, extras, auth.header_forward),
    trust_proxy_headers: spec.trustProxyHeaders ?? false,
    endpoint_prefix: spec.endpointPrefix,
    group: groupName(spec.groupRef),
  };
}

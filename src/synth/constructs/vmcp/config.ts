// The virtual server's configuration file (`config.yaml`): the embedded `spec.config`, with the
// group, backends, authentication, composite tools, tool configs, telemetry, optimizer and
// session storage resolved from the other resources of the set.
import type * as T from "../../../../generated/types.js";
import type { IssueReporter } from "../../issues.js";
import type { Resource, ResourceSet } from "../../model.js";
import { compact } from "../../pod.js";
import { sortedYamlDocument } from "../../yaml.js";
import { embeddingServerUrl } from "../embeddingserver.js";
import { incomingAuth, outgoingAuth } from "./auth.js";
import { type ResolvedBackend, resolveVmcpMembers, type VmcpMembers } from "./backends.js";
import { VMCP_CONFIG_DIR, VMCP_ENV_PREFIX } from "./names.js";
import { type ContainerEnv, SecretEnv } from "./secret-env.js";

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
}

/** What the parts of the configuration add to besides the file: env vars and projected files. */
interface Parts {
  resource: Resource<"VirtualMCPServer">;
  set: ResourceSet;
  env: SecretEnv;
  files: ProjectedFile[];
  report: IssueReporter;
}

/** The group's members as static backends (entries with their CA bundle), then spec.config's (which win). */
function staticBackends(p: Parts, members: readonly ResolvedBackend[]): T.StaticBackend[] {
  const byName = new Map<string, T.StaticBackend>();
  for (const b of members) {
    const sb: T.StaticBackend = { name: b.name, url: b.url, transport: b.transport };
    if (b.kind === "MCPServerEntry") {
      sb.type = "entry";
      if (b.caBundle !== undefined) {
        const path = `ca-bundles/${b.name}/ca.crt`;
        p.files.push({ configMap: b.caBundle.configMap, key: b.caBundle.key, path });
        sb.caBundlePath = `${VMCP_CONFIG_DIR}/${path}`;
      }
    }
    byName.set(b.name, sb);
  }
  for (const b of p.resource.spec.config?.backends ?? []) byName.set(b.name, b);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Aggregation: per-workload toolConfigRefs replaced by the MCPToolConfig's filter and overrides. */
function aggregation(p: Parts): T.EmbeddedConfig["aggregation"] {
  let aggregation = p.resource.spec.config?.aggregation;
  // vmcp requires a prefix format with the prefix strategy; the reference operator's default.
  if (
    aggregation?.conflictResolution === "prefix" &&
    aggregation.conflictResolutionConfig === undefined
  )
    aggregation = { ...aggregation, conflictResolutionConfig: { prefixFormat: "{workload}_" } };
  if (aggregation?.tools === undefined) return aggregation;
  const ns = p.resource.metadata.namespace;
  return {
    ...aggregation,
    tools: aggregation.tools.map((t) => {
      if (t.toolConfigRef === undefined) return t;
      const tc = p.set.get("MCPToolConfig", ns, t.toolConfigRef.name);
      if (tc === undefined) {
        p.report.warning(
          "SYNTH_REFERENCE_NOT_FOUND",
          `MCPToolConfig ${t.toolConfigRef.name} not found`,
          "/spec/config/aggregation/tools",
        );
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

/** Composite tools: inline ones, then the referenced definitions (an inline tool of the same name wins). */
function compositeTools(p: Parts): {
  compositeTools?: T.CompositeToolConfig[];
  compositeToolRefs?: T.CompositeToolRef[];
} {
  const embedded = p.resource.spec.config ?? {};
  const composite: T.CompositeToolConfig[] = [...(embedded.compositeTools ?? [])];
  const unresolved: T.CompositeToolRef[] = [];
  for (const ref of embedded.compositeToolRefs ?? []) {
    const def = p.set.get(
      "VirtualMCPCompositeToolDefinition",
      p.resource.metadata.namespace,
      ref.name,
    );
    if (def === undefined) {
      p.report.warning(
        "SYNTH_REFERENCE_NOT_FOUND",
        `VirtualMCPCompositeToolDefinition ${ref.name} not found`,
        "/spec/config/compositeToolRefs",
      );
      unresolved.push(ref);
      continue;
    }
    if (composite.some((c) => c.name === def.spec.name)) {
      p.report.warning(
        "SYNTH_SHADOWED",
        `composite tool ${def.spec.name} of VirtualMCPCompositeToolDefinition ${ref.name} is shadowed by an inline tool of the same name`,
        "/spec/config/compositeToolRefs",
      );
      continue;
    }
    composite.push(def.spec);
  }
  return {
    compositeTools: composite.length > 0 ? composite : undefined,
    compositeToolRefs: unresolved.length > 0 ? unresolved : undefined,
  };
}

function telemetryFromRef(
  p: Parts,
  tc: Resource<"MCPTelemetryConfig">,
  serviceName: string | undefined,
): T.EmbeddedTelemetryConfig {
  const o = tc.spec?.openTelemetry ?? {};
  const on = o.enabled === true;
  const sensitive = o.sensitiveHeaders ?? [];
  if (on && sensitive.length > 0) {
    // The OTLP exporter also reads headers from OTEL_EXPORTER_OTLP_HEADERS; the values come
    // from Secrets through $(VAR) expansion, so they never reach the ConfigMap.
    const parts = sensitive.map((h, i) => {
      const v = p.env.secret(`${VMCP_ENV_PREFIX}_OTEL_HEADER_${i}`, h.secretKeyRef);
      return `${h.name}=$(${v})`;
    });
    p.env.literal("OTEL_EXPORTER_OTLP_HEADERS", parts.join(","));
  }
  let caCertPath: string | undefined;
  const ca = o.caBundleRef?.configMapRef;
  if (on && ca !== undefined) {
    const path = "telemetry-ca/ca.crt";
    p.files.push({ configMap: ca.name, key: ca.key ?? "ca.crt", path });
    caCertPath = `${VMCP_CONFIG_DIR}/${path}`;
  }
  return compact({
    endpoint: on ? o.endpoint : undefined,
    serviceName: serviceName ?? p.resource.metadata.name,
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

/** Telemetry: inline, or from the referenced MCPTelemetryConfig. */
function telemetry(p: Parts): T.EmbeddedConfig["telemetry"] {
  const ref = p.resource.spec.telemetryConfigRef;
  const inline = p.resource.spec.config?.telemetry;
  if (ref === undefined) return inline;
  const tc = p.set.get("MCPTelemetryConfig", p.resource.metadata.namespace, ref.name);
  if (tc !== undefined) return telemetryFromRef(p, tc, ref.serviceName);
  p.report.warning(
    "SYNTH_REFERENCE_NOT_FOUND",
    `MCPTelemetryConfig ${ref.name} not found`,
    "/spec/telemetryConfigRef",
  );
  return inline;
}

/** Optimizer: pointed at the referenced EmbeddingServer. */
function optimizer(p: Parts): T.EmbeddedConfig["optimizer"] {
  const ref = p.resource.spec.embeddingServerRef;
  const inline = p.resource.spec.config?.optimizer;
  if (ref === undefined) return inline;
  const es = p.set.get("EmbeddingServer", p.resource.metadata.namespace, ref.name);
  if (es === undefined) {
    p.report.warning(
      "SYNTH_REFERENCE_NOT_FOUND",
      `EmbeddingServer ${ref.name} not found`,
      "/spec/embeddingServerRef",
    );
    return inline;
  }
  if (inline?.embeddingService !== undefined) {
    p.report.warning(
      "SYNTH_FIELD_REPLACED",
      `config.optimizer.embeddingService is replaced by the URL of EmbeddingServer ${es.metadata.name}`,
      "/spec/config/optimizer/embeddingService",
    );
  }
  return { ...inline, embeddingService: embeddingServerUrl(es) };
}

/** Session storage: the resource form carries the Redis password as a Secret reference. */
function sessionStorage(p: Parts): T.EmbeddedConfig["sessionStorage"] {
  const storage = p.resource.spec.sessionStorage;
  if (storage === undefined) return p.resource.spec.config?.sessionStorage;
  const { passwordRef, ...rest } = storage;
  // vmcp reads the password from this variable only (as the proxy runner does).
  if (passwordRef !== undefined) p.env.secret("THV_SESSION_REDIS_PASSWORD", passwordRef);
  return rest;
}

/**
 * Builds the virtual server's configuration; secrets become env var names. Returns undefined,
 * with an error reported, when the server cannot be rendered safely (its group is missing, or
 * its clients' authentication cannot be rendered).
 */
export function buildVmcpConfig(
  resource: Resource<"VirtualMCPServer">,
  set: ResourceSet,
  report: IssueReporter,
  members: VmcpMembers = resolveVmcpMembers(resource, set),
): VmcpBuild | undefined {
  if (members.group === undefined || !members.groupFound) {
    const path = resource.spec.groupRef !== undefined ? "/spec/groupRef" : "/spec/config/groupRef";
    report.error(
      "SYNTH_NOT_RENDERED",
      `renders nothing: MCPGroup ${members.group ?? "(none)"} not found`,
      path,
    );
    return undefined;
  }
  const p: Parts = { resource, set, env: new SecretEnv(), files: [], report };
  const incoming = incomingAuth(resource, set, p.env);
  if ("fatal" in incoming) {
    report.error("SYNTH_NOT_RENDERED", `renders nothing: ${incoming.fatal}`, "/spec/incomingAuth");
    return undefined;
  }
  const backends = staticBackends(p, members.backends);
  const embedded: T.EmbeddedConfig = resource.spec.config ?? {};
  const config: T.VirtualMCPConfig = compact({
    ...embedded,
    name: embedded.name ?? resource.metadata.name,
    groupRef: members.group,
    backends,
    incomingAuth: incoming.auth,
    outgoingAuth: outgoingAuth(resource, set, backends, members.backends, p.env, report),
    aggregation: aggregation(p),
    ...compositeTools(p),
    telemetry: telemetry(p),
    optimizer: optimizer(p),
    sessionStorage: sessionStorage(p),
  });
  return { config, env: p.env.vars, files: p.files, backends: members.backends };
}

/** The config file text: YAML with sorted keys, so equal configurations give equal bytes. */
export function vmcpConfigYaml(config: T.VirtualMCPConfig): string {
  const file =
    config.rateLimiting === undefined
      ? config
      : { ...config, rateLimiting: rateLimitingFileForm(config.rateLimiting) };
  return sortedYamlDocument(file);
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

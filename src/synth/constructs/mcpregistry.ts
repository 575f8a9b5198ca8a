import type * as T from "../../../generated/types.js";
import { API_GROUP } from "../../schema/kinds.js";
import type { KindRenderer } from "../context.js";
import { contentHash } from "../hash.js";
import { yamlDocument } from "../yaml.js";
import { labelValue } from "../names.js";
import type { RegistryServerKind, SynthOptions } from "../options.js";
import { restrictedContainer, restrictedPod } from "../security.js";
import { CONTENT_CHECKSUM } from "./runner-workload.js";
import type { Resource } from "../model.js";
import { dnsLabel, dnsSubdomain } from "../names.js";
import { ALL_VERBS, type PolicyRule } from "./common.js";
import { EXPORTED_KINDS } from "../../registry/sources/exported-kinds.js";
import {
  compact,
  type Container,
  type EnvVar,
  httpProbe,
  mergePodTemplate,
  type Probe,
  type PodSpec,
  type PodTemplate,
} from "../pod.js";
import { emit, emitRbac, READ_VERBS, serviceHost } from "./common.js";
import { CONFIG_CHECKSUM_ANNOTATION } from "./vmcp/names.js";

export const REGISTRY_CONTAINER = "registry-api";
export const REGISTRY_PORT = 8080;
/** The reference's registry server answers /health and /readiness on this internal port only. */
export const REGISTRY_HEALTH_PORT = 8081;
/** The reference operator's annotation of the config's hash on the registry pod template. */
export const REGISTRY_CONFIG_HASH = "toolhive.stacklok.dev/config-hash";
/** Directory of the mounted config.yaml. */
export const REGISTRY_CONFIG_DIR = "/config";
/** Directory of the files the legacy typed fields refer to (sources, passwords, CA certificates). */
export const REGISTRY_FILES_DIR = "/etc/registry";
/** Where the pgpass file is copied (mode 0600) for `pgpassSecretRef`. */
export const PGPASS_DIR = "/pgpass";
/**
 * Image of the init container that copies the pgpass file beside the reference's server (its
 * image has no shell); only `sh`, `cp` and `chmod` are used. Ours uses its own image.
 */
export const PGPASS_INIT_IMAGE = "busybox:1.37";
/** The user the registry pod runs as, so the copied pgpass file belongs to the server. */
export const REGISTRY_UID = 65532;
/** The reference operator's default resources of the registry server. */
const REGISTRY_RESOURCES: NonNullable<Container["resources"]> = {
  requests: { cpu: "100m", memory: "128Mi" },
  limits: { cpu: "500m", memory: "512Mi" },
};

/**
 * The reference operator's labels of a registry's objects; the first two select its pods. They
 * are kept as that operator writes them, `managed-by` included, so its objects can be adopted
 * (selectors cannot change); the controller marks what it applies as its own.
 */
export function registryLabels(name: string): Record<string, string> {
  return {
    ...registrySelector(name),
    "app.kubernetes.io/managed-by": "toolhive-operator",
    "toolhive.stacklok.io/registry-name": labelValue(name),
  };
}

export function registrySelector(name: string): Record<string, string> {
  return {
    "app.kubernetes.io/name": labelValue(registryApiName(name)),
    "app.kubernetes.io/component": "registry-api",
  };
}

export const registryConfigMapName = (name: string): string =>
  dnsSubdomain(`${name}-registry-server-config`);
export const registryApiName = (name: string): string => dnsLabel(`${name}-api`);
export const registryRbacName = (name: string): string => dnsSubdomain(`${name}-registry-api`);

/** In-cluster URL of a registry's API (status `url`, and the default OAuth resource URL). */
export function registryUrl(name: string, namespace: string): string {
  return `http://${serviceHost(registryApiName(name), namespace)}:${REGISTRY_PORT}`;
}

/** A Secret or ConfigMap key projected into the legacy files directory at a relative path. */
export interface RegistryFile {
  from: "secret" | "configMap";
  name: string;
  key: string;
  path: string;
}

/** The config file of a legacy (typed fields) MCPRegistry, and the files it refers to. */
export interface LegacyRegistryConfig {
  config: T.EmbeddedRegistryServerConfig;
  files: RegistryFile[];
}

function legacySource(
  s: T.MCPRegistrySourceConfig,
  fileRef: (f: Omit<RegistryFile, "path">, path: string) => string,
): T.Source {
  const synced = s.managed === undefined && s.kubernetes === undefined;
  const out: T.Source = compact({
    name: s.name,
    format: s.format ?? "toolhive",
    claims: s.claims,
    syncPolicy: synced ? s.syncPolicy : undefined,
    filter: synced ? s.filter : undefined,
  });
  if (s.configMapRef !== undefined) {
    const key = s.configMapRef.key;
    const path = fileRef(
      { from: "configMap", name: s.configMapRef.name ?? "", key },
      `sources/${s.name}/${key}`,
    );
    out.file = { path };
  } else if (s.git !== undefined) {
    const { auth, ...git } = s.git;
    out.git = { ...git };
    if (auth !== undefined) {
      const passwordFile = fileRef(
        { from: "secret", name: auth.passwordSecretRef.name, key: auth.passwordSecretRef.key },
        `git/${s.name}/password`,
      );
      out.git.auth = { username: auth.username, passwordFile };
    }
  } else if (s.api !== undefined) out.api = s.api;
  else if (s.url !== undefined) out.url = s.url;
  else if (s.managed !== undefined) out.managed = {};
  else if (s.kubernetes !== undefined) out.kubernetes = s.kubernetes;
  return out;
}

/** Records a referenced Secret or ConfigMap key as a file under /etc/registry; returns its path. */
type FileRef = (f: Omit<RegistryFile, "path">, path: string) => string;

/** The deprecated authConfig: OAuth providers' secrets, CA certificates and tokens as files. */
function legacyAuth(resource: Resource<"MCPRegistry">, fileRef: FileRef): T.AuthConfig {
  const a = resource.spec.authConfig;
  const mode = a?.mode ?? "anonymous";
  const auth: T.AuthConfig = compact({ mode, publicPaths: a?.publicPaths, authz: a?.authz });
  if (a?.oauth === undefined) return auth;
  const o = a.oauth;
  auth.oauth = compact({
    resourceUrl: o.resourceUrl ?? registryUrl(resource.metadata.name, resource.metadata.namespace),
    realm: o.realm,
    scopesSupported: o.scopesSupported,
    providers: o.providers.map((p, i) =>
      compact({
        name: p.name,
        issuerUrl: p.issuerUrl,
        audience: p.audience,
        jwksUrl: p.jwksUrl,
        introspectionUrl: p.introspectionUrl,
        clientId: p.clientId,
        clientSecretFile: p.clientSecretRef
          ? fileRef(
              { from: "secret", name: p.clientSecretRef.name, key: p.clientSecretRef.key },
              `oauth/${i}/client-secret`,
            )
          : undefined,
        caCertPath: p.caCertRef
          ? fileRef(
              { from: "configMap", name: p.caCertRef.name ?? "", key: p.caCertRef.key },
              `oauth/${i}/ca.crt`,
            )
          : p.caCertPath,
        authTokenFile: p.authTokenRef
          ? fileRef(
              { from: "secret", name: p.authTokenRef.name, key: p.authTokenRef.key },
              `oauth/${i}/token`,
            )
          : p.authTokenFile,
        allowPrivateIP: p.allowPrivateIP,
      }),
    ),
  });
  return auth;
}

/** The deprecated databaseConfig: the connection in full, the password Secrets as files. */
function legacyDatabase(
  d: NonNullable<Resource<"MCPRegistry">["spec"]["databaseConfig"]>,
  fileRef: FileRef,
): T.DatabaseConfig {
  const {
    dbAppUserPasswordSecretRef: app,
    dbMigrationUserPasswordSecretRef: migrator,
    ...connection
  } = d;
  // The connection written out in full: the reference's server requires each of these,
  // ours has the same defaults.
  const database: T.DatabaseConfig = {
    ...connection,
    port: connection.port ?? 5432,
    user: connection.user ?? "db_app",
    migrationUser: connection.migrationUser ?? "db_migrator",
    database: connection.database ?? "registry",
  };
  if (d.dynamicAuth === undefined) {
    database.passwordFile = fileRef(
      { from: "secret", name: app.name, key: app.key },
      "database/app-password",
    );
    database.migrationPasswordFile = fileRef(
      { from: "secret", name: migrator.name, key: migrator.key },
      "database/migration-password",
    );
  }
  return database;
}

/**
 * Renders the deprecated typed fields (sources, registries, databaseConfig, authConfig,
 * telemetryConfig) into the registry server's config file. Secret and ConfigMap references
 * become files under /etc/registry, listed in `files`; no secret value is copied.
 */
export function legacyRegistryConfig(resource: Resource<"MCPRegistry">): LegacyRegistryConfig {
  const spec = resource.spec;
  const files: RegistryFile[] = [];
  const fileRef: FileRef = (f, path) => {
    files.push({ ...f, path });
    return `${REGISTRY_FILES_DIR}/${path}`;
  };
  const sources = (spec.sources ?? []).map((s) => legacySource(s, fileRef));
  const registries: T.Registry[] =
    spec.registries !== undefined && spec.registries.length > 0
      ? spec.registries
      : [{ name: "default", sources: sources.map((s) => s.name) }];
  const config: T.EmbeddedRegistryServerConfig = { sources, registries };
  config.auth = legacyAuth(resource, fileRef);
  if (spec.databaseConfig !== undefined)
    config.database = legacyDatabase(spec.databaseConfig, fileRef);
  if (spec.telemetryConfig !== undefined) config.telemetry = spec.telemetryConfig;
  return { config, files };
}

/** True when the resource uses the deprecated typed fields rather than configYAML. */
export function isLegacyRegistry(resource: Resource<"MCPRegistry">): boolean {
  return resource.spec.configYAML === undefined;
}

/**
 * The config.yaml text of an MCPRegistry: configYAML verbatim, or rendered from the typed
 * fields. The reference's server reads database passwords from a pgpass file only, so for it
 * the password files are left out (an init container writes them into pgpass instead).
 */
export function registryConfigYaml(
  resource: Resource<"MCPRegistry">,
  server: RegistryServerKind = "mcpfleet",
): string {
  if (resource.spec.configYAML !== undefined) return resource.spec.configYAML;
  const { config } = legacyRegistryConfig(resource);
  if (server === "toolhive" && config.database !== undefined) {
    const { passwordFile: _app, migrationPasswordFile: _migrator, ...database } = config.database;
    config.database = database;
  }
  return yamlDocument(config);
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The shell command that writes the pgpass file of the legacy password files (one line per
 * user, `:` and `\\` escaped as pgpass wants), for the reference's server.
 */
function pgpassFromFiles(database: T.DatabaseConfig): string {
  const line = (user: string | undefined, file: string): string =>
    [database.host ?? "postgres", String(database.port ?? 5432), database.database ?? "registry"]
      .concat(user ?? "")
      .map(shellQuote)
      .join(" ") + ` "$(sed 's/[\\:]/\\\\&/g' ${shellQuote(file)})"`;
  return (
    `printf '%s:%s:%s:%s:%s\\n' ` +
    `${line(database.user, database.passwordFile ?? "")} ` +
    `${line(database.migrationUser, database.migrationPasswordFile ?? "")} ` +
    `>${PGPASS_DIR}/.pgpass && chmod 0600 ${PGPASS_DIR}/.pgpass`
  );
}

/** How each registry server program is started and probed in its pod. */
interface RegistryProgram {
  args: string[];
  livenessProbe: Probe;
  readinessProbe: Probe;
  /** A writable /tmp: the root file system is read-only. */
  tmpVolume: boolean;
  /** What its account may do: what the program reads and writes through the API server. */
  rules: PolicyRule[];
  /** Its own environment variables. */
  env: EnvVar[];
}

/**
 * Our server's environment: one malloc arena. glibc gives each thread that allocates an arena
 * of its own, and V8's compiler and collector threads kept some 20 MB in theirs under load, a
 * seventh of the server's peak at 10,000 entries; the server's own work is on one thread.
 */
export const MCPFLEET_REGISTRY_ENV: readonly EnvVar[] = [{ name: "MALLOC_ARENA_MAX", value: "1" }];

/** Ours reads the three kinds its kubernetes source exports, and nothing else. */
const MCPFLEET_REGISTRY_RULES: PolicyRule[] = [
  {
    apiGroups: [API_GROUP],
    resources: EXPORTED_KINDS.map((k) => k.plural as string),
    verbs: READ_VERBS,
  },
];

/**
 * The reference's server also reads Services and Gateway API routes (a server's external URL),
 * elects a leader with Leases and ConfigMaps, and records Events.
 */
const REFERENCE_REGISTRY_RULES: PolicyRule[] = [
  {
    apiGroups: [API_GROUP],
    resources: ["mcpservers", "mcpremoteproxies", "virtualmcpservers", "mcpserverentries"],
    verbs: READ_VERBS,
  },
  { apiGroups: [""], resources: ["services"], verbs: READ_VERBS },
  {
    apiGroups: ["gateway.networking.k8s.io"],
    resources: ["httproutes", "gateways"],
    verbs: READ_VERBS,
  },
  { apiGroups: [""], resources: ["configmaps"], verbs: ALL_VERBS },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ALL_VERBS },
  { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
];

const CONFIG_ARG = `--config=${REGISTRY_CONFIG_DIR}/config.yaml`;

/** Liveness on /health every 10 s and readiness on /readiness every 5 s, after these delays. */
function registryProbes(
  port: number,
  liveDelay: number,
  readyDelay: number,
): Pick<RegistryProgram, "livenessProbe" | "readinessProbe"> {
  return {
    livenessProbe: httpProbe("/health", port, {
      initialDelaySeconds: liveDelay,
      periodSeconds: 10,
    }),
    readinessProbe: httpProbe("/readiness", port, {
      initialDelaySeconds: readyDelay,
      periodSeconds: 5,
    }),
  };
}

/**
 * Ours answers the probes on its one port, and listens on every address of the pod (its own
 * default is loopback only); /tmp holds Node's compile cache. The reference's server answers
 * them on a separate internal port, and its arguments and probes are kept as its operator
 * renders them.
 */
function registryProgram(server: RegistryServerKind): RegistryProgram {
  if (server === "toolhive") {
    return {
      args: ["serve", CONFIG_ARG],
      ...registryProbes(REGISTRY_HEALTH_PORT, 30, 5),
      tmpVolume: false,
      rules: REFERENCE_REGISTRY_RULES,
      env: [],
    };
  }
  return {
    args: ["registry", "serve", CONFIG_ARG, "--address=0.0.0.0", `--port=${REGISTRY_PORT}`],
    ...registryProbes(REGISTRY_PORT, 10, 2),
    tmpVolume: true,
    rules: MCPFLEET_REGISTRY_RULES,
    env: [...MCPFLEET_REGISTRY_ENV],
  };
}

type Mount = { name: string; mountPath: string; readOnly?: boolean; subPath?: string };

/** The registry pod's environment, volumes, mounts and init containers, in the order added. */
interface RegistryPodParts {
  env: EnvVar[];
  volumes: Record<string, unknown>[];
  mounts: Mount[];
  initContainers: Container[];
}

/** An init container that writes the pgpass file into a memory volume the server reads it from. */
function addPgpassInit(
  parts: RegistryPodParts,
  options: SynthOptions,
  command: string,
  inputs: Container["volumeMounts"],
): void {
  parts.volumes.push({ name: "pgpass", emptyDir: { medium: "Memory" } });
  parts.mounts.push({ name: "pgpass", mountPath: PGPASS_DIR });
  parts.env.push({ name: "PGPASSFILE", value: `${PGPASS_DIR}/.pgpass` });
  parts.initContainers.push({
    name: "pgpass",
    image: options.registryServer === "mcpfleet" ? options.registryImage : PGPASS_INIT_IMAGE,
    command: ["sh", "-c", command],
    volumeMounts: [...(inputs ?? []), { name: "pgpass", mountPath: PGPASS_DIR }],
    securityContext: restrictedContainer(),
  });
}

/**
 * The pgpass file: copied from `pgpassSecretRef`, or (for the reference's server, which reads
 * database passwords from pgpass only) written from the legacy password files.
 */
function addPgpass(
  parts: RegistryPodParts,
  resource: Resource<"MCPRegistry">,
  legacy: LegacyRegistryConfig | undefined,
  options: SynthOptions,
): void {
  const ref = resource.spec.pgpassSecretRef;
  if (legacy === undefined && ref !== undefined) {
    parts.volumes.push({
      name: "pgpass-secret",
      secret: { secretName: ref.name, items: [{ key: ref.key, path: "pgpass" }] },
    });
    addPgpassInit(
      parts,
      options,
      `cp /pgpass-secret/pgpass ${PGPASS_DIR}/.pgpass && chmod 0600 ${PGPASS_DIR}/.pgpass`,
      [{ name: "pgpass-secret", mountPath: "/pgpass-secret", readOnly: true }],
    );
  }
  const database = legacy?.config.database;
  if (options.registryServer === "toolhive" && database?.passwordFile !== undefined) {
    addPgpassInit(parts, options, pgpassFromFiles(database), [
      { name: "registry-files", mountPath: REGISTRY_FILES_DIR, readOnly: true },
    ]);
  }
}

/**
 * The config volume, the files the legacy fields reference (else the spec's own volumes), the
 * pgpass file, and a writable /tmp where the program needs one.
 */
function registryPodParts(
  resource: Resource<"MCPRegistry">,
  legacy: LegacyRegistryConfig | undefined,
  options: SynthOptions,
  server: RegistryProgram,
): RegistryPodParts {
  const configMapName = registryConfigMapName(resource.metadata.name);
  const parts: RegistryPodParts = {
    env: [
      {
        name: "POD_NAMESPACE",
        valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
      },
      ...server.env,
    ],
    volumes: [{ name: "registry-server-config", configMap: { name: configMapName } }],
    mounts: [{ name: "registry-server-config", mountPath: REGISTRY_CONFIG_DIR, readOnly: true }],
    initContainers: [],
  };
  if (legacy !== undefined && legacy.files.length > 0) {
    parts.volumes.push({
      name: "registry-files",
      projected: {
        sources: legacy.files.map((f) =>
          f.from === "secret"
            ? { secret: { name: f.name, items: [{ key: f.key, path: f.path }] } }
            : { configMap: { name: f.name, items: [{ key: f.key, path: f.path }] } },
        ),
      },
    });
    parts.mounts.push({ name: "registry-files", mountPath: REGISTRY_FILES_DIR, readOnly: true });
  }
  if (legacy === undefined) {
    for (const v of resource.spec.volumes ?? []) parts.volumes.push({ ...v });
    for (const m of resource.spec.volumeMounts ?? []) parts.mounts.push({ ...m });
  }
  addPgpass(parts, resource, legacy, options);
  if (server.tmpVolume) {
    parts.volumes.push({ name: "tmp", emptyDir: {} });
    parts.mounts.push({ name: "tmp", mountPath: "/tmp" });
  }
  return parts;
}

/** The pod template: the server container, its account, the config's checksum (a change rolls the pods). */
function registryPodTemplate(
  resource: Resource<"MCPRegistry">,
  options: SynthOptions,
  server: RegistryProgram,
  configYaml: string,
): PodTemplate {
  const legacy = isLegacyRegistry(resource) ? legacyRegistryConfig(resource) : undefined;
  const parts = registryPodParts(resource, legacy, options, server);
  const container: Container = {
    name: REGISTRY_CONTAINER,
    image: options.registryImage,
    imagePullPolicy: "IfNotPresent",
    args: server.args,
    ports: [{ name: "http", containerPort: REGISTRY_PORT, protocol: "TCP" }],
    env: parts.env,
    resources: REGISTRY_RESOURCES,
    volumeMounts: parts.mounts,
    livenessProbe: server.livenessProbe,
    readinessProbe: server.readinessProbe,
    securityContext: restrictedContainer(),
  };
  const base: PodTemplate = {
    metadata: {
      labels: registryLabels(resource.metadata.name),
      annotations: {
        [CONFIG_CHECKSUM_ANNOTATION]: contentHash(configYaml),
        [REGISTRY_CONFIG_HASH]: contentHash(configYaml),
      },
    },
    spec: {
      serviceAccountName: registryRbacName(resource.metadata.name),
      securityContext: restrictedPod({
        runAsUser: REGISTRY_UID,
        runAsGroup: REGISTRY_UID,
        fsGroup: REGISTRY_UID,
      }),
      ...(parts.initContainers.length > 0 ? { initContainers: parts.initContainers } : {}),
      containers: [container],
      volumes: parts.volumes as unknown as PodSpec["volumes"],
    },
  };
  return mergePodTemplate(base, resource.spec.podTemplateSpec, REGISTRY_CONTAINER);
}

/**
 * Renders an MCPRegistry: ConfigMap `<n>-registry-server-config` (config.yaml), Deployment and
 * Service `<n>-api` (container `registry-api`), ServiceAccount, Role and RoleBinding
 * `<n>-registry-api`; with `pgpassSecretRef`, an init container that copies the pgpass file
 * (for the reference's server, also one that writes it from the legacy password files).
 */
export const renderMCPRegistry: KindRenderer<"MCPRegistry"> = (scope, resource, context) => {
  const spec = resource.spec;
  const name = resource.metadata.name;
  const labels = registryLabels(name);
  const selector = registrySelector(name);
  const configYaml = registryConfigYaml(resource, context.options.registryServer);
  emit(scope, resource, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: registryConfigMapName(name),
      labels,
      annotations: { [CONTENT_CHECKSUM]: contentHash(configYaml) },
    },
    data: { "config.yaml": configYaml },
  });
  const server = registryProgram(context.options.registryServer);
  emitRbac(scope, resource, registryRbacName(name), labels, server.rules);
  const deploymentAnnotations =
    spec.displayName !== undefined ? { "mcpfleet.dev/display-name": spec.displayName } : undefined;
  emit(scope, resource, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: registryApiName(name),
      labels,
      ...(deploymentAnnotations !== undefined ? { annotations: deploymentAnnotations } : {}),
    },
    spec: {
      selector: { matchLabels: selector },
      template: registryPodTemplate(resource, context.options, server, configYaml),
    },
  });
  emit(scope, resource, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: registryApiName(name), labels },
    spec: {
      type: "ClusterIP",
      selector,
      ports: [{ name: "http", port: REGISTRY_PORT, targetPort: REGISTRY_PORT, protocol: "TCP" }],
    },
  });
};

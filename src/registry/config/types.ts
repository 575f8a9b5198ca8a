// The registry server's configuration, as read from the config file (see
// schemas/config/registry-server.yaml, which is what validates it).

export type Claims = Record<string, string | string[]>;

export interface FilterConfig {
  names?: { include?: string[]; exclude?: string[] };
  tags?: { include?: string[]; exclude?: string[] };
}

export interface GitSourceConfig {
  repository: string;
  branch?: string;
  tag?: string;
  commit?: string;
  path?: string;
  auth?: { username: string; passwordFile?: string; password?: string };
}

export interface SourceConfig {
  name: string;
  format?: "toolhive" | "upstream";
  claims?: Claims;
  git?: GitSourceConfig;
  api?: { endpoint: string };
  url?: { url: string; timeout?: string; headers?: Record<string, string> };
  file?: { path: string };
  managed?: Record<string, never>;
  kubernetes?: { namespaces?: string[] };
  syncPolicy?: { interval: string };
  filter?: FilterConfig;
}

export type SourceKind = "git" | "api" | "url" | "file" | "managed" | "kubernetes";

export const SOURCE_KINDS: readonly SourceKind[] = [
  "git",
  "api",
  "url",
  "file",
  "managed",
  "kubernetes",
];

export function sourceKind(s: SourceConfig): SourceKind {
  for (const k of SOURCE_KINDS) if (s[k] !== undefined) return k;
  throw new Error(`source ${s.name} has no kind`);
}

export function isSynced(s: SourceConfig): boolean {
  const k = sourceKind(s);
  return k === "git" || k === "api" || k === "url" || k === "file";
}

export interface RegistryConfig {
  name: string;
  sources: string[];
  claims?: Claims;
}

export interface DatabaseConfig {
  embedded?: { dataDir?: string };
  host?: string;
  port?: number;
  user?: string;
  migrationUser?: string;
  database?: string;
  sslMode?: "disable" | "allow" | "prefer" | "require" | "verify-ca" | "verify-full";
  passwordFile?: string;
  migrationPasswordFile?: string;
  /** Clear text; accepted with a warning. */
  password?: string;
  /** Clear text; accepted with a warning. */
  migrationPassword?: string;
  maxOpenConns?: number;
  maxIdleConns?: number;
  connMaxLifetime?: string;
  maxMetaSize?: number;
  dynamicAuth?: { awsRdsIam?: { region: string } };
}

export interface AuthConfig {
  mode?: "oauth" | "anonymous";
  publicPaths?: string[];
  oauth?: Record<string, unknown>;
  authz?: Record<string, unknown>;
}

/** Settings of the HTTP listener (not part of the schema: command-line flags and defaults). */
export interface ServerSettings {
  address: string;
  port: number;
  /** Largest request body in bytes. */
  bodyLimit: number;
  /** Time limit of one request in milliseconds (0: none). */
  requestTimeoutMs: number;
}

/** What sources created through the admin API may read (see sources/location.ts). */
export interface AdminSourcesConfig {
  fileRoots?: string[];
  hosts?: string[];
  allowPrivateIP?: boolean;
}

export interface RegistryServerConfig {
  sources: SourceConfig[];
  registries: RegistryConfig[];
  defaultRegistry?: string;
  adminSources?: AdminSourcesConfig;
  auth?: AuthConfig;
  database?: DatabaseConfig;
  telemetry?: Record<string, unknown>;
  audit?: Record<string, unknown>;
}

/** A loaded configuration: the document plus where it came from. */
export interface LoadedConfig {
  config: RegistryServerConfig;
  /** Absolute path of the config file (relative source paths resolve against its directory). */
  path: string;
  baseDir: string;
  warnings: string[];
}

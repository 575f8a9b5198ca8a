// The registry server's configuration, as read from the config file: the types generated from
// schemas/config/registry-server.yaml (which validates it), narrowed where the server reads
// more precisely, plus the clear-text secrets the loader accepts with a warning.
import type * as G from "../../../generated/types.js";
import { McpfleetError } from "../../errors.js";

/** Claims as matched: the generated index signature also admits undefined values. */
export type Claims = Record<string, string | string[]>;

export type FilterConfig = G.Filter;

/** A git source; `auth.password` is clear text, accepted with a warning. */
export type GitSourceConfig = G.GitSource & { auth?: G.GitAuth & { password?: string } };

export type SourceConfig = Omit<G.Source, "git" | "claims"> & {
  git?: GitSourceConfig;
  claims?: Claims;
};

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
  throw new McpfleetError("ERR_REGISTRY_CONFIG", `source ${s.name} has no kind`);
}

export function isSynced(s: SourceConfig): boolean {
  const k = sourceKind(s);
  return k === "git" || k === "api" || k === "url" || k === "file";
}

export type RegistryConfig = Omit<G.Registry, "claims"> & { claims?: Claims };

/** The database settings; the two passwords are clear text, accepted with a warning. */
export type DatabaseConfig = G.DatabaseConfig & { password?: string; migrationPassword?: string };

export type AuthConfig = G.AuthConfig;

/** Settings of the HTTP listener (not part of the schema: command-line flags and defaults). */
export interface ServerSettings {
  address: string;
  port: number;
  /** Largest request body in bytes. */
  bodyLimit: number;
  /** Time limit of one request in milliseconds (0: none). */
  requestTimeoutMs: number;
}

export type AdminSourcesConfig = G.AdminSourcesConfig;

export type RegistryServerConfig = Omit<
  G.EmbeddedRegistryServerConfig,
  "sources" | "registries" | "database"
> & {
  sources: SourceConfig[];
  registries: RegistryConfig[];
  database?: DatabaseConfig;
};

/** A loaded configuration: the document plus where it came from. */
export interface LoadedConfig {
  config: RegistryServerConfig;
  /** Absolute path of the config file (relative source paths resolve against its directory). */
  path: string;
  baseDir: string;
  warnings: string[];
}

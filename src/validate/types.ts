/**
 * The shapes `mcpfleet validate` produces. `Report` serialised by the json format is a public
 * contract (docs/validate.md): fields are only ever added to it in new major versions.
 */
import { MAX_RESOURCE_FILE_BYTES } from "../resource-files.js";
import { DEFAULT_PARSE_LIMITS } from "../yaml/model.js";

/**
 * Where an issue comes from. The three validation levels are `schema`, `cel` and `reference`;
 * `runtime` is a rule the operator checks when it reconciles (the API server accepts the
 * resource); `parse` is a document that is not YAML or not a resource at all, `io` a path that
 * cannot be read.
 */
export type Level = "schema" | "cel" | "reference" | "runtime" | "parse" | "io";

export interface Issue {
  /** JSON pointer of the offending node ("" for the whole document). */
  path: string;
  /** 1-based line and column of the offending node in `file`. */
  line: number;
  column: number;
  message: string;
  level: Level;
}

export interface ResourceResult {
  file: string;
  /** 1-based line where the document (or list item) starts. */
  line: number;
  /** Empty when the document does not parse or has no kind. */
  kind: string;
  namespace: string;
  name: string;
  valid: boolean;
  skipped: boolean;
  errors: readonly Issue[];
  warnings: readonly Issue[];
}

export interface Summary {
  resources: number;
  valid: number;
  invalid: number;
  skipped: number;
  errors: number;
  warnings: number;
}

export interface Report {
  resources: ResourceResult[];
  summary: Summary;
}

export interface ValidateOptions {
  /** Namespace assumed where metadata has none. */
  namespace: string;
  /** What an unknown field (one the schema does not declare) is: an error, a warning, or nothing. */
  unknownFields: UnknownFields;
  /** Unknown fields are errors: the default now, kept for compatibility; overrides unknownFields. */
  strict: boolean;
  /**
   * Skip documents of kinds no schema is known for (other API groups' kinds, core kinds
   * kubernetes-models lacks) instead of reporting each as an error.
   */
  ignoreMissingSchemas: boolean;
  /** Missing references are warnings instead of errors. */
  allowMissingRefs: boolean;
  /** Treat every document as a registry-server configuration file. */
  registryConfig: boolean;
  /** Validate core Kubernetes kinds against Kubernetes' OpenAPI schemas (else skip them). */
  kube: boolean;
  /** Files larger than this are refused (bytes). */
  maxFileBytes: number;
  /** Deepest nesting of mappings and sequences a document may have. */
  maxDepth: number;
  /** Largest number of alias expansions in one document. */
  maxAliasCount: number;
  /** Read when a path is `-`. */
  stdin?: () => Promise<Buffer>;
  /**
   * Worker threads to spread the files over (see pool.ts); unset or 1: this thread only. The
   * results are the same either way.
   */
  threads?: number;
  /** Called before each input is read with how many are done, for a progress display. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Kinds not validated, reported as skipped (kubeconform's -skip): `Kind`, or
   * `apiVersion/Kind` for one version (`cert-manager.io/v1/Certificate`).
   */
  skipKinds: readonly string[];
  /** Kinds refused with an error wherever they appear (kubeconform's -reject); same forms. */
  rejectKinds: readonly string[];
  /**
   * CustomResourceDefinition files or directories (`--crd`): the kinds they define are validated
   * with their schemas and CEL rules, as ours are.
   */
  crdPaths: readonly string[];
  /**
   * Called with each directory a recursive walk left out because mcpfleet wrote it (its
   * `.mcpfleet-output.json`): rendered output, not input.
   */
  onSkippedDir?: (dir: string) => void;
}

export const UNKNOWN_FIELDS = ["error", "warn", "ignore"] as const;
export type UnknownFields = (typeof UNKNOWN_FIELDS)[number];

export const DEFAULT_OPTIONS: ValidateOptions = {
  namespace: "default",
  unknownFields: "error",
  strict: false,
  ignoreMissingSchemas: false,
  allowMissingRefs: false,
  registryConfig: false,
  kube: true,
  maxFileBytes: MAX_RESOURCE_FILE_BYTES,
  ...DEFAULT_PARSE_LIMITS,
  skipKinds: [],
  rejectKinds: [],
  crdPaths: [],
};

/** Exit codes of the command. */
export const EXIT_VALID = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE_OR_IO = 2;

// A git source's registry file, read through the one git layer (src/infra/git): remote
// repositories are fetched by the system git into a bare cache under the sync's cache directory
// and reused between syncs, file:// repositories are read in place, and the file is read from
// the object store under the sync's size limit (a larger one is refused from its header, never
// inflated). The fetch ends at the sync's deadline or when the sync is cancelled, and a source
// created through the admin API connects only to an address its policy allows.
import type { LookupAddress } from "node:dns";
import { McpfleetError } from "../../errors.js";
import { GitSource, type GitRevisionSpec } from "../../infra/git/source.js";
import { redactUrl } from "../../infra/git/transport.js";
import { guardedLookup } from "../../infra/http-client.js";
import { readSecretFile } from "../config/secrets.js";
import type { GitSourceConfig } from "../config/types.js";
import { DEFAULT_SYNC_LIMITS, resolvePath } from "./fetch.js";
import { type LocationPolicy, urlProblem } from "./location.js";

/** A transfer silent this long fails, well before the sync's own deadline. */
const IDLE_TIMEOUT_MS = 60_000;

export interface GitFetchOptions {
  /** The source's name, for messages. */
  source?: string;
  cacheDir: string;
  baseDir: string;
  /** Largest registry file. */
  maxBytes?: number;
  /** For sources created through the admin API: the host and every address checked. */
  guard?: LocationPolicy;
  /** Most bytes a guarded fetch may receive. */
  maxTransferBytes?: number;
  /** The sync's deadline and cancellation. */
  signal?: AbortSignal;
  /** The sync's time limit, in milliseconds. */
  timeoutMs?: number;
}

function revisionOf(cfg: GitSourceConfig): GitRevisionSpec {
  if (cfg.commit !== undefined) return { commit: cfg.commit };
  if (cfg.tag !== undefined) return { tag: cfg.tag };
  if (cfg.branch !== undefined) return { branch: cfg.branch };
  return {};
}

/**
 * The addresses a guarded source connects to: the host must be allowed, and every address it
 * resolves to must be public unless the policy allows private ones.
 */
function pinAddresses(guard: LocationPolicy): (url: URL) => Promise<string[]> {
  const lookup = guardedLookup(guard.allowPrivateIP);
  return async (url) => {
    const refused = urlProblem(url, guard);
    if (refused !== undefined) throw new Error(`refused: ${refused}`);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    return new Promise((resolve, reject) => {
      lookup(host, { all: true }, (err, addresses) => {
        if (err !== null) reject(err);
        else resolve((addresses as LookupAddress[]).map((a) => a.address));
      });
    });
  };
}

/** Reads the registry file of a git source at the tip of its branch, tag or commit. */
export async function fetchGitFile(
  cfg: GitSourceConfig,
  opts: GitFetchOptions,
): Promise<{ data: Buffer; commit: string }> {
  const path = cfg.path ?? "registry.json";
  const maxBytes = opts.maxBytes ?? DEFAULT_SYNC_LIMITS.maxFileBytes;
  const name = opts.source !== undefined ? `git source ${opts.source}` : "git";
  const where = `${name} (${redactUrl(cfg.repository)})`;
  try {
    if (!/^(https?|file):\/\//.test(cfg.repository)) {
      throw new Error("only http(s):// and file:// repositories are supported");
    }
    const auth = cfg.auth;
    const timeoutMs = opts.timeoutMs ?? DEFAULT_SYNC_LIMITS.timeoutMs;
    const git = new GitSource({
      url: cfg.repository,
      ref: revisionOf(cfg),
      cacheDir: opts.cacheDir,
      timeoutMs,
      idleTimeoutMs: Math.min(IDLE_TIMEOUT_MS, timeoutMs),
      hints: { credentials: "git.auth", caFile: "SSL_CERT_FILE" },
      ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
      ...(auth !== undefined
        ? {
            auth: {
              username: auth.username,
              password:
                auth.passwordFile !== undefined
                  ? readSecretFile(resolvePath(opts.baseDir, auth.passwordFile))
                  : (auth.password ?? ""),
            },
          }
        : {}),
      ...(opts.guard !== undefined
        ? {
            pinAddresses: pinAddresses(opts.guard),
            maxTransferBytes: opts.maxTransferBytes ?? DEFAULT_SYNC_LIMITS.maxTotalBytes,
          }
        : {}),
    });
    const revision = await git.resolve();
    const data = git.readFile(revision, path, maxBytes);
    if (data === undefined) {
      throw new Error(`${path} does not exist at commit ${revision.commit.slice(0, 12)}`);
    }
    return { data, commit: revision.commit };
  } catch (err) {
    // The sync's deadline or cancellation, said as the sync says it, naming the source.
    const reason: unknown = opts.signal?.aborted === true ? opts.signal.reason : undefined;
    if (reason instanceof Error && reason.name !== "AbortError") {
      throw new McpfleetError("ERR_SYNC_FAILED", `${where}: ${reason.message}`, { cause: err });
    }
    if (err instanceof McpfleetError) throw err;
    throw new McpfleetError("ERR_SYNC_FAILED", `${where}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

// Where a source created through the admin API may read. An admin (perhaps scoped to one
// tenant's claims) must not point a source at the server's own files, at loopback services or
// at data another tenant's source reads: `adminSources` in the config file lists the file roots
// and hosts allowed, and a location another source reads is refused unless the caller manages
// that source too. Sources of the config file are the operator's and are not limited.
import { realpathSync } from "node:fs";
import { isIP } from "node:net";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { McpfleetError } from "../../errors.js";
import { isPrivateAddress } from "../../infra/private-address.js";
import type { AdminSourcesConfig, SourceConfig } from "../config/types.js";

export interface LocationPolicy {
  /** Real paths of the allowed directories. */
  fileRoots: string[];
  hosts: string[];
  allowPrivateIP: boolean;
}

/** The real path of `p`, or of its longest existing ancestor with the rest appended. */
function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = dirname(p);
    return parent === p ? p : resolve(realPath(parent), relative(parent, p));
  }
}

export function locationPolicy(
  cfg: AdminSourcesConfig | undefined,
  baseDir: string,
): LocationPolicy {
  return {
    fileRoots: (cfg?.fileRoots ?? []).map((r) => realPath(isAbsolute(r) ? r : resolve(baseDir, r))),
    hosts: (cfg?.hosts ?? []).map((h) => h.toLowerCase()),
    allowPrivateIP: cfg?.allowPrivateIP === true,
  };
}

function refuse(detail: string): never {
  throw new McpfleetError("ERR_SOURCE_LOCATION_REFUSED", detail);
}

/**
 * Why a URL a guarded source fetches (its own or a redirect's target) is refused, or undefined.
 * The addresses it resolves to are checked when connecting (guardedLookup).
 */
export function urlProblem(url: URL, policy: LocationPolicy): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return `${url.protocol} is not fetched`;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!hostAllowed(host, policy.hosts)) return `host ${host} is not in adminSources.hosts`;
  if (!policy.allowPrivateIP && isIP(host) !== 0 && isPrivateAddress(host)) {
    return `host ${host} is a private or loopback address`;
  }
  return undefined;
}

function hostAllowed(host: string, hosts: readonly string[]): boolean {
  const h = host.toLowerCase();
  return hosts.some((p) => (p.startsWith("*.") ? h.endsWith(p.slice(1)) : p === h));
}

/** The URL a synced source fetches from (url, api, git), or undefined for the other kinds. */
function remoteOf(cfg: SourceConfig): string | undefined {
  return cfg.url?.url ?? cfg.api?.endpoint ?? cfg.git?.repository;
}

/**
 * Refuses (ERR_SOURCE_LOCATION_REFUSED) a source the admin API may not create under `policy`.
 * Messages name the setting to change, never a resolved server path or what a file holds.
 */
export async function checkLocation(
  cfg: SourceConfig,
  policy: LocationPolicy,
  baseDir: string,
): Promise<void> {
  if (cfg.file !== undefined) {
    const path = realPath(
      isAbsolute(cfg.file.path) ? cfg.file.path : resolve(baseDir, cfg.file.path),
    );
    if (
      !policy.fileRoots.some(
        (root) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep),
      )
    ) {
      refuse("file.path is not under a directory adminSources.fileRoots allows");
    }
    return;
  }
  const remote = remoteOf(cfg);
  if (remote === undefined) return;
  let url: URL;
  try {
    url = new URL(remote);
  } catch {
    refuse("the source's URL is not one adminSources.hosts allows");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    refuse(`sources created through the API fetch over http or https only, not ${url.protocol}`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!hostAllowed(host, policy.hosts)) refuse(`host ${host} is not in adminSources.hosts`);
  if (policy.allowPrivateIP) return;
  // node:dns/promises loaded here, not with the module: a start that checks no source skips it.
  const addresses =
    isIP(host) !== 0
      ? [host]
      : await process
          .getBuiltinModule("node:dns/promises")
          .lookup(host, { all: true })
          .then(
            (list) => list.map((a) => a.address),
            // Unresolvable now: the sync will fail and say so; nothing private is reached.
            () => [],
          );
  if (addresses.some(isPrivateAddress)) {
    refuse(`host ${host} resolves to a private or loopback address (adminSources.allowPrivateIP)`);
  }
}

/**
 * What a source reads, normalized so that two spellings of one location compare equal: the
 * real path of a file, the URL of a url or api source, the repository, ref and path of a git
 * source. Undefined for managed and kubernetes sources.
 */
export function locationKey(cfg: SourceConfig, baseDir: string): string | undefined {
  if (cfg.file !== undefined) {
    return `file:${realPath(isAbsolute(cfg.file.path) ? cfg.file.path : resolve(baseDir, cfg.file.path))}`;
  }
  // Coarse on purpose: a query string, another branch or another file of the same repository
  // may hold the same data, so they count as the same location.
  const normal = (u: string): string => {
    try {
      const x = new URL(u);
      return `${x.protocol}//${x.host.toLowerCase()}${x.pathname.replace(/(\.git)?\/*$/, "")}`;
    } catch {
      return u;
    }
  };
  const remote = remoteOf(cfg);
  return remote === undefined ? undefined : `remote:${normal(remote)}`;
}

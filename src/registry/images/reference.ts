// Container image references as a registry lists them and as an MCPServer names them, and the
// one rule that says whether two name the same image (docs/enforce-servers.md, "Matching").
//
// A reference is `[host[:port]/]path[:tag][@algorithm:hex]`. Written the way a container runtime
// reads it: a first component with a dot or a port, or `localhost`, is the registry host, else
// the host is docker.io; docker.io (also written index.docker.io) puts one-component paths under
// `library/`; no tag and no digest means the tag `latest`.

export const DEFAULT_HOST = "docker.io";
export const DEFAULT_TAG = "latest";

export interface ImageReference {
  /** `host/path`, the host lower case, docker.io's defaults applied. */
  repository: string;
  /** The tag written, or `latest` when neither a tag nor a digest is. */
  tag: string | undefined;
  /** `algorithm:hex`, lower case, when pinned. */
  digest: string | undefined;
}

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$/;
const HOST = /^[A-Za-z0-9.-]+(?::[0-9]+)?$|^\[[0-9A-Fa-f:.]+\](?::[0-9]+)?$/;

function isHost(component: string): boolean {
  return component.includes(".") || component.includes(":") || component === "localhost";
}

/** Parses a reference; undefined when it is not one (a runtime could not pull it either). */
export function parseImageReference(text: string): ImageReference | undefined {
  const ref = text.trim();
  if (ref === "" || ref !== text) return undefined;
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at !== -1) {
    digest = rest.slice(at + 1).toLowerCase();
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return undefined;
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return undefined;
  }
  const parts = rest.split("/");
  let host = DEFAULT_HOST;
  if (parts.length > 1 && isHost(parts[0]!)) {
    host = parts.shift()!.toLowerCase();
    if (!HOST.test(host)) return undefined;
  }
  if (host === "index.docker.io") host = DEFAULT_HOST;
  if (parts.length === 0 || !parts.every((p) => PATH_COMPONENT.test(p))) return undefined;
  if (host === DEFAULT_HOST && parts.length === 1) parts.unshift("library");
  if (tag === undefined && digest === undefined) tag = DEFAULT_TAG;
  return { repository: `${host}/${parts.join("/")}`, tag, digest };
}

/** The reference in full form: `docker.io/library/redis:latest`, `host/path:tag@sha256:...`. */
export function canonicalImage(ref: ImageReference): string {
  return `${ref.repository}${ref.tag !== undefined ? `:${ref.tag}` : ""}${
    ref.digest !== undefined ? `@${ref.digest}` : ""
  }`;
}

/**
 * True when `wanted` (what a server runs) is the image `listed` names. The repositories must be
 * the same; then a digest on either side decides (the runtime pulls by digest and ignores the
 * tag, so a listed digest admits only that digest and a pinned server image needs a listed
 * digest), and without digests the tags must be equal.
 */
export function sameImage(wanted: ImageReference, listed: ImageReference): boolean {
  if (wanted.repository !== listed.repository) return false;
  if (wanted.digest !== undefined || listed.digest !== undefined) {
    return wanted.digest === listed.digest;
  }
  return wanted.tag === listed.tag;
}

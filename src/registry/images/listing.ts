// Which container images a registry lists: the OCI packages of its entries. Both catalog formats
// come through the registry's own parsers (formats/parse.ts), so a toolhive server's `image`
// arrives as the OCI package it is served as, and a source's filter drops what the registry
// would not serve.
import type { FilterConfig } from "../config/types.js";
import type { ServerEntry } from "../formats/model.js";
import { type Format, makeFilter, parseRegistryData } from "../formats/parse.js";
import { type ImageReference, parseImageReference, sameImage } from "./reference.js";
import { isObject } from "../../json.js";

/** One image a registry lists, and the entry that lists it. */
export interface ListedImage {
  image: string;
  entry: string;
}

type Obj = Record<string, unknown>;

/**
 * The image of an OCI package: its identifier, with the package's `version` as the tag when the
 * identifier has neither tag nor digest (server.json before identifiers carried the tag).
 */
function packageImage(pkg: Obj): string | undefined {
  const type = pkg.registryType ?? pkg.registry_type;
  if (type !== "oci" && type !== "docker") return undefined;
  const id = pkg.identifier;
  if (typeof id !== "string" || id === "") return undefined;
  const tail = id.slice(id.lastIndexOf("/") + 1);
  const pinned = tail.includes(":") || id.includes("@");
  return !pinned && typeof pkg.version === "string" && pkg.version !== ""
    ? `${id}:${pkg.version}`
    : id;
}

/** The images of entries the registry serves (deleted entries are not served). */
export function listedImages(entries: Iterable<ServerEntry>): ListedImage[] {
  const out: ListedImage[] = [];
  for (const e of entries) {
    if (e.status === "deleted") continue;
    const packages = e.server.packages;
    if (!Array.isArray(packages)) continue;
    for (const pkg of packages) {
      if (!isObject(pkg)) continue;
      const image = packageImage(pkg);
      if (image !== undefined) out.push({ image, entry: e.name });
    }
  }
  return out;
}

/** The images a catalog file lists after the source's filter; throws ERR_SYNC_FAILED as a sync would. */
export function catalogImages(text: string, format?: Format, filter?: FilterConfig): ListedImage[] {
  const keep = makeFilter(filter);
  return listedImages(parseRegistryData(text, format).entries.filter(keep));
}

/**
 * True when `entry` is the registry entry a `server-registry-name` label value names: the full
 * name (`io.github.example/fetch`), or its part after the slash (a toolhive catalog's short name).
 */
export function entryNamed(entry: string, wanted: string): boolean {
  return entry === wanted || entry.slice(entry.indexOf("/") + 1) === wanted;
}

/** The first listing of `image` (restricted to the entry `entryName` when given). */
export function findListed(
  image: ImageReference,
  listed: readonly ListedImage[],
  entryName?: string,
): ListedImage | undefined {
  for (const l of listed) {
    if (entryName !== undefined && !entryNamed(l.entry, entryName)) continue;
    const ref = parseImageReference(l.image);
    if (ref !== undefined && sameImage(image, ref)) return l;
  }
  return undefined;
}

// enforceServers: when an MCPRegistry of a namespace sets it, an MCPServer of that namespace runs
// only an image some registry of the namespace lists. One decision, taken offline by validate
// (from the catalogs in the files given) and at apply time by the controller (from catalogs it
// reads itself); both hand it what they could read of each source.
import { type ListedImage, findListed } from "./listing.js";
import { canonicalImage, parseImageReference } from "./reference.js";

/** Restricts the registries consulted to the MCPRegistry it names (the reference operator's label). */
export const REGISTRY_NAME_LABEL = "toolhive.stacklok.io/registry-name";
/** Restricts the match to the registry entry it names. */
export const SERVER_REGISTRY_NAME_LABEL = "toolhive.stacklok.io/server-registry-name";

/** What is known of one source's catalog. */
export interface SourceListing {
  source: string;
  /** Undefined when the catalog could not be read (`why` says why). */
  images: readonly ListedImage[] | undefined;
  why?: string;
  /** Said along with an answer drawn from it (a listing kept from an earlier read). */
  note?: string;
}

export interface RegistryListing {
  /** The MCPRegistry's name. */
  registry: string;
  enforce: boolean;
  sources: readonly SourceListing[];
}

export interface ServerImage {
  image: string;
  labels: Readonly<Record<string, string>>;
}

export type ImageDecision =
  | { kind: "unenforced" }
  | { kind: "listed"; registry: string; source: string; entry: string; notes: string[] }
  | {
      kind: "unlisted";
      /** Why, naming the image and the registries consulted. */
      message: string;
      /** Sources whose catalog could not be read: the answer might be different with them. */
      unknown: string[];
    };

function quoteList(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(", ");
}

/** Decides whether `server` may run in a namespace whose MCPRegistries are `registries`. */
export function decideImage(
  server: ServerImage,
  registries: readonly RegistryListing[],
): ImageDecision {
  if (!registries.some((r) => r.enforce)) return { kind: "unenforced" };
  const named = server.labels[REGISTRY_NAME_LABEL];
  const entryName = server.labels[SERVER_REGISTRY_NAME_LABEL];
  const consulted =
    named === undefined ? registries : registries.filter((r) => r.registry === named);
  const names = consulted.map((r) => r.registry);
  if (named !== undefined && consulted.length === 0) {
    return {
      kind: "unlisted",
      message: `image "${server.image}" cannot be checked: label ${REGISTRY_NAME_LABEL} names MCPRegistry "${named}", which is not in the namespace (registries: ${quoteList(registries.map((r) => r.registry))})`,
      unknown: [],
    };
  }
  const ref = parseImageReference(server.image);
  if (ref === undefined) {
    return {
      kind: "unlisted",
      message: `image "${server.image}" is not an image reference, so no registry lists it`,
      unknown: [],
    };
  }
  const unknown: string[] = [];
  for (const r of consulted) {
    for (const s of r.sources) {
      if (s.images === undefined) {
        unknown.push(`${r.registry}/${s.source}${s.why !== undefined ? ` (${s.why})` : ""}`);
        continue;
      }
      const hit = findListed(ref, s.images, entryName);
      if (hit !== undefined) {
        return {
          kind: "listed",
          registry: r.registry,
          source: s.source,
          entry: hit.entry,
          notes: s.note !== undefined ? [s.note] : [],
        };
      }
    }
  }
  const entry = entryName !== undefined ? ` under entry "${entryName}"` : "";
  const full = canonicalImage(ref);
  const shown = full === server.image ? `"${server.image}"` : `"${server.image}" (${full})`;
  return {
    kind: "unlisted",
    message: `image ${shown} is listed${entry} by no registry of the namespace (enforceServers; consulted: ${quoteList(names)})`,
    unknown,
  };
}

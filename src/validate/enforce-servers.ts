// enforceServers, offline: with an MCPRegistry that enforces in a namespace, each MCPServer of
// the namespace must run an image some registry of the namespace lists. Catalogs are read from
// the ConfigMaps among the files given (a legacy configMapRef, or a configYAML file source in a
// ConfigMap volume); an image none of them lists is an error when every source consulted was
// read, and otherwise left to the controller, which reads the rest at apply time (one warning
// per namespace says so). See docs/enforce-servers.md.
// The registry's catalog readers are loaded only when a registry of the input enforces: most
// runs have none, and their 11 modules were a part of every validate run's start-up.
import type { catalogImages as CatalogImages } from "../registry/images/listing.js";
import type {
  CatalogSource,
  catalogSources as CatalogSources,
} from "../registry/images/mcpregistry-sources.js";
import type { RegistryListing, SourceListing } from "../registry/images/policy.js";
import { isObject } from "../json.js";
import { addPositionedIssue, type IssueTarget } from "./resource.js";
import type { ResourceResult } from "./types.js";
import type { Position } from "../yaml/model.js";
import { detached, detachedValue } from "../yaml/values.js";

interface Placed {
  result: ResourceResult;
  /** Where an issue about it points: located only when there is one (most runs have none). */
  at: () => Position;
}

interface ServerNote extends Placed {
  namespace: string;
  image: string;
  labels: Record<string, string>;
}

interface RegistryNote extends Placed {
  namespace: string;
  name: string;
  enforce: boolean;
  /** Its spec: where its catalogs are is worked out only when a registry of its namespace enforces. */
  spec: Record<string, unknown>;
}

/** String values of a ConfigMap's data, by key. */
type ConfigMapData = Record<string, string>;

/** The notes of one file, for a worker thread to send back (results by index). */
export interface EnforceNotes {
  servers: (Omit<ServerNote, "result" | "at"> & { result: number; at: Position })[];
  registries: (Omit<RegistryNote, "result" | "at"> & { result: number; at: Position })[];
  configMaps: [string, ConfigMapData][];
}

// What is noted here is kept to the end of the run, past its file's text: strings are
// detached() from it.

function stringMap(v: unknown): Record<string, string> {
  if (!isObject(v)) return {};
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === "string") out[k] = detached(x);
  return out;
}

/** The registry's catalog readers, loaded by finish(). */
interface Readers {
  catalogImages: typeof CatalogImages;
  catalogSources: typeof CatalogSources;
}

const configMapKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Collects what the check needs as resources are read; checks once every file has been. */
export class EnforceServersLevel {
  private servers: ServerNote[] = [];
  private registries: RegistryNote[] = [];
  private readonly configMaps = new Map<string, ConfigMapData>();

  /** An MCPServer or MCPRegistry of ours, read in this thread. */
  noteOwn(kind: string, unit: IssueTarget, value: Record<string, unknown>): void {
    const { namespace, name } = unit.result;
    // The positions are located from these two, not from `unit`: a closure over the unit would
    // keep its parsed value, every MCPServer's whole document, until the run ends.
    const { doc, prefix } = unit;
    const spec = isObject(value.spec) ? value.spec : {};
    if (kind === "MCPServer" && typeof spec.image === "string" && spec.image !== "") {
      const metadata = isObject(value.metadata) ? value.metadata : {};
      this.servers.push({
        result: unit.result,
        at: () => doc.locate(`${prefix}/spec/image`),
        namespace,
        image: detached(spec.image),
        labels: stringMap(metadata.labels),
      });
    } else if (kind === "MCPRegistry" && name !== "") {
      // enforcesServers() of the registry's sources, without loading them for every run.
      const enforce = spec.enforceServers === true;
      this.registries.push({
        result: unit.result,
        at: () => doc.locate(`${prefix}/spec/enforceServers`),
        namespace,
        name,
        enforce,
        spec: detachedValue(spec) as Record<string, unknown>,
      });
    }
  }

  /** A core/v1 ConfigMap: a registry's catalog may be one of its keys. */
  noteConfigMap(namespace: string, value: Record<string, unknown>): void {
    const metadata = isObject(value.metadata) ? value.metadata : {};
    if (typeof metadata.name !== "string" || metadata.name === "") return;
    this.configMaps.set(configMapKey(namespace, metadata.name), stringMap(value.data));
  }

  /** The notes of a worker's file, its results referred to by index. */
  export(results: readonly ResourceResult[]): EnforceNotes {
    return {
      // Positions travel as values: a function does not cross to the calling thread.
      servers: this.servers.map((s) => ({ ...s, result: results.indexOf(s.result), at: s.at() })),
      registries: this.registries.map((r) => ({
        ...r,
        result: results.indexOf(r.result),
        at: r.at(),
      })),
      configMaps: [...this.configMaps],
    };
  }

  /** Takes a worker's notes into this run. */
  adopt(notes: EnforceNotes, results: readonly ResourceResult[]): void {
    for (const s of notes.servers) {
      const result = results[s.result];
      if (result !== undefined) this.servers.push({ ...s, result, at: () => s.at });
    }
    for (const r of notes.registries) {
      const result = results[r.result];
      if (result !== undefined) this.registries.push({ ...r, result, at: () => r.at });
    }
    for (const [k, v] of notes.configMaps) this.configMaps.set(k, v);
  }

  /** Runs the check and attaches its issues. */
  async finish(): Promise<void> {
    const enforcing = new Set(this.registries.filter((r) => r.enforce).map((r) => r.namespace));
    if (enforcing.size === 0) return;
    const [listing, sources, { decideImage }] = await Promise.all([
      import("../registry/images/listing.js"),
      import("../registry/images/mcpregistry-sources.js"),
      import("../registry/images/policy.js"),
    ]);
    const readers: Readers = {
      catalogImages: listing.catalogImages,
      catalogSources: sources.catalogSources,
    };
    for (const namespace of enforcing) {
      const registries = this.registries.filter((r) => r.namespace === namespace);
      const listings = registries.map((r) => this.listing(r, readers));
      const undecided: string[] = [];
      const unknown = new Set<string>();
      for (const s of this.servers) {
        if (s.namespace !== namespace) continue;
        const d = decideImage(s, listings);
        if (d.kind !== "unlisted") continue;
        if (d.unknown.length === 0) {
          addPositionedIssue(
            s,
            { path: "/spec/image", ...s.at(), message: d.message, level: "reference" },
            "error",
          );
        } else {
          undecided.push(s.image);
          for (const u of d.unknown) unknown.add(u);
        }
      }
      if (undecided.length === 0) continue;
      const first = registries.find((r) => r.enforce)!;
      const shown = undecided
        .slice(0, 3)
        .map((i) => `"${i}"`)
        .join(", ");
      const more = undecided.length > 3 ? ` and ${undecided.length - 3} more` : "";
      addPositionedIssue(
        first,
        {
          path: "/spec/enforceServers",
          ...first.at(),
          message: `enforceServers: ${undecided.length} MCPServer image(s) (${shown}${more}) are not in the catalogs readable offline; the controller checks them at apply time against sources that cannot be read here: ${[...unknown].join("; ")}`,
          level: "reference",
        },
        "warning",
      );
    }
    this.servers = [];
    this.registries = [];
  }

  private listing(r: RegistryNote, readers: Readers): RegistryListing {
    const sources = readers.catalogSources(r.spec);
    if (typeof sources === "string") {
      return {
        registry: r.name,
        enforce: r.enforce,
        sources: [{ source: "configYAML", images: undefined, why: sources }],
      };
    }
    return {
      registry: r.name,
      enforce: r.enforce,
      sources: sources.map((s) => this.sourceListing(r.namespace, s, readers)),
    };
  }

  private sourceListing(namespace: string, s: CatalogSource, readers: Readers): SourceListing {
    if (s.kind === "unreadable") return { source: s.name, images: undefined, why: s.why };
    if (s.kind === "fetch") {
      const what = s.config.git !== undefined ? "git" : s.config.url !== undefined ? "url" : "api";
      return { source: s.name, images: undefined, why: `a ${what} source is read at apply time` };
    }
    const data = this.configMaps.get(configMapKey(namespace, s.configMap));
    const text = data?.[s.key];
    if (text === undefined) {
      const what = data === undefined ? "is not among the files given" : `has no key "${s.key}"`;
      return { source: s.name, images: undefined, why: `ConfigMap "${s.configMap}" ${what}` };
    }
    try {
      return { source: s.name, images: readers.catalogImages(text, s.format, s.filter) };
    } catch (err) {
      return {
        source: s.name,
        images: undefined,
        why: `ConfigMap "${s.configMap}" key "${s.key}": ${(err as Error).message}`,
      };
    }
  }
}

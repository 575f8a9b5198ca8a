// The catalogs of a namespace's MCPRegistries, as the controller reads them for enforceServers:
// each source through the registry server's own readers (a ConfigMap key from the cluster, a
// url or git file, another registry's API pages), kept per source and read again once its
// syncPolicy interval has passed, as the registry server itself syncs. A read that fails keeps
// the last listing read (said in the answer); a source never read lists nothing known, so an
// image is refused until it has been read (docs/enforce-servers.md, "At apply time").
import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpfleetError } from "../errors.js";
import { parseDuration } from "../duration.js";
import { convertUpstream } from "../registry/formats/upstream.js";
import { makeFilter } from "../registry/formats/parse.js";
import { type ListedImage, catalogImages, listedImages } from "../registry/images/listing.js";
import {
  type CatalogSource,
  catalogSources,
  enforcesServers,
} from "../registry/images/mcpregistry-sources.js";
import type { RegistryListing, SourceListing } from "../registry/images/policy.js";
import { fetchApiPages, fetchUrl } from "../registry/sources/fetch.js";
import { fetchGitFile } from "../registry/sources/git.js";
import type { ServerEntry } from "../registry/formats/model.js";
import type { KubeClient } from "../infra/kube/client.js";

/** How often a source without a syncPolicy interval (a ConfigMap of the legacy form) is read. */
export const DEFAULT_READ_INTERVAL_MS = 5 * 60_000;

interface Kept {
  images: ListedImage[] | undefined;
  /** When `images` was read. */
  readAt: number | undefined;
  /** When the last read was tried. */
  triedAt: number;
  error: string | undefined;
  intervalMs: number;
}

export interface CatalogReaderOptions {
  now?: () => number;
  /** Time allowed to one read of a url or api source (ms). */
  timeoutMs?: number;
}

function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function intervalOf(s: CatalogSource): number {
  if (s.interval === undefined) return DEFAULT_READ_INTERVAL_MS;
  try {
    return parseDuration(s.interval);
  } catch {
    return DEFAULT_READ_INTERVAL_MS;
  }
}

export class RegistryCatalogs {
  private readonly client: Pick<KubeClient, "get">;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly kept = new Map<string, Kept>();
  private gitCache: string | undefined;

  /** `client` reads ConfigMap catalogs (the only sources read from the cluster). */
  constructor(client: Pick<KubeClient, "get">, opts: CatalogReaderOptions = {}) {
    this.client = client;
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** True when a source read before is due to be read again. */
  due(): boolean {
    const now = this.now();
    for (const k of this.kept.values()) if (now - k.triedAt >= k.intervalMs) return true;
    return false;
  }

  /** What is known of every source of the MCPRegistry `name` in `namespace`. */
  async listing(namespace: string, name: string, spec: unknown): Promise<RegistryListing> {
    const sources = catalogSources(spec);
    const enforce = enforcesServers(spec);
    if (typeof sources === "string") {
      return {
        registry: name,
        enforce,
        sources: [{ source: "configYAML", images: undefined, why: sources }],
      };
    }
    const listed = await Promise.all(sources.map((s) => this.source(namespace, name, s)));
    return { registry: name, enforce, sources: listed };
  }

  private async source(
    namespace: string,
    registry: string,
    s: CatalogSource,
  ): Promise<SourceListing> {
    if (s.kind === "unreadable") return { source: s.name, images: undefined, why: s.why };
    // A changed source definition is another source: it is read afresh.
    const key = `${namespace}/${registry}/${s.name}/${createHash("sha256").update(JSON.stringify(s)).digest("hex").slice(0, 16)}`;
    const now = this.now();
    let kept = this.kept.get(key);
    if (kept === undefined || now - kept.triedAt >= kept.intervalMs) {
      const next: Kept = kept ?? {
        images: undefined,
        readAt: undefined,
        triedAt: now,
        error: undefined,
        intervalMs: intervalOf(s),
      };
      next.triedAt = now;
      try {
        next.images = await this.read(namespace, s);
        next.readAt = now;
        next.error = undefined;
      } catch (err) {
        next.error = err instanceof Error ? err.message : String(err);
      }
      this.kept.set(key, next);
      kept = next;
    }
    if (kept.error === undefined) return { source: s.name, images: kept.images };
    const why = `${registry}/${s.name} cannot be read: ${kept.error}`;
    if (kept.images === undefined) return { source: s.name, images: undefined, why };
    return {
      source: s.name,
      images: kept.images,
      note: `${why}; its listing read at ${isoTime(kept.readAt!)} holds`,
    };
  }

  private async read(namespace: string, s: CatalogSource): Promise<ListedImage[]> {
    if (s.kind === "configMap") {
      const cm = await this.client.get({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: s.configMap, namespace },
      });
      if (cm === undefined) {
        throw new McpfleetError(
          "ERR_SYNC_FAILED",
          `ConfigMap ${namespace}/${s.configMap} not found`,
        );
      }
      const text = (cm as { data?: Record<string, string> }).data?.[s.key];
      if (typeof text !== "string") {
        throw new McpfleetError(
          "ERR_SYNC_FAILED",
          `ConfigMap ${namespace}/${s.configMap} has no key "${s.key}"`,
        );
      }
      return catalogImages(text, s.format, s.filter);
    }
    if (s.kind !== "fetch") return [];
    const cfg = s.config;
    if (cfg.api !== undefined) return this.readApi(cfg.api.endpoint, s);
    let bytes: Buffer;
    if (cfg.url !== undefined) {
      bytes = await fetchUrl(cfg.url.url, {
        timeout: cfg.url.timeout ?? `${Math.round(this.timeoutMs / 1000)}s`,
        ...(cfg.url.headers !== undefined ? { headers: cfg.url.headers } : {}),
      });
    } else {
      this.gitCache ??= mkdtempSync(join(tmpdir(), "mcpfleet-catalogs-"));
      bytes = (
        await fetchGitFile(cfg.git!, {
          cacheDir: this.gitCache,
          baseDir: this.gitCache,
          timeoutMs: this.timeoutMs,
        })
      ).data;
    }
    return catalogImages(bytes.toString("utf8"), s.format, s.filter);
  }

  /** Another registry's API, page by page, through the filter; only the images are kept. */
  private async readApi(endpoint: string, s: CatalogSource): Promise<ListedImage[]> {
    const keep = makeFilter(s.filter);
    const out: ListedImage[] = [];
    for await (const page of fetchApiPages(endpoint, { timeoutMs: this.timeoutMs })) {
      const entries: ServerEntry[] = [];
      for (const item of page.items) {
        const e = convertUpstream(item);
        if (typeof e !== "string" && keep(e)) entries.push(e);
      }
      out.push(...listedImages(entries));
    }
    return out;
  }
}

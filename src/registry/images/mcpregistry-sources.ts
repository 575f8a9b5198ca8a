// Where the catalog of each source of an MCPRegistry can be read from outside its registry
// server: a ConfigMap key (a legacy `configMapRef`, or a configYAML `file` source whose path lies
// in a ConfigMap volume of the resource), the network (git, url and api sources, read with the
// registry's own fetchers), or nowhere (managed and kubernetes sources live in the server's
// store; a file on any other volume lives in the pod).
// js-yaml, as validate reads files: the yaml package is loaded only for files that need it.
import { CORE_SCHEMA, load } from "js-yaml";
import type { FilterConfig, SourceConfig } from "../config/types.js";
import type { Format } from "../formats/parse.js";
import { isObject } from "../../json.js";

/** What every kind of catalog source carries: its name and how its data is read. */
interface SourceBase {
  name: string;
  format: Format | undefined;
  filter: FilterConfig | undefined;
  /** syncPolicy.interval as written. */
  interval: string | undefined;
}

export type CatalogSource =
  | (SourceBase & { kind: "configMap"; configMap: string; key: string })
  | (SourceBase & { kind: "fetch"; config: SourceConfig })
  | (SourceBase & { kind: "unreadable"; why: string });

type Obj = Record<string, unknown>;

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function base(s: Obj, i: number): SourceBase {
  const format = s.format === "toolhive" || s.format === "upstream" ? s.format : undefined;
  const interval = isObject(s.syncPolicy) ? str(s.syncPolicy.interval) : undefined;
  return {
    name: str(s.name) ?? `#${i}`,
    format,
    filter: isObject(s.filter) ? s.filter : undefined,
    interval,
  };
}

/** A git, url or api source as the registry's fetchers take it (credentials left out). */
function fetchConfig(s: Obj, b: SourceBase): SourceConfig | undefined {
  const cfg: SourceConfig = { name: b.name };
  if (isObject(s.git) && str(s.git.repository) !== undefined) {
    const { auth: _auth, ...git } = s.git;
    void _auth;
    cfg.git = git as unknown as SourceConfig["git"];
  } else if (isObject(s.url) && str(s.url.url) !== undefined) {
    cfg.url = s.url as unknown as SourceConfig["url"];
  } else if (isObject(s.api) && str(s.api.endpoint) !== undefined) {
    cfg.api = { endpoint: s.api.endpoint as string };
  } else return undefined;
  return cfg;
}

function unreadable(s: Obj): string {
  if ("managed" in s) return "a managed source's entries live in its registry server's store";
  if ("kubernetes" in s) return "a kubernetes source lists running workloads, not images";
  return "its data is not where it can be read";
}

/** The ConfigMap key mounted at `path` by the resource's volumes and volumeMounts. */
function configMapAt(path: string, spec: Obj): { configMap: string; key: string } | undefined {
  const mounts = Array.isArray(spec.volumeMounts) ? spec.volumeMounts.filter(isObject) : [];
  const volumes = Array.isArray(spec.volumes) ? spec.volumes.filter(isObject) : [];
  let best: { mount: Obj; dir: string } | undefined;
  for (const m of mounts) {
    const dir = str(m.mountPath)?.replace(/\/+$/, "");
    if (dir === undefined || !path.startsWith(`${dir}/`)) continue;
    if (best === undefined || dir.length > best.dir.length) best = { mount: m, dir };
  }
  if (best === undefined) return undefined;
  const volume = volumes.find((v) => v.name === best.mount.name);
  const cm = isObject(volume?.configMap) ? volume.configMap : undefined;
  const name = str(cm?.name);
  if (cm === undefined || name === undefined) return undefined;
  const subPath = str(best.mount.subPath);
  const rest = (subPath !== undefined ? `${subPath}/` : "") + path.slice(best.dir.length + 1);
  const items = Array.isArray(cm.items) ? cm.items.filter(isObject) : undefined;
  if (items === undefined) return rest.includes("/") ? undefined : { configMap: name, key: rest };
  const item = items.find((it) => it.path === rest);
  const key = str(item?.key);
  return key === undefined ? undefined : { configMap: name, key };
}

function fromConfigYaml(text: string, spec: Obj): CatalogSource[] | string {
  let doc: unknown;
  try {
    doc = load(text, { schema: CORE_SCHEMA });
  } catch {
    return "configYAML is not YAML";
  }
  if (!isObject(doc)) return "configYAML is not a mapping";
  const sources = Array.isArray(doc.sources) ? doc.sources : [];
  return sources.filter(isObject).map((s, i): CatalogSource => {
    const b = base(s, i);
    const path = isObject(s.file) ? str(s.file.path) : undefined;
    if (path !== undefined) {
      const at = path.startsWith("/") ? configMapAt(path, spec) : undefined;
      if (at !== undefined) return { ...b, kind: "configMap", ...at };
      return { ...b, kind: "unreadable", why: `file ${path} is not in a ConfigMap volume` };
    }
    const cfg = fetchConfig(s, b);
    return cfg !== undefined
      ? { ...b, kind: "fetch", config: cfg }
      : { ...b, kind: "unreadable", why: unreadable(s) };
  });
}

function fromLegacy(spec: Obj): CatalogSource[] {
  const sources = Array.isArray(spec.sources) ? spec.sources : [];
  return sources.filter(isObject).map((s, i): CatalogSource => {
    // The legacy form's default format is toolhive (the config file's is detected).
    const b = { ...base(s, i), format: base(s, i).format ?? "toolhive" };
    if (isObject(s.configMapRef)) {
      const name = str(s.configMapRef.name);
      const key = str(s.configMapRef.key);
      if (name !== undefined && key !== undefined) {
        return { ...b, kind: "configMap", configMap: name, key };
      }
    }
    const cfg = fetchConfig(s, b);
    return cfg !== undefined
      ? { ...b, kind: "fetch", config: cfg }
      : { ...b, kind: "unreadable", why: unreadable(s) };
  });
}

/** The catalog sources of an MCPRegistry's spec, or why they cannot be known. */
export function catalogSources(spec: unknown): CatalogSource[] | string {
  if (!isObject(spec)) return [];
  if (typeof spec.configYAML === "string") return fromConfigYaml(spec.configYAML, spec);
  return fromLegacy(spec);
}

/** True when the spec asks for enforcement. */
export function enforcesServers(spec: unknown): boolean {
  return isObject(spec) && spec.enforceServers === true;
}

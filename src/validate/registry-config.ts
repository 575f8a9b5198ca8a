// Registry-server configuration files (recognised by shape, or forced with --registry-config),
// the registry catalog files that sit next to them, and the rules between sources and
// registries that hold inside one configuration: a registry view names defined sources, and at
// most one source is managed. The same rules apply to an MCPRegistry's legacy fields.
import { isObject } from "../json.js";

export const REGISTRY_CONFIG_KIND = "RegistryServerConfig";
const CONFIG_KEYS = ["sources", "registries", "auth", "database"];

/** A document with no apiVersion and kind whose top level has registry-config keys. */
export function looksLikeRegistryConfig(value: unknown): boolean {
  if (!isObject(value) || "kind" in value || "apiVersion" in value) return false;
  return CONFIG_KEYS.some((k) => k in value);
}

/**
 * A registry catalog (the data a file, git or url source serves): the upstream wrapper
 * (`{$schema, version, meta, data: {servers}}`) or the toolhive format (`{version, servers}`).
 * Reported as skipped: it is data, not a resource.
 */
export function looksLikeRegistryData(value: unknown): boolean {
  if (!isObject(value) || "kind" in value || "apiVersion" in value) return false;
  if (isObject(value.data) && Array.isArray(value.data.servers)) return true;
  if (typeof value.$schema === "string" && /registry/i.test(value.$schema)) return true;
  return (
    typeof value.version === "string" &&
    (isObject(value.servers) || isObject(value.remote_servers) || Array.isArray(value.servers))
  );
}

export interface ConfigIssue {
  path: string;
  message: string;
  target: "value" | "key";
}

/**
 * Views naming undefined sources, and managed sources after the first, in a configuration
 * object whose `sources` and `registries` sit directly under it.
 */
export function sourceRuleIssues(config: unknown): ConfigIssue[] {
  if (!isObject(config)) return [];
  const issues: ConfigIssue[] = [];
  const sources = Array.isArray(config.sources) ? config.sources : [];
  const defined = new Set<string>();
  let firstManaged: string | undefined;
  sources.forEach((s, i) => {
    if (!isObject(s)) return;
    if (typeof s.name === "string") defined.add(s.name);
    if (!("managed" in s) || s.managed === null || s.managed === undefined) return;
    const name = typeof s.name === "string" ? s.name : `#${i}`;
    if (firstManaged === undefined) firstManaged = name;
    else {
      issues.push({
        path: `/sources/${i}/managed`,
        message: `at most one source may be managed: "${name}" and "${firstManaged}" both are`,
        target: "key",
      });
    }
  });
  const registries = Array.isArray(config.registries) ? config.registries : [];
  registries.forEach((r, i) => {
    if (!isObject(r) || !Array.isArray(r.sources)) return;
    const view = typeof r.name === "string" ? r.name : `#${i}`;
    r.sources.forEach((n, j) => {
      if (typeof n !== "string" || defined.has(n)) return;
      issues.push({
        path: `/registries/${i}/sources/${j}`,
        message: `registry "${view}" names source "${n}", which is not defined in sources`,
        target: "value",
      });
    });
  });
  return issues;
}

/**
 * The CEL rules of the schemas check the same two rules on the whole list; when the reference
 * level has found the exact items, the coarse CEL issue adds nothing and is dropped.
 */
export function coveredCelIssue(
  issue: { path: string; level: string; message: string },
  base: string,
  found: readonly ConfigIssue[],
): boolean {
  if (issue.level !== "cel") return false;
  if (issue.path === `${base}/sources` && /managed/.test(issue.message)) {
    return found.some((f) => f.path.endsWith("/managed"));
  }
  if (issue.path === `${base}/registries` && /source/.test(issue.message)) {
    return found.some((f) => f.path.startsWith("/registries/"));
  }
  return false;
}
